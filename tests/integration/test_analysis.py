"""End-to-end tests of the bottleneck analysis on real runs (issue 13; docs/analysis.md):

- a real CPU contention: a workload and a busy-loop burner both pinned to CPU 0 with taskset
  (works on any machine with one CPU or more). The workload's `step` waits for the CPU about
  half of the time: its verdict is `cpu-starved`, from its own run-queue wait
  (process_cpu_wait_seconds_total, /proc/PID/task/TID/schedstat), never `mixed` or `idle`, and
  the advice is a quieter machine, since another process took the CPU;
- `true` run 50 times: every run is far shorter than a sampling interval, and the verdict says
  the run is too short to measure, never to look for sources that could not start;
- one order of the findings: a short `load` then a long `evaluate`, both sleeping (findings
  without a saving, in which the old order put the first stage's first): the JSON's first
  finding, the terminal summary's first and the Markdown report's first "top finding" all name
  the bottleneck, `evaluate`.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

# Fixed work per step (not a fixed time), so that losing the CPU makes the step longer.
WORKLOAD = """
from mlbench_marker import stage
for _ in range(5):
    with stage("step"):
        x = 0
        for i in range(1_500_000):
            x += i * i
"""

BURNER = "while True: pass"

SLEEPER = """
import time
from mlbench_marker import stage
with stage("load"):
    time.sleep(0.15)
with stage("evaluate"):
    time.sleep(1.0)
"""


class AnalysisTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-analysis-test-")
        self.store = os.path.join(self.tmp.name, "store")
        self.out = os.path.join(self.tmp.name, "result.json")

    def tearDown(self):
        self.tmp.cleanup()

    def mlbench(self, *args):
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        p = subprocess.run([MLBENCH, "run", "--store", self.store, "-o", self.out, *args],
                           capture_output=True, text=True, env=e, timeout=180)
        with open(self.out) as f:
            return p, json.load(f)

    @staticmethod
    def verdict(r, stage):
        for v in r["analysis"]["verdicts"]:
            if v["stage"] == stage:
                return v
        raise AssertionError(f"no verdict for {stage}: {r['analysis']['verdicts']}")

    def test_contention_is_cpu_starved(self):
        taskset = shutil.which("taskset")
        if not taskset:
            self.skipTest("taskset (util-linux) is not installed: cannot pin two processes")
        burner = subprocess.Popen([taskset, "-c", "0", sys.executable, "-c", BURNER])
        try:
            time.sleep(0.2)  # the burner runs before the workload starts
            p, r = self.mlbench("-r", "2", "--interval", "50ms", "--", taskset, "-c", "0",
                                sys.executable, "-c", WORKLOAD)
        finally:
            burner.kill()
            burner.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        names = {s["metric"] for s in r["runs"][0]["samples"]["series"]}
        v = self.verdict(r, "step")
        # the rules that read lost CPU time as the stage's own must not fire
        self.assertNotIn(v["rule"], ("mixed", "idle"), v)
        self.assertEqual(v["rule"], "cpu-starved", v)
        if "process_cpu_wait_seconds_total" in names:
            self.assertIn("their own run-queue wait", v["evidence"])
        else:  # a kernel without CONFIG_SCHED_INFO: PSI, which the evidence names
            self.assertIn("pressure stall information", v["evidence"])
        finding = [f for f in r["analysis"]["findings"]
                   if f["stage"] == "step" and f["rule"] == "cpu-starved"]
        self.assertEqual(len(finding), 1, r["analysis"]["findings"])
        self.assertIn("quieter machine", finding[0]["recommendation"])
        self.assertIn("cpu-starved", p.stdout)

    def test_too_short_says_so(self):
        p, r = self.mlbench("-r", "50", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        v = self.verdict(r, "total")
        self.assertEqual(v["rule"], "unmeasured", v)
        self.assertRegex(v["evidence"], r"too short|no sample fell in the stage")
        for f in r["analysis"]["findings"]:
            self.assertNotIn("could not start", f["recommendation"])
            self.assertNotIn("could not start", f["evidence"])
        self.assertNotIn("could not start", p.stdout)

    def test_one_order_of_findings(self):
        p, r = self.mlbench("-r", "1", "--interval", "20ms", "--", sys.executable, "-c", SLEEPER)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = r["analysis"]
        self.assertEqual(a["bottleneck"], "evaluate")
        findings = [f for f in a["findings"] if f["stage"] in ("load", "evaluate")]
        self.assertEqual(len(findings), 2, a["findings"])
        self.assertEqual(a["findings"][0]["stage"], "evaluate", a["findings"])
        first = re.search(r"^  1\. ([^,\s]+)[, ]", p.stdout, re.M)
        self.assertIsNotNone(first, p.stdout)
        self.assertEqual(first.group(1), "evaluate")
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        md = subprocess.run([MLBENCH, "report", "--store", self.store, "-f", "md", self.out],
                            capture_output=True, text=True, env=e, timeout=60)
        self.assertEqual(md.returncode, 0, md.stderr)
        # the summary's top findings, most important first (outline.c section_summary)
        top = re.search(r"(?:Top findings, most important first|The finding):\s*\n+"
                        r"\s*[-*] (\S+) \(", md.stdout)
        self.assertIsNotNone(top, md.stdout[:3000])
        self.assertEqual(top.group(1), "evaluate")


if __name__ == "__main__":
    unittest.main()

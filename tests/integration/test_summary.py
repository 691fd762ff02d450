"""End-to-end test of the one terminal summary: what `mlbench run` prints after its runs and
what `mlbench show` prints of the same result come from one renderer (src/export/text.c) and
must be the same text. No line differs legitimately: run prints the result's path, and show is
given that same path, so even the last line ("result: PATH") matches.

Cases: a staged workload (stage_prog seq: nested stages, counters, metadata), a failed one, one
with no markers, and long UTF-8 stage names (accented and East Asian wide characters) sent
through the Python marker client, which the tables cut at a character boundary with an
ellipsis while the result file keeps them whole.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

LONG_ACCENTED = "préparation_des_données_très_longue_étape_numéro_un_avec_accents_ééé"
LONG_WIDE = "数据加载阶段非常长的名字用于测试宽字符截断是否正确处理"
UTF8_WORKLOAD = f"""
import time
from mlbench_marker import counter, stage
with stage({LONG_ACCENTED!r}):
    time.sleep(0.02)
    with stage({LONG_WIDE!r}):
        time.sleep(0.02)
with stage("short"):
    counter("images", 8)
"""


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-summary-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args):
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        p = subprocess.run([MLBENCH, args[0], "--store", self.store, *args[1:]],
                           capture_output=True, env=e, timeout=120)
        return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")

    def run_and_show(self, *command, runs=3, ok=True, verbose=False):
        """mlbench run COMMAND, then mlbench show of its result (both with -v when verbose);
        returns both outputs."""
        v = ["-v"] if verbose else []
        rc, run_out, err = self.cli("run", "-r", str(runs), *v, "--", *command)
        self.assertEqual(rc, 0 if ok else 1, err)
        paths = [line[len("result: "):] for line in run_out.splitlines()
                 if line.startswith("result: ")]
        self.assertEqual(len(paths), 1, run_out)
        rc, show_out, err = self.cli("show", *v, paths[0])
        self.assertEqual(rc, 0, err)
        with open(paths[0]) as f:
            return run_out, show_out, json.load(f)

    def assert_same(self, run_out, show_out):
        self.assertEqual(run_out.splitlines(), show_out.splitlines())
        self.assertEqual(run_out, show_out)
        self.assertFalse([c for c in run_out if ord(c) < 32 and c != "\n" or 127 <= ord(c) < 160])

    def test_staged(self):
        run_out, show_out, doc = self.run_and_show(STAGE_PROG, "seq", verbose=True)
        self.assert_same(run_out, show_out)
        for text in ("mlbench run: ", doc["id"], "3 runs measured, 3 ok", "75% CI of median",
                     "  step", "counters images", "metadata batch_size=32 model=\"test model\"",
                     "stage time is wall time"):
            self.assertIn(text, run_out)
        self.assertRegex(run_out, r"(?m)^total\s+\d+(\.\d+)? (ms|s) ")
        if doc["analysis"] is not None:  # resources were sampled: the table and the verdicts
            self.assertIn("resources (mean)", run_out)
            self.assertIn("verdicts", run_out)

    def test_brief(self):
        """Issue 35: by default the answer first, the stage table, the warnings, in a screenful
        (the full detail, 40 lines and more, behind -v)."""
        run_out, show_out, doc = self.run_and_show(STAGE_PROG, "seq")
        self.assert_same(run_out, show_out)
        lines = run_out.splitlines()
        # three stages and two counters: the answer and the table in 22 lines, then one line per
        # warning code (a busy machine adds other_load, cpu_contention, io_contention)
        codes = {w["code"] for w in doc["warnings"]}
        self.assertLessEqual(len(lines), 22 + 4 + len(codes), run_out)
        warnings = [line for line in lines if line.startswith("  ! ")]
        self.assertEqual(len(warnings), len(codes), run_out)
        for text in ("resources (mean)", "verdicts (", "stage time is wall time", "metadata ",
                     "max RSS", "no NVIDIA driver"):
            self.assertNotIn(text, run_out)
        for text in ("75% CI of median", "  step", "counters images", "mlbench show -v"):
            self.assertIn(text, run_out)
        if doc["analysis"] is not None:
            answer = [i for i, line in enumerate(lines) if line.startswith("answer: ")]
            table = [i for i, line in enumerate(lines) if line.startswith("stage ")]
            self.assertEqual(len(answer), 1, run_out)
            self.assertLess(answer[0], table[0], run_out)  # the answer first
            self.assertIn(doc["analysis"]["bottleneck"], lines[answer[0]])
            # a piece of advice once: train and step say the same, one line names both
            recs = [line for line in lines if line.strip().startswith("-> ")]
            self.assertEqual(len(recs), len(set(recs)), run_out)
        self.assertEqual(lines[-1], "result: " + os.path.join(self.store, "runs",
                                                              doc["id"] + ".json"))

    def test_failed(self):
        run_out, show_out, doc = self.run_and_show(STAGE_PROG, "fail", runs=2, ok=False)
        self.assert_same(run_out, show_out)
        self.assertIn("2 runs measured, 0 ok", run_out)
        self.assertIn("run 1: failed after", run_out)
        self.assertIn("no run succeeded: the figures below describe failed runs", run_out)

    def test_no_markers(self):
        run_out, show_out, doc = self.run_and_show("sleep", "0.05", runs=2)
        self.assert_same(run_out, show_out)
        self.assertNotIn("stage time is wall time", run_out)
        self.assertRegex(run_out, r"(?m)^total\s+\d+(\.\d+)? (ms|s) ")

    def test_long_utf8_names(self):
        workload = os.path.join(self.tmp.name, "utf8_stages.py")
        with open(workload, "w", encoding="utf-8") as f:
            f.write(UTF8_WORKLOAD)
        run_out, show_out, doc = self.run_and_show(sys.executable, workload, runs=2)
        self.assert_same(run_out, show_out)
        names = [s["name"] for s in doc["summary"]["stages"]]
        self.assertEqual(names, [LONG_ACCENTED, LONG_WIDE, "short"])  # the file keeps them whole
        rows = [line for line in run_out.splitlines()
                if line.startswith(("préparation", "  数据"))]
        self.assertGreaterEqual(len(rows), 2, run_out)
        for row in rows:
            name = row.split("\u2026")[0]
            self.assertIn("\u2026", row, "cut with an ellipsis")
            self.assertTrue(LONG_ACCENTED.startswith(name) or
                            LONG_WIDE.startswith(name.strip()), row)
        # the figures start in the same terminal column on every row of the stage table
        table = run_out.split("\nstage ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
        ends = {cols(line[:re.search(r"\d (ns|us|ms|s|min) ", line).end() - 1])
                for line in table}
        self.assertEqual(len(ends), 1, table)


def cols(s):
    """Terminal columns of s (East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


if __name__ == "__main__":
    unittest.main()

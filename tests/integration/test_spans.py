"""End-to-end tests of per-stage span statistics, the stage tree order and counter rates over
their stage (issue 13): `mlbench run` on tests/integration/stage_prog.py's `pipeline` mode, in
which two forked workers (like a DataLoader's) send `decode` while the main thread is in
train > data_wait, then `step` counts 32 images; then the terminal summary, `mlbench show`, the
Markdown and HTML reports, and result files edited to be older or malformed.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree)."""
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))

RUNS = 2
STEPS = 25  # stage_prog.PIPELINE_STEPS
MS = 1_000_000


class Figures(html.parser.HTMLParser):
    """The latency figures of an HTML page: per figure its caption, bars and percentile labels."""

    def __init__(self):
        super().__init__()
        self.figures, self.open, self.where = [], None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and a.get("class") == "latency":
            self.open = {"caption": "", "rects": 0, "pct": [], "svg": False}
            self.figures.append(self.open)
        elif self.open is not None:
            self.open["rects"] += tag == "rect"
            self.open["svg"] |= tag == "svg"
        self.where.append((tag, a.get("class")))

    def handle_endtag(self, tag):
        if tag == "figure":
            self.open = None
        if self.where:
            self.where.pop()

    def handle_data(self, data):
        if self.open is None or not self.where:
            return
        if self.where[-1][0] == "figcaption":
            self.open["caption"] += data
        elif self.where[-1][0] == "text" and any(c == "pct" for _, c in self.where):
            self.open["pct"].append(data)


class SpansTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlbench-spans-")
        cls.store = os.path.join(cls.tmp.name, "store")
        cls.path = os.path.join(cls.tmp.name, "pipeline.json")
        env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
        p = subprocess.run([MLBENCH, "run", "--store", cls.store, "-r", str(RUNS), "-o", cls.path,
                            "--", sys.executable, os.path.join(HERE, "stage_prog.py"), "pipeline"],
                           capture_output=True, text=True, env=env, timeout=180)
        if p.returncode != 0:
            raise AssertionError(f"mlbench run failed ({p.returncode}): {p.stderr}")
        cls.out = p.stdout
        with open(cls.path) as f:
            cls.result = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def stage(self, name):
        for s in self.result["summary"]["stages"]:
            if s["name"] == name:
                return s
        raise AssertionError(f"no stage {name!r}")

    def mlbench(self, *args):
        p = subprocess.run([MLBENCH, *args], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def test_stage_order(self):
        """Point 6: step stays under train; the workers' decode comes after train's subtree."""
        stages = [(s["name"], s["depth"]) for s in self.result["summary"]["stages"]]
        self.assertEqual(stages, [("train", 0), ("data_wait", 1), ("step", 1), ("decode", 0)])
        for run in self.result["runs"]:
            self.assertEqual([s["name"] for s in run["stages"]],
                             ["train", "data_wait", "step", "decode"])
        rows = [line.split()[0] for line in self.out.splitlines()
                if re.match(r"^ *(train|data_wait|step|decode) +\d", line)]
        self.assertEqual(rows[:4], ["train", "data_wait", "step", "decode"])

    def test_span_statistics(self):
        """Count, ordered nearest-rank percentiles and a histogram holding every span."""
        step = self.stage("step")["spans"]
        self.assertEqual(step["n"], RUNS * STEPS)
        figures = [step[k] for k in ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns")]
        self.assertEqual(figures, sorted(figures))
        self.assertGreaterEqual(step["p50_ns"], 5 * MS)  # each step sleeps 5 ms
        h = step["histogram"]
        self.assertEqual(h["bins_per_octave"], 4)
        self.assertEqual(sum(h["counts"]), step["n"])
        self.assertTrue(h["counts"][0] > 0 and h["counts"][-1] > 0, "only the non-empty range")
        lo, hi = 2 ** (h["first_bin"] / 4), 2 ** ((h["first_bin"] + len(h["counts"])) / 4)
        self.assertTrue(lo <= step["p50_ns"] < hi and step["max_ns"] < hi)
        self.assertEqual(self.stage("decode")["spans"]["n"], RUNS * STEPS * 2)
        self.assertEqual(self.stage("train")["spans"]["n"], RUNS)
        # the terminal table: stages with >= 20 spans, not train (2 spans)
        table = self.out[self.out.index("latency per span"):].split("\n\n")[0]
        self.assertRegex(table, rf"\n  step +{RUNS * STEPS} +[\d.]+ ms")
        self.assertRegex(table, rf"\ndecode +{RUNS * STEPS * 2} ")
        self.assertNotRegex(table, r"\ntrain ")

    def test_counter_rate_over_its_stage(self):
        """Point 7: images were sent in step; their rate over step beside the run's."""
        c = next(c for c in self.result["summary"]["counters"] if c["name"] == "images")
        self.assertEqual(c["stage"], "step")
        self.assertFalse(c["stage_mixed"])
        step_s = self.stage("step")["active_ns"]["median"] / 1e9
        self.assertAlmostEqual(c["stage_rate_per_s_median"], 32 * STEPS / step_s,
                               delta=0.35 * 32 * STEPS / step_s)  # medians of per-run ratios
        self.assertGreater(c["stage_rate_per_s_median"], c["rate_per_s_median"])
        self.assertRegex(self.out, r"images .*/s in step, [\d.]+/s over the run")

    def test_reports(self):
        """Markdown: the latency table; HTML: one histogram per repeating stage, percentiles
        labelled, stages indented under their parent."""
        rc, md, err = self.mlbench("report", "--store", self.store, self.path, "--format", "md")
        self.assertEqual(rc, 0, err)
        self.assertIn("Latency per span", md)
        self.assertRegex(md, r"\| (&nbsp;)+step \| 50 \|")
        self.assertRegex(md, r"images .*/s in step, .*/s over the run")
        rc, page, err = self.mlbench("report", "--store", self.store, self.path, "--format",
                                     "html")
        self.assertEqual(rc, 0, err)
        parser = Figures()
        parser.feed(page)
        captions = [f["caption"] for f in parser.figures]
        self.assertEqual(len(captions), 3, captions)  # data_wait, step, decode: not train
        self.assertTrue(any(c.startswith("Latency of step: 50 spans") for c in captions))
        for f in parser.figures:
            self.assertTrue(f["svg"] and f["rects"] > 0, f)
            # every percentile labelled once; those of the same value (p99 and p99.9 of 50
            # spans are both the slowest) share one label, not two printed over each other
            names = [n for p in f["pct"] for n in p.rsplit(" ", 2)[0].split(", ")]
            self.assertEqual(names, ["p50", "p90", "p99", "p99.9"], f["pct"])
            values = [p.rsplit(" ", 2)[1:] for p in f["pct"]]
            self.assertEqual(len(values), len(set(map(tuple, values))), f["pct"])
        step = [f for f in parser.figures if f["caption"].startswith("Latency of step")][0]
        self.assertIn("p99, p99.9", " ".join(step["pct"]))  # 50 spans: both the maximum

    def edited(self, change):
        """The result file after change(doc), written beside it; its path."""
        with open(self.path) as f:
            doc = json.load(f)
        change(doc)
        path = os.path.join(self.tmp.name, "edited.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def test_older_and_malformed_files(self):
        def older(doc):
            for s in doc["summary"]["stages"]:
                del s["spans"]
        rc, out, err = self.mlbench("show", self.edited(older))
        self.assertEqual(rc, 0, err)
        self.assertNotIn("latency per span", out)

        def bad(doc):
            doc["summary"]["stages"][2]["spans"]["histogram"]["counts"] = "many"
        rc, out, err = self.mlbench("show", self.edited(bad))
        self.assertEqual(rc, 2)
        self.assertIn("summary.stages[2].spans is malformed", err)
        self.assertEqual(out, "")


if __name__ == "__main__":
    unittest.main()

"""End-to-end tests of `mlbench report` of a sweep document file (<store>/sweeps/ID.json, schema
"mlbench.sweep/1"): the hand-written fixtures of data/sweep/ placed in a store beside two real
results made by `mlbench run`; the Markdown report opens with the winner and the sweep table and
compares the points that have a result; CSV defaults to the sweep table with a column per
parameter; the HTML page parses and holds the sweep's charts (and, when Chromium is installed,
renders to a screenshot); points whose result is missing or outside the store are left out with a
warning; a sweep with other references and hostile documents are handled.

Environment (set by ctest): MLBENCH, STAGE_PROG, MLBENCH_SOURCE. SWEEP_SHOTS=DIR keeps the
screenshots there to look at."""
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from test_report import Page, chromium

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sweep")


class SweepReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlbench-sweep-report-")
        cls.store = os.path.join(cls.tmp.name, "store")
        os.makedirs(os.path.join(cls.store, "sweeps"))
        ids = []
        for label in ("p0", "p2"):
            p = subprocess.run([MLBENCH, "run", "-q", "--store", cls.store, "-r", "2", "-l", label,
                                "--", STAGE_PROG, "seq"], capture_output=True, text=True,
                               timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"mlbench run failed: {p.stderr}")
            runs = sorted(os.listdir(os.path.join(cls.store, "runs")))
            ids.append([r for r in runs if r[:-5] not in ids][-1][:-5])
        cls.ids = ids
        cls.sweeps = {}
        for name in ("matrix2x2", "commands", "findmax", "priced", "constraints", "hostile"):
            with open(os.path.join(DATA, name + ".json")) as f:
                doc = json.load(f)
            if name == "matrix2x2":  # points 0 and 2 have results; 1 missing, 3 outside
                points = doc["points"]
                points[0]["result_path"] = f"runs/{ids[0]}.json"
                points[2]["result_path"] = f"runs/{ids[1]}.json"
                points[3]["result_path"] = "../../etc/passwd"
            path = os.path.join(cls.store, "sweeps", f"{name}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            cls.sweeps[name] = path

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, name, *args, expect=0):
        p = subprocess.run([MLBENCH, "report", *args, self.sweeps[name]], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, expect, p.stderr)
        return p

    def test_markdown(self):
        p = self.report("matrix2x2", "-f", "md")
        md = p.stdout
        self.assertTrue(md.startswith("# mlbench sweep: 20261202T050102-aa0001\n"), md[:200])
        self.assertIn("Winner: batch=64,lr=0.1: the lowest total median (1.20 s).", md)
        self.assertIn("| ★ | batch=64,lr=0.1 | ok | 1.200 s |", md)
        # the answer, then the sweep, then the comparison of the points with a result
        self.assertLess(md.index("## Sweep"), md.index("## Comparison"))
        self.assertIn("## Baseline: p0", md)
        self.assertIn("## Candidate: p2", md)
        self.assertIn("leaves the store", p.stderr)
        self.assertEqual(p.stderr.count("left out"), 2, p.stderr)  # and point 1's missing file

    def test_csv_default_is_the_sweep_table(self):
        rows = list(csv.DictReader(io.StringIO(self.report("matrix2x2", "-f", "csv").stdout)))
        self.assertEqual(len(rows), 4)
        self.assertEqual([r["batch"] for r in rows], ["32", "32", "64", "64"])
        self.assertEqual([r["lr"] for r in rows], ["0.1", "0.01", "0.1", "0.01"])
        self.assertEqual([r["winner"] for r in rows], ["false", "false", "true", "false"])
        self.assertEqual(float(rows[2]["total_median_ns"]), 1.2e9)
        self.assertEqual(rows[0]["train_images_per_s"], "2100")
        stages = self.report("matrix2x2", "-f", "csv", "--table", "stages").stdout
        self.assertTrue(stages.startswith("result,label,scope,stage"))
        rows = list(csv.DictReader(io.StringIO(self.report("commands", "-f", "csv").stdout)))
        self.assertEqual([r["status"] for r in rows], ["ok", "failed", "out_of_memory"])

    def test_html_and_screenshots(self):
        shots = os.environ.get("SWEEP_SHOTS")
        browser = chromium()
        for name in ("matrix2x2", "findmax", "priced", "commands", "constraints"):
            out = os.path.join(self.tmp.name, f"{name}.html")
            self.report(name, "-o", out)
            with open(out) as f:
                text = f.read()
            page = Page()
            page.feed(text)
            self.assertEqual(page.errors, [], name)
            self.assertIn("<svg", text) if name != "commands" else None
            if name == "findmax":
                self.assertIn('class="findmax-memory"', text)
            if name == "priced":
                self.assertIn("Pareto front: total median against cost per run", text)
            if not browser:
                continue
            png = os.path.join(shots or self.tmp.name, f"sweep-{name}.png")
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--window-size=1000,4000", f"--screenshot={png}", "file://" + out],
                           capture_output=True, timeout=120)
            self.assertTrue(os.path.getsize(png) > 1000, name)

    def test_hostile(self):
        p = self.report("hostile", "-f", "md")
        self.assertNotIn("\x1b", p.stdout)
        self.assertIn("# mlbench sweep:", p.stdout)
        self.report("hostile", "-f", "html")
        self.report("hostile", "-f", "csv")

    def test_sweep_is_reported_alone(self):
        p = subprocess.run([MLBENCH, "report", self.sweeps["matrix2x2"], "latest"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("is a sweep: report it alone", p.stderr)


if __name__ == "__main__":
    unittest.main()

"""End-to-end test of cost per result (issue 14): `mlbench run --price` and `--price-file`
give every result a `cost` block (docs/result-schema.md#cost), the terminal summary shows it,
bad prices stop before anything runs (exit 2, the value named, no result written), and
`mlbench compare` of two priced results shows the time ratio beside the cost ratio.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

# Counts images (a count counter) and reports a time to target: per-unit and to-target costs.
WORKLOAD = """
import time
from mlbench_marker import counter, stage
with stage("train"):
    for _ in range(4):
        time.sleep(0.01)
        counter("train_images", 250)
counter("time_to_target_s", 0.5)
"""


class CostTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-cost-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args):
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        store = [] if args[0] == "env" else ["--store", self.store]
        p = subprocess.run([MLBENCH, args[0], *store, *args[1:]],
                           capture_output=True, env=e, timeout=120)
        return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")

    def run_priced(self, *price, command=("sleep", "0.1"), runs=3):
        out = os.path.join(self.tmp.name, f"r{len(os.listdir(self.tmp.name))}.json")
        rc, text, err = self.cli("run", "-r", str(runs), "-o", out, *price, "--", *command)
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            return json.load(f), text, err, out

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def stored_results(self):
        runs = os.path.join(self.store, "runs")
        return [n for n in os.listdir(runs) if n.endswith(".json")] if os.path.isdir(runs) else []

    def test_price(self):
        doc, text, _, _ = self.run_priced("--price", "3.6")
        cost = doc["cost"]
        self.assertEqual(cost["price_per_hour"], 3.6)
        self.assertEqual(cost["currency"], "USD")
        self.assertEqual(cost["source"], "--price")
        self.assertIsNone(cost["price_file"])
        wall = doc["summary"]["wall_ns"]
        # The cost of a run is its wall median at 3.6 an hour (0.001 a second) ...
        self.assertAlmostEqual(cost["run"]["median"], wall["median"] * 1e-9 * 0.001, delta=1e-15)
        self.assertAlmostEqual(cost["run"]["ci_low"], wall["ci_low"] * 1e-9 * 0.001, delta=1e-15)
        self.assertAlmostEqual(cost["run"]["ci_high"], wall["ci_high"] * 1e-9 * 0.001, delta=1e-15)
        # ... so about 0.0001 USD for a 0.1 s sleep, off by what the run took beyond 0.1 s.
        extra_s = abs(wall["median"] * 1e-9 - 0.1)
        self.assertAlmostEqual(cost["run"]["median"], 0.0001, delta=extra_s * 0.001 + 1e-12)
        self.assertEqual(cost["stages"], [])
        self.assertIn("cost   USD ", text)
        self.assertIn("a run", text)

    def test_price_currency_and_units(self):
        doc, text, _, _ = self.run_priced("--price", "2.1 eur",
                                          command=(sys.executable, "-c", WORKLOAD), runs=2)
        cost = doc["cost"]
        self.assertEqual(cost["currency"], "EUR")
        per_s = 2.1 / 3600
        stages = {s["name"]: s for s in cost["stages"]}
        train = next(s for s in doc["summary"]["stages"] if s["name"] == "train")
        self.assertAlmostEqual(stages["train"]["median"], train["active_ns"]["median"] * 1e-9 * per_s,
                               delta=1e-15)
        counters = {c["name"]: c for c in doc["summary"]["counters"]}
        units = {u["counter"]: u for u in cost["per_unit"]}
        self.assertEqual(set(units), {"train_images"})  # time_to_target_s is no count
        u = units["train_images"]
        expected = per_s / counters["train_images"]["rate_per_s_median"] * u["per"]
        self.assertAlmostEqual(u["median"], expected, delta=expected * 1e-9)
        self.assertGreaterEqual(u["median"], 0.01)  # a readable unit: a cent or more ...
        self.assertLess(u["median"], 10.01 if u["per"] > 1 else 1e9)  # ... not a thousand times
        self.assertIn(u["description"], ("EUR per 1k train_images", "EUR per 1M train_images",
                                         "EUR per 1 train_images"))
        target = cost["to_target"][0]
        self.assertEqual(target["counter"], "time_to_target_s")
        self.assertAlmostEqual(target["median"], 0.5 * per_s, delta=1e-15)
        self.assertIn(u["description"], text)
        self.assertIn("to target (time_to_target_s)", text)

    def test_price_file(self):
        rc, out, err = self.cli("env", "--json", "--no-git")
        self.assertEqual(rc, 0, err)
        host = json.loads(out)["hostname"]
        # An exact entry for this host beats the default.
        path = self.write("prices.yaml", f"currency: GBP\nsomething-else: 9\n{json.dumps(host)}: 1.8\n"
                                         "default: 0.36\n")
        doc, text, _, _ = self.run_priced("--price-file", path)
        cost = doc["cost"]
        self.assertEqual(cost["price_per_hour"], 1.8)
        self.assertEqual(cost["currency"], "GBP")
        self.assertEqual(cost["source"], "--price-file")
        self.assertEqual(cost["price_file"]["path"], path)
        self.assertEqual(cost["price_file"]["entry"], host)
        self.assertEqual(cost["price_file"]["rule"], "exact")
        self.assertEqual(cost["price_file"]["field"], "hostname")
        self.assertIn(f"({path}: {host})", text)
        # No entry for this machine: the default.
        path = self.write("default.yaml", "no-such-machine-anywhere: 9\ndefault: 0.36\n")
        doc, _, _, _ = self.run_priced("--price-file", path)
        self.assertEqual(doc["cost"]["price_per_hour"], 0.36)
        self.assertEqual(doc["cost"]["price_file"]["rule"], "default")
        # Neither: unpriced, with a warning, and the run still measured.
        path = self.write("none.yaml", "no-such-machine-anywhere: 9\n")
        doc, _, err, _ = self.run_priced("--price-file", path)
        self.assertIsNone(doc["cost"])
        self.assertIn("not priced", err)
        self.assertIn("unpriced", [w["code"] for w in doc["warnings"]])

    def test_unpriced(self):
        rc, _, err = self.cli("run", "-r", "1", "-q", "--", "true")
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.store, "runs", self.stored_results()[0])) as f:
            self.assertIsNone(json.load(f)["cost"])

    def test_bad_values(self):
        cases = [("--price", v, v) for v in ("abc", "0", "-3", "nan", "inf", "1e99", "3,5")]
        cases.append(("--price", "3.5 dollars", "dollars"))
        missing = os.path.join(self.tmp.name, "missing.yaml")
        cases.append(("--price-file", missing, missing))
        for name, text, named in (("notyaml.yaml", "a: [1\n", "notyaml.yaml"),
                                  ("list.yaml", "- 1\n", "mapping"),
                                  ("word.yaml", "box: cheap\n", "cheap"),
                                  ("negative.yaml", "box: -1\n", "-1"),
                                  ("currency.yaml", "currency: dollars\nbox: 1\n", "dollars"),
                                  ("default.yaml", "default: free\n", "free")):
            cases.append(("--price-file", self.write(name, text), named))
        for option, value, named in cases:
            with self.subTest(option=option, value=value):
                marker = os.path.join(self.tmp.name, "ran")
                rc, _, err = self.cli("run", "-r", "1", option, value, "--",
                                      "sh", "-c", f"touch {marker}")
                self.assertEqual(rc, 2, err)
                self.assertIn(named, err)
                self.assertIn(option, err)
                self.assertFalse(os.path.exists(marker), "the command ran")
                self.assertEqual(self.stored_results(), [])
        rc, _, err = self.cli("run", "-r", "1", "--price", "1", "--price", "2", "--", "true")
        self.assertEqual(rc, 2, err)
        self.assertIn("given already", err)

    def test_compare(self):
        _, _, _, a = self.run_priced("--price", "3.6", command=("sleep", "0.1"))
        _, _, _, b = self.run_priced("--price", "36", command=("sleep", "0.05"))
        rc, out, err = self.cli("compare", "--json", a, b)
        self.assertEqual(rc, 0, err)
        cmp = json.loads(out)
        cost = cmp["candidates"][0]["cost"]
        with open(a) as f:
            da = json.load(f)
        with open(b) as f:
            db = json.load(f)
        time_ratio = db["summary"]["wall_ns"]["median"] / da["summary"]["wall_ns"]["median"]
        self.assertAlmostEqual(cost["time_ratio"], time_ratio, delta=1e-9)
        self.assertLess(cost["time_ratio"], 1)  # faster ...
        # ... at ten times the price: the cost ratio is ten times the time ratio.
        self.assertAlmostEqual(cost["cost_ratio"], 10 * time_ratio, delta=1e-9)
        self.assertGreater(cost["cost_ratio"], 1)
        self.assertEqual(cost["baseline"]["price_per_hour"], 3.6)
        self.assertEqual(cost["candidate"]["price_per_hour"], 36)
        self.assertTrue(cost["same_currency"])
        rc, out, err = self.cli("compare", a, b)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"time ×{time_ratio:.3g}", out)
        self.assertIn(f"cost ×{10 * time_ratio:.3g}", out)
        self.assertIn("at 36 USD/h", out)
        # An unpriced side: no cost comparison.
        rc, _, err = self.cli("run", "-r", "2", "-q", "--", "true")
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("compare", "--json", a, "latest")
        self.assertEqual(rc, 0, err)
        self.assertIsNone(json.loads(out)["candidates"][0]["cost"])


if __name__ == "__main__":
    unittest.main()

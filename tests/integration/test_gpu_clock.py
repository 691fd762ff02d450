"""End-to-end tests of the GPU clock marking (docs/statistics.md#gpu-clock): runs during which a
busy GPU ran its SM clock below a threshold of its maximum, or reported power or thermal
slowdown, are marked (runs[].gpu_clock), counted (summary.gpu_clock), warned about
(gpu_throttling), and left out of the statistics with --discard-throttled.

The fake NVML library (tests/fakes/fake_nvml.c) replays a script; each of its sequences takes
one step per call, whoever calls. With --interval 10s and a run of about 150 ms (stage_prog
seq) the sampler reads each GPU twice a run (once when the run starts, once when it ends), so
the runs take the steps two by two. A loaded machine may still shift them by a sample, so each
run's mark is checked against its own recorded samples, and the counts only against ranges
that hold whatever the shift.

Environment (set by ctest): MLBENCH, STAGE_PROG, MLBENCH_SOURCE, FAKE_NVML."""
import glob
import os
import unittest

from fake_gpu import FakeGpuCase, STAGE_PROG
from test_run import load_schema, walk

SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

MAX_MHZ = 2000
# GPU 0 busy throughout, its maximum SM clock 2000 MHz; the SM clock at 1900 MHz (95 %) for
# runs 1 and 2, 900 MHz (45 %) for runs 3 and 4, 1900 MHz from then on. No process list (not
# supported): the GPU counts because it is busy.
LOW_CLOCK = f"""devices 1
sm_clock_max 0 {MAX_MHZ}
util 0 95/60
power 0 300000
throttle 0 0
sm_clock 0 1900 1900 1900 1900 900 900 900 900 1900
"""
RUNS = 5


class GpuClockTest(FakeGpuCase):
    def run_low_clock(self, *options):
        rc, out, err = self.mlbench(LOW_CLOCK, "-r", str(RUNS), "--interval", "10s", "-v",
                                    *options, "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertIn("nvml", r["sampling"]["sources"], r["sampling"]["not_measured"])
        self.assertEqual(r["environment"]["gpus"][0]["sm_clock_max_hertz"], MAX_MHZ * 1_000_000)
        return r, out

    @staticmethod
    def warning(r, code):
        for w in r["warnings"]:
            if w["code"] == code:
                return w["message"]
        return None

    @staticmethod
    def series(run, metric):
        for s in run["samples"]["series"]:
            if s["metric"] == metric and s["labels"] == 'gpu="0"':
                return s["values"]
        raise AssertionError(f"no {metric} in run {run['index']}")

    OWN = ("config.discard_throttled", "config.throttle_threshold", "runs[].gpu_clock",
           "summary.gpu_clock")

    def check_documented(self, r):
        """The fields of this feature are in docs/result-schema.md with their types, and every
        one not marked optional is there (integration.schema checks the whole document)."""
        documented = load_schema(os.path.join(SOURCE, "docs", "result-schema.md"))
        seen = {}
        walk(r, "", seen)
        for path, types in seen.items():
            if path.startswith(self.OWN):
                self.assertIn(path, documented, f"{path} is not documented")
                self.assertLessEqual(types, documented[path][0], path)
        for path, (_, optional) in documented.items():
            if path.startswith(self.OWN) and not optional and not path.endswith("[]"):
                self.assertIn(path, seen, f"documented field {path} missing")

    def check_marks(self, r, threshold):
        """Each run's gpu_clock from its own samples (every sample busy: utilisation 95 %);
        returns the indices of the throttled runs."""
        throttled = []
        for run in r["runs"]:
            clocks = [v for v in self.series(run, "gpu_sm_clock_hertz") if v is not None]
            self.assertGreaterEqual(len(clocks), 1, run["samples"])
            gc = run["gpu_clock"]
            slow = sum(c < threshold * MAX_MHZ * 1e6 for c in clocks)
            self.assertTrue(gc["measured"])
            self.assertEqual(gc["busy_samples"], len(clocks))
            self.assertEqual(gc["throttled_samples"], slow)
            self.assertEqual(gc["reasons"], [])
            self.assertAlmostEqual(gc["scaling"], sum(clocks) / len(clocks) / (MAX_MHZ * 1e6))
            self.assertEqual(gc["throttled"], slow >= max(1, 0.1 * len(clocks)), run["index"])
            if gc["throttled"]:
                throttled.append(run["index"])
        return throttled

    def test_low_clock_runs_marked(self):
        """Runs at 45 % of the maximum clock are throttled; the summary counts them, the
        warning says how many, and the terminal summary has its line."""
        r, out = self.run_low_clock()
        throttled = self.check_marks(r, 0.75)
        # two by two: runs 3 and 4; shifted by a sample, one to three of them
        self.assertTrue(1 <= len(throttled) <= RUNS - 2, throttled)
        s = r["summary"]
        gc = s["gpu_clock"]
        self.assertEqual(gc["threshold"], 0.75)
        self.assertEqual(gc["runs"], RUNS)
        self.assertEqual(gc["throttled_runs"], len(throttled))
        self.assertEqual(gc["discarded_runs"], 0)
        self.assertEqual(s["runs_used"], RUNS)
        self.assertEqual(s["wall_ns"]["n"], RUNS)
        self.assertLess(gc["scaling_min"], 0.75)
        self.assertGreater(gc["scaling_median"], 0.75)
        message = self.warning(r, "gpu_throttling")
        self.assertIsNotNone(message, r["warnings"])
        self.assertIn(f"in {len(throttled)} of {RUNS} runs", message)
        self.assertIn("--discard-throttled", message)
        self.assertIsNone(self.warning(r, "throttled_discarded"))
        self.assertFalse(r["config"]["discard_throttled"])
        self.assertEqual(r["config"]["throttle_threshold"], 0.75)
        self.assertIn("GPU clock", out)
        self.assertIn(f"{len(throttled)} of {RUNS} runs throttled", out)
        self.check_documented(r)

    def test_discard_throttled(self):
        """--discard-throttled: the statistics are over the other runs, and the warning says
        how many were left out."""
        r, out = self.run_low_clock("--discard-throttled")
        throttled = self.check_marks(r, 0.75)
        self.assertTrue(1 <= len(throttled) <= RUNS - 2, throttled)
        s = r["summary"]
        self.assertTrue(r["config"]["discard_throttled"])
        self.assertEqual(s["runs_ok"], RUNS)
        self.assertEqual(s["runs_used"], RUNS - len(throttled))
        self.assertEqual(s["wall_ns"]["n"], RUNS - len(throttled))
        self.assertEqual(s["gpu_clock"]["discarded_runs"], len(throttled))
        self.assertGreater(s["gpu_clock"]["scaling_min"], 0.75)  # over the runs kept
        message = self.warning(r, "throttled_discarded")
        self.assertIsNotNone(message, r["warnings"])
        self.assertIn(f"{len(throttled)} of {RUNS} runs were throttled and left out", message)
        self.assertIsNotNone(self.warning(r, "gpu_throttling"))
        self.assertIn("left out", out)

    def test_threshold_option(self):
        """--throttle-threshold 40: a clock at 45 % of the maximum is no longer throttled."""
        r, out = self.run_low_clock("--throttle-threshold", "40")
        self.assertEqual(self.check_marks(r, 0.40), [])
        self.assertEqual(r["config"]["throttle_threshold"], 0.4)
        self.assertEqual(r["summary"]["gpu_clock"]["threshold"], 0.4)
        self.assertEqual(r["summary"]["gpu_clock"]["throttled_runs"], 0)
        self.assertIsNone(self.warning(r, "gpu_throttling"))
        self.assertIn("no run throttled", out)

    def test_all_runs_throttled(self):
        """Thermal slowdown in every run: --discard-throttled leaves none out and says so. The
        reason bits alone mark the runs (no maximum clock in this script)."""
        script = """devices 1
util 0 95/60
sm_clock 0 1500
throttle 0 0x40
"""
        rc, out, err = self.mlbench(script, "-r", "3", "--interval", "10s", "--discard-throttled",
                                    "-v", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        r = self.result()
        for run in r["runs"]:
            self.assertTrue(run["gpu_clock"]["throttled"], run["gpu_clock"])
            self.assertEqual(run["gpu_clock"]["reasons"], ["thermal"])
        s = r["summary"]
        self.assertEqual(s["runs_used"], 3)
        self.assertEqual(s["gpu_clock"]["throttled_runs"], 3)
        self.assertEqual(s["gpu_clock"]["discarded_runs"], 0)
        self.assertEqual(s["gpu_clock"]["reasons"], ["thermal"])
        self.assertIsNone(self.warning(r, "throttled_discarded"))
        self.assertIn("statistics include throttled runs", self.warning(r, "throttled_kept"))
        self.assertIn("in 3 of 3 runs (thermal", self.warning(r, "gpu_throttling"))
        self.assertIn("3 of 3 runs throttled (thermal)", out)

    def test_no_gpu_no_clock(self):
        """Without a GPU nothing is marked: no runs[].gpu_clock, no summary.gpu_clock."""
        rc, out, err = self.mlbench(None, "-r", "1", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertNotIn("gpu_clock", r["runs"][0])
        self.assertNotIn("gpu_clock", r["summary"])
        self.assertNotIn("GPU clock", out)

    def test_bad_threshold(self):
        for value in ("0", "101", "abc"):
            with self.subTest(value=value):
                rc, out, err = self.mlbench(None, "--throttle-threshold", value, "--", "true")
                self.assertEqual(rc, 2, err)
                self.assertIn(f"--throttle-threshold '{value}'", err)
                self.assertEqual(glob.glob(os.path.join(self.store, "runs", "*.json")), [])


if __name__ == "__main__":
    unittest.main()

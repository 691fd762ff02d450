"""End-to-end tests of `mlbench-workload imgclf --until-accuracy X [--max-epochs N]
[--eval-every STEPS]` (docs/workloads.md, "Training to a target accuracy"): a reachable target
stops the run early with time_to_target_s inside the run's wall time, an impossible one ends in
exit 4 with its message (a failed run under mlbench), the evaluations follow --eval-every, and
bad input exits 2. Small synthetic images with one compute thread: seconds, and the same
trajectory on every machine for a seed.

Environment (set by ctest): MLBENCH, WORKLOAD (mlbench-workload)."""
import json
import os
import re
import subprocess
import tempfile
import unittest

import test_workloads as tw

# The module's small synthetic dataset, prepared once: test_workloads' (tw.DATA).
setUpModule = tw.setUpModule
tearDownModule = tw.tearDownModule

TRAIN = 600  # tw.SMALL's --train-images
STEPS_PER_EPOCH = 12  # 600 images / --batch 50
WL_EXIT_TARGET_MISSED = 4


def args(*more):
    return ["imgclf", *tw.SMALL, "--data-dir", tw.DATA, "--batch", "50", "--threads", "1", *more]


class UntilAccuracyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-until-test-")

    def tearDown(self):
        self.tmp.cleanup()

    def workload(self, *argv):
        p = subprocess.run([tw.WORKLOAD, *argv], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def measure(self, *argv, ok=True):
        """One run under `mlbench run -r 1`; returns the run of its result document."""
        out = os.path.join(self.tmp.name, "r.json")
        p = subprocess.run([tw.MLBENCH, "run", "-q", "-r", "1", "--store",
                            os.path.join(self.tmp.name, "store"), "-o", out, "--", tw.WORKLOAD,
                            *argv], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0 if ok else 1, p.stderr)
        with open(out) as f:
            return json.load(f)["runs"][0]

    @staticmethod
    def spans(run, name):
        return [s for s in run["spans"] if s["name"] == name]

    def test_reached_stops_early(self):
        run = self.measure(*args("--until-accuracy", "0.5"))
        self.assertEqual(run["status"], "ok")
        self.assertEqual(run["exit_code"], 0)
        acc = tw.WorkloadTest.counter(run, "accuracy")
        self.assertGreaterEqual(acc["last"], 0.5)
        # Stopped at the first evaluation at or above the target: every earlier one was below.
        values = [p[1] for p in acc["points"]]
        self.assertEqual(len(values), acc["n"])
        self.assertTrue(all(v < 0.5 for v in values[:-1]), values)
        images = tw.WorkloadTest.counter(run, "images")["sum"]
        self.assertLess(images, 20 * TRAIN)  # stopped before --max-epochs' default 20
        evals = self.spans(run, "evaluate")
        self.assertEqual(len(evals), acc["n"])
        self.assertEqual(len(evals), images // TRAIN)  # once per epoch, the last one reached it
        steps = tw.WorkloadTest.counter(run, "steps_to_target")["last"]
        self.assertEqual(steps, tw.WorkloadTest.stage(run, "train")["count"])
        self.assertAlmostEqual(tw.WorkloadTest.counter(run, "epochs_to_target")["last"],
                               images / TRAIN)
        # The clock: inside the run, and covering the first load to the reaching evaluation.
        ttt = tw.WorkloadTest.counter(run, "time_to_target_s")["last"]
        self.assertLessEqual(ttt, run["wall_ns"] / 1e9)
        first_load = min(s["start_ns"] for s in self.spans(run, "load"))
        self.assertGreaterEqual(ttt * 1e9, evals[-1]["end_ns"] - first_load)
        self.assertGreater(tw.WorkloadTest.counter(run, "train_images_per_s")["last"], 0)
        meta = run["metadata"]
        self.assertEqual((meta["until_accuracy"], meta["max_epochs"], meta["eval_every"]),
                         ("0.5", "20", "epoch"))
        self.assertNotIn("epochs", meta)
        rc, out, err = self.workload(*args("--until-accuracy", "0.5"))
        self.assertEqual(rc, 0, err)
        m = re.search(r"in ([0-9.]+) epoch\(s\) \(at most 20\).*; 50 % reached after [0-9.]+ s "
                      r"\(epoch (\d+), step (\d+)\)", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(int(m.group(3)), steps)  # the same seed trains the same way
        self.assertEqual(int(m.group(2)), images // TRAIN)

    def test_not_reached(self):
        rc, out, err = self.workload(*args("--until-accuracy", "1.0", "--max-epochs", "1"))
        self.assertEqual(rc, WL_EXIT_TARGET_MISSED, err)
        msg = re.search(r"mlbench-workload imgclf: did not reach val accuracy 1 in 1 epoch "
                        r"\(best ([0-9.]+) at epoch 1\): raise --max-epochs or lower "
                        r"--until-accuracy", err)
        self.assertIsNotNone(msg, err)
        self.assertLess(float(msg.group(1)), 1.0)
        self.assertIn("100 % not reached", out)
        # Under mlbench: a failed run with the status and the line, and what it measured.
        run = self.measure(*args("--until-accuracy", "1.0", "--max-epochs", "1"), ok=False)
        self.assertEqual((run["status"], run["exit_code"]), ("failed", WL_EXIT_TARGET_MISSED))
        self.assertIn("did not reach val accuracy 1 in 1 epoch", run["stderr_tail"])
        self.assertEqual(tw.WorkloadTest.counter(run, "images")["sum"], TRAIN)
        self.assertGreater(tw.WorkloadTest.counter(run, "train_images_per_s")["last"], 0)
        self.assertNotIn("time_to_target_s", [c["name"] for c in run["counters"]])

    def test_eval_every(self):
        # 2 epochs of 12 steps, every 5: after steps 5, 10, 15, 20, and the last one, 24.
        run = self.measure(*args("--until-accuracy", "1.0", "--max-epochs", "2",
                                 "--eval-every", "5"), ok=False)
        self.assertEqual(run["exit_code"], WL_EXIT_TARGET_MISSED)
        self.assertEqual(len(self.spans(run, "evaluate")), 5)
        self.assertEqual(tw.WorkloadTest.counter(run, "accuracy")["n"], 5)
        self.assertEqual(run["metadata"]["eval_every"], "5")
        # Each evaluation lies between the steps it follows and the next.
        trains = sorted(s["end_ns"] for s in self.spans(run, "train"))
        for n, e in zip((5, 10, 15, 20, 24), sorted(self.spans(run, "evaluate"),
                                                    key=lambda s: s["start_ns"])):
            self.assertGreaterEqual(e["start_ns"], trains[n - 1])
            if n < len(trains):
                self.assertLessEqual(e["end_ns"], trains[n])
        # A fixed run takes the schedule too: every 6 steps of 2 epochs is 4, the last at 24.
        run = self.measure(*args("--epochs", "2", "--eval-every", "6"))
        self.assertEqual(len(self.spans(run, "evaluate")), 4)
        # The run stops at the evaluation that reached the target, within an epoch or not: it
        # trained exactly the steps before it.
        rc, out, err = self.workload(*args("--until-accuracy", "0.3", "--eval-every", "5"))
        self.assertEqual(rc, 0, err)
        m = re.search(r"30 % reached after [0-9.]+ s \(epoch (\d+), step (\d+)\)", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(int(m.group(2)) % 5, 0)
        self.assertIn(f"{int(m.group(2)) * 50} images in", out)

    def test_bad_input(self):
        cases = [
            (["--until-accuracy", "0"], "--until-accuracy '0' must be above 0"),
            (["--until-accuracy", "1.5"], "--until-accuracy '1.5'"),
            (["--until-accuracy", "-0.5"], "--until-accuracy '-0.5'"),
            (["--eval-every", "0"], "--eval-every '0'"),
            (["--eval-every", "-3"], "--eval-every '-3'"),
            (["--max-epochs", "0", "--until-accuracy", "0.5"], "--max-epochs '0'"),
            (["--epochs", "2", "--until-accuracy", "0.5"], "--max-epochs 2 instead"),
            (["--until-accuracy", "0.5", "--target-accuracy", "0.8"], "drop --target-accuracy"),
            (["--max-epochs", "5"], "--max-epochs 5 is the limit of --until-accuracy"),
            (["--input-only", "--eval-every", "10"], "--input-only trains and evaluates nothing"),
            (["--input-only", "--until-accuracy", "0.5"], "drop --until-accuracy"),
        ]
        for more, msg in cases:
            rc, out, err = self.workload(*args(*more))
            self.assertEqual(rc, 2, (more, err))
            self.assertIn(msg, err, more)

    def test_help(self):
        rc, out, err = self.workload("imgclf", "--help")
        self.assertEqual(rc, 0, err)
        for opt in ("--until-accuracy X", "--max-epochs N", "--eval-every STEPS"):
            self.assertIn(opt, out)


if __name__ == "__main__":
    unittest.main()

"""Out of memory, reproducibly: memgrow (memory that grows with its argument, failing above a
limit like a real program), and mlbench-workload imgclf/mlp --max-memory with their documented
out-of-memory exit status 3 and message (docs/workloads.md).

Environment (set by ctest): WORKLOAD (mlbench-workload), MEMGROW."""
import os
import re
import subprocess
import tempfile
import unittest

WORKLOAD = os.environ.get("WORKLOAD", "build/mlbench-workload")
MEMGROW = os.environ.get("MEMGROW", "build/tests/integration/memgrow")
OOM_EXIT = 3
SMALL = ["--dataset", "synthetic", "--image-size", "16", "--train-images", "300",
         "--val-images", "100", "--epochs", "1", "--threads", "1", "--quiet"]
NEEDS = re.compile(r"^mlbench-workload (\w+): out of memory: (.*) needs ([\d.]+) (KiB|MiB), "
                   r"over --max-memory ([\d.]+) (KiB|MiB)", re.M)
_tmp = None
DATA = None


def setUpModule():
    global _tmp, DATA
    _tmp = tempfile.TemporaryDirectory(prefix="mlbench-oom-test-")
    DATA = os.path.join(_tmp.name, "synthetic")
    p = subprocess.run([WORKLOAD, "imgclf", *SMALL, "--data-dir", DATA, "--prepare-only"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def tearDownModule():
    _tmp.cleanup()


def mib(value, unit):
    return float(value) / (1024 if unit == "KiB" else 1)


def run(*args, timeout=120):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class MemgrowTest(unittest.TestCase):
    def maxrss_mib(self, *args):
        """Runs memgrow; its exit status and peak resident memory (MiB)."""
        p = subprocess.Popen([MEMGROW, *args], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        return p.returncode, ru.ru_maxrss / 1024.0

    def test_grows_with_argument(self):
        rc, small = self.maxrss_mib("8", "--hold", "0")
        self.assertEqual(rc, 0)
        rc, big = self.maxrss_mib("64", "--hold", "0")
        self.assertEqual(rc, 0)
        # the child's peak may include the Python that forked it (before exec): compare the
        # large run with what it touched, and the two with each other
        self.assertGreaterEqual(big, 64, (small, big))
        self.assertGreaterEqual(big - small, 40, (small, big))

    def test_fails_exactly_above_limit(self):
        for style, words in [("python", "MemoryError: Unable to allocate 33 MiB"),
                             ("enomem", "Cannot allocate memory"),
                             ("rlimit", "Cannot allocate memory")]:
            with self.subTest(style=style):
                rc, out, err = run(MEMGROW, "32", "--limit", "32", "--style", style, "--hold",
                                   "0")
                self.assertEqual(rc, 0, err)
                self.assertIn("touched 32 MiB", out)
                rc, out, err = run(MEMGROW, "33", "--limit", "32", "--style", style, "--hold",
                                   "0")
                self.assertEqual(rc, 1, out)
                self.assertIn(words, err)

    def test_bad_input(self):
        rc, _, err = run(MEMGROW, "lots")
        self.assertEqual(rc, 2)
        self.assertIn("'lots'", err)


class MaxMemoryTest(unittest.TestCase):
    def imgclf(self, batch, limit, *extra):
        return run(WORKLOAD, "imgclf", *SMALL, "--data-dir", DATA, "--batch", str(batch),
                   "--max-memory", limit, *extra)

    def need(self, err):
        m = NEEDS.search(err)
        self.assertIsNotNone(m, err)
        return mib(m.group(3), m.group(4))

    def test_imgclf_over_and_under(self):
        rc, out, err = self.imgclf(1024, "1MiB")
        self.assertEqual(rc, OOM_EXIT, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)  # one clear line
        self.assertIn("out of memory: batch 1024 needs", err)
        self.assertIn("over --max-memory 1.0 MiB", err)
        self.assertNotIn("images in", out)  # stopped before training
        need = self.need(err)
        # just above what it said it needs: it fits and trains
        rc, out, err = self.imgclf(1024, f"{need + 0.1:.1f}MiB")
        self.assertEqual(rc, 0, err)
        self.assertIn("imgclf: 300 images in 1 epoch(s)", out)
        # just below: out of memory again
        rc, _, err = self.imgclf(1024, f"{need - 0.1:.1f}MiB")
        self.assertEqual(rc, OOM_EXIT, err)

    def test_imgclf_need_linear_in_batch(self):
        needs = {}
        for b in (512, 1024, 2048, 4096):
            rc, _, err = self.imgclf(b, "1KiB")
            self.assertEqual(rc, OOM_EXIT, err)
            needs[b] = self.need(err)
        step1, step2 = needs[1024] - needs[512], needs[4096] - needs[2048]
        self.assertGreater(step1, 0)
        self.assertAlmostEqual(step2 / step1, 4.0, delta=0.3)  # rounding to 0.1 MiB

    def test_imgclf_bad_size(self):
        for bad in ("12x", "0", "-5M", "MiB", ""):
            with self.subTest(bad=bad):
                rc, _, err = self.imgclf(32, bad)
                self.assertEqual(rc, 2, err)
                self.assertIn(f"--max-memory '{bad}' must be a size", err)

    def mlp(self, batches, limit):
        return run(WORKLOAD, "mlp", "--device", "cpu", "--hidden", "64", "--warmup", "0",
                   "--reps", "2", "--batches", batches, "--max-memory", limit)

    def test_mlp_largest_batch_counts(self):
        # 64 -> 256 -> 64: weights 129 KiB; x, h, y 1.5 KiB per row
        rc, out, err = self.mlp("1,1024", "1MiB")
        self.assertEqual(rc, OOM_EXIT, err)
        self.assertIn("mlbench-workload mlp: out of memory: fp32-b1024 needs", err)
        self.assertNotIn("batch", out)  # nothing measured: checked before the first batch
        rc, out, err = self.mlp("1,256", "1MiB")
        self.assertEqual(rc, 0, err)
        self.assertIn("batch    256", out)
        needs = []
        for b in ("2000", "4000"):
            rc, _, err = self.mlp(b, "1KiB")
            self.assertEqual(rc, OOM_EXIT, err)
            needs.append(self.need(err))
        self.assertAlmostEqual(needs[1] - needs[0], 2000 * 1.5 / 1024, delta=0.15)

    def test_no_max_memory_unchanged(self):
        rc, out, err = run(WORKLOAD, "mlp", "--device", "cpu", "--hidden", "64", "--warmup",
                           "0", "--reps", "2", "--batches", "4096")
        self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    unittest.main()

"""Tests of the in-process timer (python/mlbench_marker/timer.py): Timer, Measurement, bench.

Timing is never asserted tightly (the machine is noisy): a function of known cost busy-waits on
time.perf_counter, so each call lasts at least its cost, and the checks allow it to take much
longer. Statistics are checked on synthetic blocks; CUDA synchronisation with a fake `torch` in
sys.modules; the marker spans in a child process that sends to a socket bound here (the
Receiver of test_marker_client); Measurement.record with fake mlbench binaries, and with the
real one when $MLBENCH is set.
Run: python3 -m unittest -v test_timer (in tests/python)
"""

import json
import math
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import unittest
from math import comb

import support

os.environ.pop("MLBENCH_MARKER_SOCKET", None)  # this process tests the standalone timer
os.environ.pop("MLBENCH_MARKER_RING", None)
sys.path.insert(0, support.PYTHON_DIR)
import mlbench_marker  # noqa: E402
from mlbench_marker import Measurement, Timer  # noqa: E402
from mlbench_marker import timer as timer_module  # noqa: E402
import test_marker_client as tmc  # noqa: E402  (its Receiver; its tests are not collected here)

COST = 0.001  # seconds a call of busy() lasts at least


def busy(seconds=COST):
    """Busy-waits `seconds` of wall time; returns 7."""
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass
    return 7


class CalibrationTest(unittest.TestCase):
    def test_autorange_picks_the_first_block_over_the_threshold(self):
        threshold = 0.03
        m = Timer(busy).autorange(threshold=threshold)
        sizes = [n for n, _ in m.calibration] + [m.number]
        self.assertEqual(sizes, [1, 2, 5, 10, 20, 50, 100][:len(sizes)])
        for _, ns in m.calibration:  # every block before the chosen one was too short
            self.assertLess(ns, threshold * 1e9)
        self.assertGreaterEqual(m.rounds_ns[0], threshold * 1e9)
        # 50 calls last >= 50 ms whatever the load, so never more than 50 is needed; 20 or 50
        # on a quiet machine (10 calls over 30 ms would be a 3x slow machine)
        self.assertLessEqual(m.number, 50)
        self.assertGreaterEqual(m.median, COST)
        # one block, preempted or not: only a gross error (a unit, a wrong divisor) is caught
        self.assertLess(m.median, COST * 20, "the median per call is far from the known cost")
        self.assertEqual(m.blocks, 1)
        self.assertEqual(m.name, "busy")

    def test_blocked_autorange(self):
        m = Timer(busy).blocked_autorange(min_run_time=0.06, warmup=2)
        self.assertGreaterEqual(m.blocks, timer_module.MIN_BLOCKS)
        self.assertGreaterEqual(m.total_time, 0.06)
        self.assertEqual(len(m.warmup_rounds_ns), 2)
        self.assertEqual(len(m.cpu_ns), m.blocks)
        # the block is calibrated to a tenth of min_run_time, 6 ms: the first size whose block
        # lasted that long (5 or 10 calls of >= 1 ms; 10 always do)
        self.assertEqual(m.calibration[-1][0], m.number)
        self.assertGreaterEqual(m.calibration[-1][1], 0.006e9)
        self.assertLess(m.calibration[-2][1], 0.006e9)
        self.assertLessEqual(m.number, 10)
        self.assertGreaterEqual(m.min, COST)
        self.assertLess(m.median, COST * 20)
        low, high = m.ci
        self.assertTrue(low <= m.median <= high)
        self.assertEqual(m.synchronized, "none")

    def test_timeit_and_arguments(self):
        calls = []
        m = Timer(lambda a, b=0: calls.append((a, b)), 1, b=2).timeit(5)
        self.assertEqual(calls, [(1, 2)] * 5)
        self.assertEqual((m.number, m.blocks), (5, 1))
        self.assertTrue(m.name.endswith("<lambda>"), m.name)
        with self.assertRaises(ValueError):
            Timer(busy).timeit(0)

    def test_name_and_checks(self):
        import functools
        self.assertEqual(Timer(functools.partial(busy, 0)).name, "busy")
        self.assertEqual(Timer(busy, name="mine").name, "mine")
        with self.assertRaises(ValueError):
            Timer(busy, name="has space")
        with self.assertRaises(TypeError):
            Timer(42)
        with self.assertRaises(TypeError):
            Timer(busy, sync="yes")
        with self.assertRaises(ValueError):
            Timer(busy).blocked_autorange(min_run_time=0)

    def test_exceptions_propagate(self):
        def boom():
            raise KeyError("x")
        with self.assertRaises(KeyError):
            Timer(boom).blocked_autorange(min_run_time=0.01)


class StatisticsTest(unittest.TestCase):
    def test_summary_of_synthetic_blocks(self):
        # 10 calls per block: per-call times 1..9 ms and one 100 ms outlier
        per_call_ms = [5, 1, 9, 3, 7, 2, 8, 4, 6, 100]
        m = Measurement("synthetic", 10, [ms * 10 * 1_000_000 for ms in per_call_ms],
                        warmup_rounds_ns=[500_000_000], cpu_ns=[1] * 10)
        self.assertAlmostEqual(m.median, 0.0055)
        self.assertAlmostEqual(m.mean, 0.0145)
        ms = [x / 1000 for x in per_call_ms]
        mean = sum(ms) / 10
        self.assertAlmostEqual(m.stddev, math.sqrt(sum((x - mean) ** 2 for x in ms) / 9))
        # quartiles by linear interpolation: positions 2.25 and 6.75 of 1..9,100
        self.assertAlmostEqual(m.iqr, 0.00775 - 0.00325)
        self.assertAlmostEqual(m.min, 0.001)
        self.assertAlmostEqual(m.max, 0.1)
        self.assertEqual(m.ci, (0.002, 0.009))  # ranks 2 and 9 of 10 (docs/statistics.md)
        self.assertAlmostEqual(m.ci_level, 1 - 2 * 11 / 1024)
        self.assertEqual(m.warmup_times, [0.05])  # kept apart: in no statistic
        self.assertEqual(m.blocks, 10)

    def test_median_ci_ranks_against_exact_binomial(self):
        table = {1: (1, 0.0), 2: (1, 0.5), 5: (1, 0.9375), 6: (1, 0.96875), 8: (1, 0.9921875),
                 9: (2, 0.9609375), 10: (2, 0.978515625)}
        for n, expected in table.items():
            self.assertEqual(timer_module.median_ci_ranks(n), expected, n)
        for n in range(6, 200):
            j, coverage = timer_module.median_ci_ranks(n)

            def cover(rank):
                return 1 - 2 * sum(comb(n, i) for i in range(rank)) / 2 ** n
            self.assertGreaterEqual(coverage, 0.95, n)
            self.assertAlmostEqual(coverage, cover(j), places=12)
            self.assertLess(cover(j + 1), 0.95, n)  # the narrowest such interval

    def test_str_units(self):
        for per_call_ns, unit in ((50, "ns"), (5_000, "µs"), (5_000_000, "ms"),
                                  (5_000_000_000, "s")):
            m = Measurement("f", 2, [per_call_ns * 2] * 7)
            text = str(m)
            self.assertIn(f"f: 50.00 {unit} per call" if per_call_ns == 50
                          else f"f: 5.000 {unit} per call", text)
            self.assertIn("median of 7 blocks x 2 calls", text)
            self.assertIn("98.4 % CI", text.splitlines()[1])  # 7 blocks: ranks 1 and 7
        one = str(Measurement("f", 1, [1234]))
        self.assertIn("1.234 µs per call (median of 1 block x 1 call)", one)
        self.assertNotIn("CI", one)

    def test_to_timings(self):
        m = Measurement("sort", 100, [123456, 120001, 130000], warmup_rounds_ns=[200000],
                        cpu_ns=[1, 2, 3], synchronized="cuda", started_unix_ns=17,
                        command=["pytest", "t.py::test_sort"])
        doc = m.to_timings(label="t.py::test_sort")
        self.assertEqual(doc, {
            "schema": "mlbench.timings/1", "name": "sort", "label": "t.py::test_sort",
            "command": ["pytest", "t.py::test_sort"],
            "timer": f"mlbench_marker.Timer {mlbench_marker.__version__}", "number": 100,
            "rounds_ns": [123456, 120001, 130000], "warmup_rounds_ns": [200000],
            "cpu_ns": [1, 2, 3], "synchronized": "cuda",
            "metadata": {"python": sys.version.split()[0]}, "started_unix_ns": 17})
        self.assertNotIn("label", m.to_timings())
        json.dumps(doc)  # JSON-ready
        with self.assertRaises(ValueError):
            Measurement("x", 1, [])


class FakeCuda:
    """torch.cuda as the timer sees it; counts synchronize() and logs it among fn's calls."""

    def __init__(self, available=True, initialized=True, log=None):
        self.available = available
        self.initialized = initialized
        self.synchronized = 0
        self.log = log if log is not None else []

    def is_available(self):
        return self.available

    def is_initialized(self):
        return self.initialized

    def synchronize(self):
        self.synchronized += 1
        self.log.append(("sync", time.perf_counter_ns()))


class SyncTest(unittest.TestCase):
    def setUp(self):
        self.assertNotIn("torch", sys.modules, "a real torch is imported: the fake cannot run")
        self.log = []

    def tearDown(self):
        sys.modules.pop("torch", None)

    def fake_torch(self, **kwargs):
        cuda = FakeCuda(log=self.log, **kwargs)
        sys.modules["torch"] = types.SimpleNamespace(cuda=cuda, __version__="0.0-fake")
        return cuda

    def work(self):
        self.log.append(("fn", time.perf_counter_ns()))

    def test_synchronises_around_each_block_when_cuda_is_initialised(self):
        cuda = self.fake_torch()
        before = time.perf_counter_ns()
        m = Timer(self.work).timeit(3)
        after = time.perf_counter_ns()
        self.assertEqual([kind for kind, _ in self.log], ["sync", "fn", "fn", "fn", "sync"])
        self.assertEqual(cuda.synchronized, 2)
        self.assertEqual(m.synchronized, "cuda")
        self.assertEqual(m.to_timings()["synchronized"], "cuda")
        # the clock stops after the second synchronisation: the block holds the calls and the
        # wait for the GPU (first call to the second sync), within the whole timeit
        self.assertLessEqual(self.log[-1][1] - self.log[1][1], m.rounds_ns[0])
        self.assertLessEqual(m.rounds_ns[0], after - before)

        self.log.clear()
        m = Timer(self.work).blocked_autorange(min_run_time=0.001, warmup=1)
        blocks = len(m.calibration) + len(m.warmup_rounds_ns) + m.blocks
        self.assertEqual(cuda.synchronized, 2 + 2 * blocks)
        self.assertEqual(m.synchronized, "cuda")

    def test_no_sync_without_an_initialised_cuda(self):
        for kwargs in ({"initialized": False}, {"available": False}):
            cuda = self.fake_torch(**kwargs)
            m = Timer(self.work).timeit(2)
            self.assertEqual(cuda.synchronized, 0, kwargs)
            self.assertEqual(m.synchronized, "none")

    def test_no_sync_without_torch_and_never_imports_it(self):
        m = Timer(self.work).timeit(2)
        self.assertEqual(m.synchronized, "none")
        self.assertNotIn("torch", sys.modules)

    def test_sync_argument(self):
        cuda = self.fake_torch()
        Timer(self.work, sync=False).timeit(2)
        self.assertEqual(cuda.synchronized, 0)
        cuda = self.fake_torch(initialized=False)
        m = Timer(self.work, sync=True).timeit(2)
        self.assertEqual((cuda.synchronized, m.synchronized), (2, "cuda"))
        sys.modules.pop("torch")
        with self.assertRaises(RuntimeError) as cm:
            Timer(self.work, sync=True).timeit(1)
        self.assertIn("torch", str(cm.exception))


class RealTorchTest(unittest.TestCase):
    def test_real_torch(self):
        """With the real PyTorch imported: no synchronisation without CUDA, and the timer never
        initialises CUDA itself."""
        for python in (sys.executable, "/usr/bin/python3"):
            if os.path.isfile(python) and subprocess.run(
                    [python, "-c", "import torch"], capture_output=True,
                    env=support.child_env(), timeout=120).returncode == 0:
                break
        else:
            self.skipTest("no interpreter here has torch")
        proc = support.run([python, "-c", textwrap.dedent("""
            import json, torch, mlbench_marker
            x = torch.ones(64, 64)
            m = mlbench_marker.Timer(torch.mm, x, x).blocked_autorange(min_run_time=0.01)
            print(json.dumps([m.synchronized, torch.cuda.is_available(),
                              torch.cuda.is_initialized(), m.name]))
        """)], env=support.child_env(PYTHONPATH=support.PYTHON_DIR))
        synchronized, available, initialized, name = json.loads(proc.stdout)
        self.assertFalse(initialized)
        self.assertTrue(name)  # torch.mm's __qualname__, or its type's
        if not available:
            self.assertEqual(synchronized, "none")


class MarkerSpansTest(unittest.TestCase):
    """The timer under mlbench: spans and counters sent to a socket bound here."""

    RING = False

    def run_marked(self, code, socket_on=True):
        """Runs code in a child (with a marker socket when socket_on); returns (stdout JSON,
        stderr, B/E/C/I events in time order)."""
        with tempfile.TemporaryDirectory(prefix="mlbench-timer-test-") as tmp:
            path = os.path.join(tmp, "marker.sock")
            rx = tmc.Receiver(path)
            env = support.child_env(PYTHONPATH=support.PYTHON_DIR)
            if socket_on:
                env["MLBENCH_MARKER_SOCKET"] = path
                if self.RING:
                    env["MLBENCH_MARKER_RING"] = "1"
            proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                                  capture_output=True, text=True, timeout=120)
            datagrams = rx.stop()
            records, _ = tmc.ring_events(datagrams, rx.rings, self)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        events = sorted([e for e in datagrams if e.kind != "M"] + records, key=lambda e: e.t_ns)
        return json.loads(proc.stdout), proc.stderr, events

    def test_blocked_autorange_marks_warmup_and_each_block(self):
        info, err, events = self.run_marked("""
            import json, time
            from mlbench_marker import Timer
            def work():
                time.sleep(0.0005)
            m = Timer(work, name="work").blocked_autorange(min_run_time=0.02, warmup=2)
            print(json.dumps({"blocks": m.blocks, "number": m.number}))
        """)
        self.assertEqual(err, "")
        bodies = [(e.kind, e.body) for e in events]
        self.assertEqual(bodies[:2], [("B", "work.warmup"), ("E", "work.warmup")])
        block = [("B", "work"), ("C", f"work.calls {float(info['number'])!r}"), ("E", "work")]
        self.assertEqual(bodies[2:], block * info["blocks"])
        self.assertGreaterEqual(info["blocks"], 6)

    def test_timeit_and_autorange_spans(self):
        info, _, events = self.run_marked("""
            import json
            from mlbench_marker import Timer
            t = Timer(sum, [1, 2], name="s")
            t.timeit(7)
            m = t.autorange(threshold=0.0001)
            print(json.dumps([n for n, _ in m.calibration] + [m.number]))
        """)
        bodies = [(e.kind, e.body) for e in events]
        expected = [("B", "s"), ("C", "s.calls 7.0"), ("E", "s")]
        for number in info:  # autorange: every block tried is a span with its calls
            expected += [("B", "s"), ("C", f"s.calls {float(number)!r}"), ("E", "s")]
        self.assertEqual(bodies, expected)

    def test_bench_prints_only_standalone(self):
        code = """
            import json, mlbench
            m = mlbench.bench(sum, [1, 2], min_run_time=0.005)
            print(json.dumps(m.blocks))
        """
        _, err, events = self.run_marked(code, socket_on=False)
        self.assertEqual(events, [])
        self.assertIn("sum: ", err)
        self.assertIn("per call (median of", err)
        _, err, events = self.run_marked(code)
        self.assertEqual(err, "")
        self.assertIn(("B", "sum"), [(e.kind, e.body) for e in events])


@unittest.skipUnless(tmc.RINGS, "the client writes rings only on Linux x86-64")
class RingMarkerSpansTest(MarkerSpansTest):
    RING = True


def fake_mlbench(folder, script):
    """An executable shell script standing in for mlbench; returns its path."""
    path = os.path.join(folder, "fake-mlbench")
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n" + textwrap.dedent(script))
    os.chmod(path, stat.S_IRWXU)
    return path


class RecordTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="mlbench-record-test-")
        self.tmp = self._tmp.name
        self.m = Measurement("sort", 10, [1000, 1100, 1050], command=["x"])

    def tearDown(self):
        self._tmp.cleanup()

    def test_sends_one_document_and_returns_the_id(self):
        binary = fake_mlbench(self.tmp, f"""
            echo "$@" > {self.tmp}/args
            cat > {self.tmp}/stdin
            echo '[{{"id": "20261205T000000-abcdef", "label": "lab", "path": null}}]'
        """)
        self.assertEqual(self.m.record(label="lab", store="S", mlbench=binary),
                         "20261205T000000-abcdef")
        with open(os.path.join(self.tmp, "args"), encoding="utf-8") as f:
            self.assertEqual(f.read().split(), ["record", "--json", "--store", "S", "-"])
        with open(os.path.join(self.tmp, "stdin"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertEqual([json.loads(line) for line in lines], [self.m.to_timings("lab")])

    def test_binary_from_the_environment(self):
        binary = fake_mlbench(self.tmp, "cat >/dev/null; echo '[{\"id\": \"env\"}]'\n")
        old = os.environ.get("MLBENCH")
        os.environ["MLBENCH"] = binary
        try:
            self.assertEqual(self.m.record(), "env")
        finally:
            if old is None:
                del os.environ["MLBENCH"]
            else:
                os.environ["MLBENCH"] = old

    def test_errors(self):
        with self.assertRaises(mlbench_marker.MlbenchNotFoundError) as cm:
            self.m.record(mlbench=os.path.join(self.tmp, "nonexistent"))
        self.assertIn("nonexistent", str(cm.exception))
        binary = fake_mlbench(self.tmp, """
            cat >/dev/null
            echo "mlbench: error: record: document 1: number is 0" >&2
            exit 2
        """)
        with self.assertRaises(mlbench_marker.MlbenchError) as cm:
            self.m.record(mlbench=binary)
        self.assertIn("number is 0", str(cm.exception))
        self.assertIn("exit status 2", str(cm.exception))

    def test_real_mlbench(self):
        binary, why = support.mlbench_binary()
        if binary is None:
            self.skipTest(why)
        store = os.path.join(self.tmp, "store")
        m = Timer(busy).blocked_autorange(min_run_time=0.02)
        result_id = m.record(label="busy-label", store=store, mlbench=binary)
        proc = support.run([binary, "history", "--json", "--store", store])
        results = json.loads(proc.stdout)["results"]
        self.assertEqual([(r["id"], r["label"]) for r in results], [(result_id, "busy-label")])
        self.assertEqual(results[0]["runs_measured"], m.blocks)
        # the stored median is the median per call
        self.assertAlmostEqual(results[0]["wall_ns"]["median"], m.median * 1e9,
                               delta=m.median * 1e9 * 0.01 + 1)
        not_a_folder = os.path.join(self.tmp, "file")
        open(not_a_folder, "w").close()
        with self.assertRaises(mlbench_marker.MlbenchError) as cm:
            m.record(store=os.path.join(not_a_folder, "store"), mlbench=binary)
        self.assertIn(not_a_folder, str(cm.exception))  # mlbench's message names the store
        self.assertIn("exit status", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

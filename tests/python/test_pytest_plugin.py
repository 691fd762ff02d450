"""Tests of the pytest plugin (python/mlbench_marker/pytest_plugin.py).

Each test writes small test files into a temporary folder and runs pytest on them in a child
process (`python -m pytest -p mlbench_marker.pytest_plugin`, PYTHONPATH=python, entry-point
plugins off), with an interpreter that has pytest (this one, else /usr/bin/python3; skipped
when none has it). Storing and comparing use the real binary ($MLBENCH, set by
python/CMakeLists.txt; skipped without it). No timing is asserted beyond what cannot fail: a
benchmarked function sleeps a known time, so its median is at least that; the regression case
is a deliberate 3x slowdown. (Sleeping rather than busy-waiting: on a loaded machine a busy
loop is preempted and its calls stretch to the scheduler's time slices, while a sleeper is
woken on time.)
Run: MLBENCH=build/mlbench python3 -m unittest -v test_pytest_plugin (in tests/python)
"""

import json
import os
import tempfile
import textwrap
import unittest

import support

BENCH_FILE = """
    import os, time
    import pytest

    SLOWDOWN = float(os.environ.get("MLBENCH_TEST_SLOWDOWN", "1"))


    def nap(seconds):
        time.sleep(seconds)
        return seconds


    def test_fast(mlbench):
        assert mlbench(nap, 0.004 * SLOWDOWN) == 0.004 * SLOWDOWN


    @pytest.mark.mlbench(name="slow_one", min_run_time=0.08)
    def test_slow(mlbench):
        assert mlbench(nap, 0.008) == 0.008


    def test_plain():
        pass
"""

NEW_FILE = """
    def test_new(mlbench):
        assert mlbench(sum, range(100)) == 4950
"""


class PluginTest(unittest.TestCase):
    def setUp(self):
        self.python = support.pytest_python()
        if self.python is None:
            self.skipTest(support.NO_PYTEST)
        self._tmp = tempfile.TemporaryDirectory(prefix="mlbench-plugin-test-")
        self.tmp = self._tmp.name
        self.store = os.path.join(self.tmp, "store")
        self.write("test_bench.py", BENCH_FILE)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.tmp, name), "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))

    def binary(self):
        binary, why = support.mlbench_binary()
        if binary is None:
            self.skipTest(why)
        return binary

    def pytest(self, *args, binary=None, **env):
        """Runs pytest on the temporary folder's files; returns (exit status, output)."""
        argv = [self.python, "-m", "pytest", "-p", "mlbench_marker.pytest_plugin",
                "-p", "no:cacheprovider", "-q", "--mlbench-min-time", "0.1", *args]
        env = support.child_env(PYTHONPATH=support.PYTHON_DIR,
                                PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", MLBENCH=binary, **env)
        proc = support.run(argv, cwd=self.tmp, env=env, check=False)
        return proc.returncode, proc.stdout + proc.stderr

    def history(self, binary):
        proc = support.run([binary, "history", "--json", "--store", self.store])
        return json.loads(proc.stdout)["results"]

    def summary_row(self, output, test):
        """The row of the summary table naming test (test id first)."""
        rows = [line for line in output.splitlines() if line.startswith(test + " ")]
        self.assertTrue(rows, f"no row for {test} in:\n{output}")
        return rows[0]

    def test_store_then_compare(self):
        binary = self.binary()
        # 1: the baseline
        status, out = self.pytest("test_bench.py", "--mlbench-store", self.store,
                                  binary=binary)
        self.assertEqual(status, 0, out)
        self.assertIn("3 passed", out)
        self.assertIn("mlbench: time per call", out)
        for test in ("test_bench.py::test_fast", "test_bench.py::test_slow"):
            self.assertRegex(self.summary_row(out, test),
                             r" [0-9.]+ (ns|µs|ms|s) +[0-9.]+ \.\. [0-9.]+ (ns|µs|ms|s) +"
                             r"[0-9]+ x [0-9]+$")
        self.assertNotIn("test_plain", out.split("mlbench: time per call")[1])
        self.assertIn("stored 2 results", out)
        results = self.history(binary)
        self.assertEqual(sorted(r["label"] for r in results),
                         ["test_bench.py::test_fast", "test_bench.py::test_slow"])
        by_label = {r["label"]: r for r in results}
        # each call sleeps its cost: the median per call cannot be below it
        self.assertGreaterEqual(by_label["test_bench.py::test_fast"]["wall_ns"]["median"],
                                0.004e9)
        self.assertGreaterEqual(by_label["test_bench.py::test_slow"]["wall_ns"]["median"],
                                0.008e9)
        self.assertGreaterEqual(by_label["test_bench.py::test_slow"]["runs_measured"], 6)

        # 2: test_fast made 3x slower: the gate fails and names it
        status, out = self.pytest("test_bench.py", "--mlbench-store", self.store,
                                  "--mlbench-compare", self.store,
                                  "--mlbench-fail-if-slower", "20", binary=binary,
                                  MLBENCH_TEST_SLOWDOWN="3")
        self.assertEqual(status, 1, out)
        self.assertIn("3 passed", out)
        self.assertIn(f"compared with {self.store}", out)
        self.assertRegex(self.summary_row(out.split("compared with")[1],
                                          "test_bench.py::test_fast"), r" slower +\+[0-9.]+ %")
        errors = [line for line in out.splitlines() if line.startswith("mlbench: error:")]
        self.assertEqual(len(errors), 1, out)
        self.assertIn("significantly slower than the baseline by more than 20 %", errors[0])
        self.assertIn("test_bench.py::test_fast (+", errors[0])
        self.assertEqual(len(self.history(binary)), 4)  # stored all the same

        # 3: compared without storing, with a new test that has no baseline; the gate at 500 %
        self.write("test_new.py", NEW_FILE)
        status, out = self.pytest("test_bench.py", "test_new.py", "--mlbench-no-store",
                                  "--mlbench-compare", self.store,
                                  "--mlbench-fail-if-slower", "500", binary=binary)
        self.assertEqual(status, 0, out)
        compared = out.split("compared with")[1]
        self.assertIn("no baseline", self.summary_row(compared, "test_new.py::test_new"))
        for test in ("test_bench.py::test_fast", "test_bench.py::test_slow"):
            verdict = self.summary_row(compared, test).split()[1]
            # issue 35: "inconclusive" where the blocks cannot tell, "unchanged" (compare's
            # "no change") where they show any change is under the minimum effect
            self.assertIn(verdict, ("faster", "slower", "unchanged", "inconclusive",
                                    "unreliable"), out)
        self.assertNotIn("stored", out)
        self.assertEqual(len(self.history(binary)), 4)

    def test_missing_binary_warns_and_compare_is_an_error(self):
        path = os.path.dirname(os.path.abspath(self.python))  # no mlbench there
        if os.path.exists(os.path.join(path, "mlbench")):
            self.skipTest(f"{path} holds an mlbench")
        status, out = self.pytest("test_bench.py", PATH=path)
        self.assertEqual(status, 0, out)
        self.assertIn("test_bench.py::test_fast", out)
        self.assertIn("mlbench: warning: results not stored: no mlbench binary", out)

        status, out = self.pytest("test_bench.py", "--mlbench-compare", self.store, PATH=path)
        self.assertNotEqual(status, 0, out)
        self.assertIn("--mlbench-compare needs the mlbench binary", out)
        status, out = self.pytest("test_bench.py", "--mlbench-binary",
                                  os.path.join(self.tmp, "nonexistent"), PATH=path)
        self.assertIn("nonexistent", out)
        self.assertIn("results not stored", out)

    def test_disable_calls_once_untimed(self):
        self.write("test_once.py", """
            calls = []

            def f(x):
                calls.append(x)
                return x * 2

            def test_once(mlbench):
                assert mlbench(f, 21) == 42
                assert calls == [21]
        """)
        status, out = self.pytest("test_once.py", "--mlbench-disable", "--mlbench-store",
                                  self.store)
        self.assertEqual(status, 0, out)
        self.assertIn("mlbench: disabled (--mlbench-disable): 1 benchmark ran once", out)
        self.assertNotIn("time per call", out)
        self.assertFalse(os.path.exists(self.store))

    def test_fixture_twice_is_an_error(self):
        self.write("test_twice.py", """
            def test_twice(mlbench):
                mlbench(sum, [1])
                mlbench(sum, [2])
        """)
        status, out = self.pytest("test_twice.py", "--mlbench-no-store")
        self.assertEqual(status, 1, out)
        self.assertIn("1 failed", out)
        self.assertIn("the mlbench fixture was called twice in test_twice.py::test_twice", out)
        self.assertIn("(failed)", self.summary_row(out, "test_twice.py::test_twice"))
        self.assertNotIn("not stored", out)  # --mlbench-no-store: nothing to warn about

    def test_bad_options(self):
        status, out = self.pytest("test_bench.py", "--mlbench-fail-if-slower", "10")
        self.assertEqual(status, 4, out)  # pytest's usage error
        self.assertIn("--mlbench-fail-if-slower needs --mlbench-compare", out)
        self.write("test_marker.py", """
            import pytest

            @pytest.mark.mlbench(rounds=3)
            def test_bad_marker(mlbench):
                mlbench(sum, [1])
        """)
        status, out = self.pytest("test_marker.py", "--mlbench-no-store")
        self.assertEqual(status, 1, out)
        self.assertIn("@pytest.mark.mlbench takes only the keywords", out)


if __name__ == "__main__":
    unittest.main()

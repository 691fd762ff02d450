"""mlbench_marker.pytest_plugin: benchmarks inside a pytest suite, stored and compared by mlbench.

Loaded by the entry point pytest11 `mlbench` once the package is installed (`pip install
./python`), or with `pytest -p mlbench_marker.pytest_plugin` from a source tree. docs/python.md.

    def test_sort(mlbench):
        result = mlbench(sorted, data)      # Timer(sorted, data).blocked_autorange()
        assert result == sorted(data)       # fn's return value

    @pytest.mark.mlbench(min_run_time=1.0, name="sort_big")
    def test_sort_big(mlbench): ...

At the end of the session: a table (median per call, 95 % CI, blocks x calls), then the
results go into mlbench's store, labelled with the test id, in one `mlbench record --json`;
`--mlbench-compare REF` compares each test with its newest result in REF from before the
session (`mlbench compare`), and `--mlbench-fail-if-slower PCT` fails the session when one is
significantly slower by more than PCT %.
"""

import functools
import json
import os
import shutil
import tempfile

import pytest

from . import Timer, _FORBIDDEN
from .timer import format_times
from ._cli import MlbenchError, MlbenchNotFoundError, find_mlbench, record_timings, run_mlbench

_PLUGIN_NAME = "mlbench-session"
_MARKER_KEYS = ("min_run_time", "name", "warmup")
DEFAULT_MIN_RUN_TIME = 0.2  # seconds of measured blocks per test (Timer.blocked_autorange's)
_VERDICTS = {"no change": "unchanged", "no significant change": "unchanged"}
_MAX_NAME_BYTES = 200  # the longest name `mlbench record` stores


def pytest_addoption(parser):
    group = parser.getgroup("mlbench", "benchmarks timed in-process (the mlbench fixture)")
    group.addoption("--mlbench-min-time", type=float, metavar="SEC", default=None,
                    help="seconds of measured blocks per benchmark (default 0.2; "
                         "@pytest.mark.mlbench(min_run_time=...) wins)")
    group.addoption("--mlbench-disable", action="store_true",
                    help="call each benchmarked function once, untimed (a quick test run)")
    group.addoption("--mlbench-store", metavar="DIR|URI", default=None,
                    help="result store the results go to (default: mlbench's, .mlbench or "
                         "$MLBENCH_STORE)")
    group.addoption("--mlbench-no-store", action="store_true",
                    help="do not store the results")
    group.addoption("--mlbench-binary", metavar="PATH", default=None,
                    help="the mlbench binary (default: $MLBENCH, else mlbench on PATH)")
    group.addoption("--mlbench-compare", metavar="REF", default=None,
                    help="compare each test with its newest result in this store (directory "
                         "or postgresql://...) from before this session")
    group.addoption("--mlbench-fail-if-slower", type=float, metavar="PCT", default=None,
                    help="with --mlbench-compare: fail the session when a test is "
                         "significantly slower by more than PCT percent")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "mlbench(min_run_time=None, name=None, warmup=None): tune the mlbench "
                   "fixture's measurement of this test (Timer.blocked_autorange)")
    config.pluginmanager.register(_Session(config), _PLUGIN_NAME)


@pytest.fixture
def mlbench(request):
    """Benchmarks one call: `mlbench(fn, *args, **kwargs)` times fn(*args, **kwargs) with
    Timer.blocked_autorange and returns fn's return value. Once per test."""
    session = request.config.pluginmanager.get_plugin(_PLUGIN_NAME)
    return _Fixture(request.node, session)


class _Fixture:
    """The callable the mlbench fixture gives a test."""

    def __init__(self, item, session):
        self.item = item
        self.session = session
        self.called = False

    def __call__(self, fn, *args, **kwargs):
        """Times fn(*args, **kwargs); returns what fn returns (from a call before the timing,
        which also warms it up)."""
        if self.called:
            pytest.fail(f"the mlbench fixture was called twice in {self.item.nodeid}: it "
                        "times one call per test; split the test, or use "
                        "mlbench_marker.Timer directly", pytrace=False)
        self.called = True
        options = self._marker_options()
        result = fn(*args, **kwargs)
        if self.session.disabled:
            self.session.untimed += 1
            return result
        name = options.get("name") or _stage_name(self.item.name)
        if "name" in kwargs or "sync" in kwargs:  # they are Timer's own keywords
            fn, args, kwargs = functools.partial(fn, *args, **kwargs), (), {}
        timer = Timer(fn, *args, name=name, **kwargs)
        m = timer.blocked_autorange(
            min_run_time=options.get("min_run_time", self.session.min_run_time),
            warmup=options.get("warmup", 1))
        m.command = ["pytest", self.item.nodeid]
        self.session.measurements[self.item.nodeid] = m
        return result

    def _marker_options(self):
        marker = self.item.get_closest_marker("mlbench")
        if marker is None:
            return {}
        unknown = sorted(set(marker.kwargs) - set(_MARKER_KEYS))
        if marker.args or unknown:
            pytest.fail(f"@pytest.mark.mlbench takes only the keywords "
                        f"{', '.join(_MARKER_KEYS)}, not {marker.args or unknown}",
                        pytrace=False)
        return dict(marker.kwargs)


class _Session:
    """The session's options, its measurements and, at its end, storing and comparing."""

    def __init__(self, config):
        opt = config.option
        self.config = config
        self.disabled = opt.mlbench_disable
        self.min_run_time = opt.mlbench_min_time or DEFAULT_MIN_RUN_TIME
        self.store = opt.mlbench_store
        self.no_store = opt.mlbench_no_store
        self.compare_ref = opt.mlbench_compare
        self.fail_if_slower = opt.mlbench_fail_if_slower
        self.measurements = {}  # test id -> Measurement, in the order the tests ran
        self.failed = set()     # ids of tests that failed: their timings are not kept
        self.baseline_ids = {}  # label -> id of its newest result in compare_ref
        self.comparisons = []   # (test id, verdict, change %, ratio low, high) or (id, note)
        self.stored = None      # what record answered
        self.notes = []         # warnings for the summary
        self.errors = []        # reasons the session fails
        self.binary = None
        self.binary_error = None
        self.untimed = 0        # benchmarks called once under --mlbench-disable
        if opt.mlbench_min_time is not None and not opt.mlbench_min_time > 0:
            raise pytest.UsageError(f"--mlbench-min-time must be > 0 seconds, not "
                                    f"{opt.mlbench_min_time}")
        if self.fail_if_slower is not None and self.compare_ref is None:
            raise pytest.UsageError("--mlbench-fail-if-slower needs --mlbench-compare REF: the "
                                    "store holding the baseline")
        if self.fail_if_slower is not None and not self.fail_if_slower >= 0:
            raise pytest.UsageError(f"--mlbench-fail-if-slower must be >= 0 percent, not "
                                    f"{self.fail_if_slower}")
        if self.disabled:
            return
        try:
            self.binary = find_mlbench(opt.mlbench_binary)
        except MlbenchNotFoundError as err:
            if self.compare_ref is not None:
                raise pytest.UsageError(f"--mlbench-compare needs the mlbench binary: {err}")
            self.binary_error = str(err)

    # ---- hooks ----

    def pytest_sessionstart(self, session):
        """The baselines are the results in REF from before this session: listed now."""
        if self.compare_ref is None or self.disabled:
            return
        try:
            self.baseline_ids = _newest_by_label(self.binary, self.compare_ref)
        except (MlbenchError, ValueError) as err:  # ValueError: history printed no JSON
            self.errors.append(f"cannot read the baselines in {self.compare_ref}: {err}")

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus):
        """Stores and compares before the terminal summary is written (it runs inside this
        hook); a failed gate or comparison turns a passing session's exit status into 1."""
        asked = not self.no_store or self.compare_ref is not None
        results = [(test, m) for test, m in self.measurements.items() if test not in self.failed]
        if self.disabled or not asked or not results:
            pass
        elif self.binary is None:
            self.notes.append(f"results not stored: {self.binary_error}")
        else:
            self._store_and_compare(results)
        if self.errors and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        if self.disabled:
            if self.untimed:
                tr.write_sep("-", f"mlbench: disabled (--mlbench-disable): {self.untimed} "
                                  f"benchmark{'s' if self.untimed != 1 else ''} ran once, "
                                  "untimed")
            return
        if not (self.measurements or self.notes or self.errors):
            return
        tr.write_sep("=", "mlbench: time per call (median of blocks)")
        rows = [("test", "median", "95% CI", "blocks x calls")]
        for test, m in self.measurements.items():
            median, low, high = format_times([m.median, *m.ci])
            rows.append((test + (" (failed)" if test in self.failed else ""), median,
                         f"{low.split()[0]} .. {high}", f"{m.blocks} x {m.number}"))
        if len(rows) > 1:
            _write_table(tr, rows)
        if self.failed & set(self.measurements):
            tr.write_line("failed tests are neither stored nor compared")
        if self.comparisons:
            tr.write_line("")
            tr.write_line(f"compared with {self.compare_ref} (newest result of each test from "
                          "before this session):")
            rows = [("test", "verdict", "change", "ratio 95% CI")]
            for row in self.comparisons:
                if len(row) == 2:
                    rows.append((row[0], row[1], "", ""))
                else:
                    test, verdict, change, low, high = row
                    rows.append((test, verdict, _pct(change), _interval(low, high)))
            _write_table(tr, rows)
        if self.stored is not None:
            where = self.store or "mlbench's default store"
            tr.write_line(f"stored {len(self.stored)} result{'s' if len(self.stored) != 1 else ''}"
                          f" in {where}, labelled with the test ids (mlbench history"
                          f"{' --store ' + self.store if self.store else ''})")
        for note in self.notes:
            tr.write_line(f"mlbench: warning: {note}", yellow=True)
        for error in self.errors:
            tr.write_line(f"mlbench: error: {error}", red=True, bold=True)

    # ---- storing and comparing ----

    def _store_and_compare(self, results):
        docs = [m.to_timings(label=test) for test, m in results]
        scratch = tempfile.mkdtemp(prefix="mlbench-pytest-")
        try:
            store = self.store
            if self.no_store:
                store = os.path.join(scratch, "store")  # the candidates, for compare only
            try:
                stored = record_timings(docs, store=store, binary=self.binary)
            except MlbenchError as err:
                (self.errors if self.compare_ref else self.notes).append(
                    f"results not {'recorded' if self.no_store else 'stored'}: {err}")
                return
            if not self.no_store:
                self.stored = stored
            if self.compare_ref is not None:
                self._compare(results, stored, store, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _result_file(self, entry, store, scratch):
        """A local file holding a stored result: its path when it is one (a directory store),
        else what `mlbench show ID --json` prints (a PostgreSQL store)."""
        path = entry.get("path")
        if isinstance(path, str) and os.path.isfile(path):
            return path
        return _show_to_file(self.binary, entry["id"], store, scratch)

    def _compare(self, results, stored, store, scratch):
        slower, undecided = [], []
        for (test, _), entry in zip(results, stored):
            base_id = self.baseline_ids.get(test)
            if base_id is None:
                self.comparisons.append((test, "no baseline"))
                continue
            try:
                base = _show_to_file(self.binary, base_id, self.compare_ref, scratch)
                new = self._result_file(entry, store, scratch)
                args = ["compare", "--json"]
                if self.fail_if_slower is not None:
                    args += ["--fail-if-slower", repr(self.fail_if_slower)]
                proc = run_mlbench(self.binary, args + [base, new], ok=(0, 1, 4))
                total = json.loads(proc.stdout)["candidates"][0]["stages"][-1]
            except (MlbenchError, ValueError, KeyError, IndexError) as err:
                self.errors.append(f"{test}: comparison failed: {err}")
                continue
            verdict = _VERDICTS.get(total.get("verdict"), total.get("verdict"))
            self.comparisons.append((test, verdict, total.get("change_pct"),
                                     total.get("ratio_ci_low"), total.get("ratio_ci_high")))
            if proc.returncode == 1:
                slower.append(f"{test} ({_pct(total.get('change_pct'))})")
            elif proc.returncode == 4:  # the gate could not decide (docs/compare.md#ci-gates)
                undecided.append(f"{test} ({_pct(total.get('change_pct'))})")
        if slower:
            self.errors.append(
                f"{len(slower)} test{'s' if len(slower) != 1 else ''} significantly slower than "
                f"the baseline by more than {self.fail_if_slower:g} % "
                f"(--mlbench-fail-if-slower): {', '.join(slower)}")
        if undecided:
            self.errors.append(
                f"{len(undecided)} test{'s' if len(undecided) != 1 else ''} could not be "
                f"decided: a slowdown beyond {self.fail_if_slower:g} % fits their blocks and "
                f"none is shown (more blocks: --mlbench-min-time): {', '.join(undecided)}")


def _stage_name(test_name):
    """The Timer name of a test: its name (with parameters) as a valid stage name, white space
    and control characters made '_', cut to the 200 bytes `mlbench record` takes."""
    name = "".join("_" if c in _FORBIDDEN else c for c in test_name)
    return name.encode("utf-8")[:_MAX_NAME_BYTES].decode("utf-8", "ignore")


def _newest_by_label(binary, store):
    """{label: id of its newest result} of a store (`mlbench history --json`); {} when the
    store is a directory that does not exist yet."""
    if "://" not in store and not os.path.exists(store):
        return {}
    proc = run_mlbench(binary, ["history", "--json", "--store", store])
    newest = {}
    for result in json.loads(proc.stdout).get("results", []):  # oldest first
        if result.get("label") is not None:
            newest[result["label"]] = result["id"]
    return newest


def _show_to_file(binary, ref, store, scratch):
    """Writes the result ref of store (`mlbench show REF --json`) into a file in scratch;
    returns its path."""
    proc = run_mlbench(binary, ["show", ref, "--json", "--store", store])
    fd, path = tempfile.mkstemp(suffix=".json", dir=scratch)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(proc.stdout)
    return path


def _pct(value):
    return "" if value is None else f"{value:+.1f} %"


def _interval(low, high):
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _write_table(tr, rows):
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        tr.write_line("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())

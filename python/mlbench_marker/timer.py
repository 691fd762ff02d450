"""mlbench_marker.timer: time a Python function inside the process, with statistics.

In the spirit of torch.utils.benchmark.Timer.blocked_autorange and pytest-benchmark: the function
is called in *blocks* of `number` calls, each block timed as a whole with time.perf_counter_ns
(so the clock's cost and resolution are spread over many calls), and the statistics are over
blocks: the median time per call with a distribution-free 95 % confidence interval, IQR, mean,
standard deviation, min and max (docs/python.md).

    from mlbench_marker import Timer, bench

    m = Timer(sorted, data).blocked_autorange(min_run_time=0.5)
    print(m)                  # median per call, 95 % CI, blocks x calls
    m.record(label="sort")    # into mlbench's result store, through `mlbench record`

CUDA: GPU work is asynchronous; a clock stopped when the Python call returns measures the
kernel *launch*. When PyTorch is imported and has initialised CUDA (or sync=True), each block
is bracketed by torch.cuda.synchronize(), before its clock starts and before it stops. torch is
never imported here.

Under mlbench (`mlbench run -- python script.py`): each measured block is a span of stage
`name` with the counter `<name>.calls` (calls in the block) sent inside it, so mlbench's summary
shows the stage's time and its calls/s; calibration and warm-up are one span of stage
`<name>.warmup`. Standalone nothing is sent.
"""

import itertools
import math
import sys
import time

from . import __version__, _FORBIDDEN, _check_name, begin, counter, enabled, end
from ._cli import record_timings

__all__ = ["Timer", "Measurement", "bench"]

CI_LEVEL = 0.95      # the confidence interval of the median: at least this coverage
MIN_BLOCKS = 6       # the fewest blocks whose order statistics give a 95 % interval of the median
BLOCKS_WANTED = 10   # blocked_autorange sizes a block to a tenth of min_run_time


def _block_sizes():
    """1, 2, 5, 10, 20, 50, ...: the numbers of calls autorange tries (as timeit does)."""
    for scale in itertools.count():
        for step in (1, 2, 5):
            yield step * 10 ** scale


def _default_name(fn):
    """A stage name from fn: its __qualname__ (that of the function a functools.partial
    wraps), with white space and control characters made '_'."""
    target = getattr(fn, "func", fn)  # functools.partial
    name = (getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
            or type(target).__qualname__)
    name = "".join("_" if c in _FORBIDDEN else c for c in str(name))
    return name or "fn"


def _command():
    """The command line of this process, as the result's command."""
    argv = getattr(sys, "orig_argv", None)  # Python 3.10+
    if argv:
        return list(argv)
    return [sys.executable or "python", *sys.argv]


class Timer:
    """Times fn(*args, **kwargs) in blocks of calls.

    name: the stage name under mlbench and the result's name (default: fn's __qualname__).
    sync: True always calls torch.cuda.synchronize() around each block, False never; None
    (default) does when the script has imported torch and CUDA is available and initialised.
    The keywords name and sync are the Timer's; any other goes to fn (wrap fn with
    functools.partial or a lambda for a function that takes `name` or `sync`).
    """

    def __init__(self, fn, *args, name=None, sync=None, **kwargs):
        if not callable(fn):
            raise TypeError(f"mlbench_marker.Timer: fn must be callable, not "
                            f"{type(fn).__name__}")
        if sync not in (None, True, False):
            raise TypeError(f"mlbench_marker.Timer: sync must be None, True or False, not "
                            f"{sync!r}")
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.name = _default_name(fn) if name is None else name
        # checked whether or not mlbench is listening, as the marker calls are
        _check_name(self.name, "Timer name")
        _check_name(self.name + ".warmup", "Timer name")
        self.sync = sync
        self._synced = False  # torch.cuda found ready once: it stays so

    # ---- one block ----

    def _cuda(self):
        """torch.cuda when this block is to be synchronised, else None. Never imports torch."""
        if self.sync is False:
            return None
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        if self.sync is True:
            if cuda is None or not hasattr(cuda, "synchronize"):
                raise RuntimeError("mlbench_marker.Timer: sync=True needs PyTorch imported by "
                                   "the script (torch.cuda.synchronize); torch is not in "
                                   "sys.modules: import it first, or leave sync=None")
            return cuda
        if not self._synced:
            try:
                self._synced = bool(cuda is not None and cuda.is_available()
                                    and cuda.is_initialized())
            except Exception:  # a torch in an odd state: time without synchronising
                return None
        return cuda if self._synced else None

    def _block(self, number):
        """Runs fn number times; returns (wall ns, CPU ns of the process, synchronised)."""
        fn, args, kwargs = self.fn, self.args, self.kwargs
        cuda = self._cuda()
        calls = itertools.repeat(None, number)
        cpu0 = time.process_time_ns()
        if cuda is not None:
            cuda.synchronize()
        t0 = time.perf_counter_ns()
        if args or kwargs:
            for _ in calls:
                fn(*args, **kwargs)
        else:
            for _ in calls:
                fn()
        if cuda is not None:
            cuda.synchronize()
        t1 = time.perf_counter_ns()
        cpu1 = time.process_time_ns()
        return t1 - t0, cpu1 - cpu0, cuda is not None

    def _marked_block(self, number, marked):
        """One measured block, marked as a span of stage name with its calls counted inside
        when marked. Returns what _block returns."""
        if not marked:
            return self._block(number)
        begin(self.name)
        try:
            result = self._block(number)
            counter(self.name + ".calls", number)
        finally:
            end(self.name)
        return result

    def _calibrate(self, threshold, marked):
        """Blocks of 1, 2, 5, 10, ... calls until one lasts >= threshold seconds; returns the
        [(number, wall ns, cpu ns, synchronised)] of every block tried, the last the chosen."""
        if not threshold > 0:
            raise ValueError(f"mlbench_marker.Timer: threshold must be > 0 s, not {threshold!r}")
        tried = []
        for number in _block_sizes():
            tried.append((number, *self._marked_block(number, marked)))
            if tried[-1][1] >= threshold * 1e9:
                return tried

    # ---- measurements ----

    def timeit(self, number=1000000):
        """Times one block of `number` calls; returns a Measurement of that one block."""
        if not isinstance(number, int) or number < 1:
            raise ValueError(f"mlbench_marker.Timer: number must be an integer >= 1, not "
                             f"{number!r}")
        started = time.time_ns()
        wall, cpu, synced = self._marked_block(number, enabled())
        return Measurement(self.name, number, [wall], cpu_ns=[cpu],
                           synchronized="cuda" if synced else "none", started_unix_ns=started)

    def autorange(self, threshold=0.2):
        """Calibrates the block: tries blocks of 1, 2, 5, 10, 20, 50, ... calls until one lasts
        at least `threshold` seconds. Returns a Measurement of that last block (its `number`
        is the one chosen); the blocks tried before it are in `calibration`. Under mlbench each
        block tried is a span of stage name."""
        started = time.time_ns()
        tried = self._calibrate(threshold, enabled())
        number, wall, cpu, synced = tried[-1]
        return Measurement(self.name, number, [wall], cpu_ns=[cpu],
                           synchronized="cuda" if synced else "none",
                           calibration=[(n, w) for n, w, _, _ in tried[:-1]],
                           started_unix_ns=started)

    def blocked_autorange(self, min_run_time=0.2, warmup=1, min_blocks=MIN_BLOCKS):
        """Calibrates a block to last about min_run_time / 10 (autorange), runs `warmup` more
        blocks of that size, then measures blocks until they add up to min_run_time seconds
        and there are at least min_blocks of them (6 by default: the fewest whose median has a
        95 % interval). Returns the Measurement; calibration and warm-up are kept apart from
        the measured blocks. Under mlbench, calibration and warm-up are one span of stage
        "<name>.warmup" and each measured block a span of stage name with the counter
        "<name>.calls"."""
        if not min_run_time > 0:
            raise ValueError(f"mlbench_marker.Timer: min_run_time must be > 0 s, not "
                             f"{min_run_time!r}")
        for what, value in (("warmup", warmup), ("min_blocks", min_blocks)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"mlbench_marker.Timer: {what} must be an integer >= 0, not "
                                 f"{value!r}")
        marked = enabled()
        started = time.time_ns()
        if marked:
            begin(self.name + ".warmup")
        try:
            tried = self._calibrate(min_run_time / BLOCKS_WANTED, False)
            number = tried[-1][0]
            warm = [self._block(number)[0] for _ in range(warmup)]
        finally:
            if marked:
                end(self.name + ".warmup")
        rounds, cpus, synced = [], [], False
        total = 0
        limit_ns = min_run_time * 1e9
        while total < limit_ns or len(rounds) < max(min_blocks, 1):
            wall, cpu, block_synced = self._marked_block(number, marked)
            rounds.append(wall)
            cpus.append(cpu)
            synced = synced or block_synced
            total += wall
        return Measurement(self.name, number, rounds, warmup_rounds_ns=warm, cpu_ns=cpus,
                           synchronized="cuda" if synced else "none",
                           calibration=[(n, w) for n, w, _, _ in tried],
                           started_unix_ns=started)


# ---- statistics ----------------------------------------------------------------------------

def _quantile(ordered, q):
    """The q-quantile of sorted values by linear interpolation between order statistics
    (statistics.quantiles' 'inclusive' method, NumPy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def median_ci_ranks(n, level=CI_LEVEL):
    """The order statistics bounding a confidence interval of the median of n values:
    returns (j, coverage), the interval being [x_(j), x_(n-j+1)] (1-based ranks of the sorted
    values). Distribution-free: the number of values below the true median is
    Binomial(n, 1/2), so the interval covers it with probability 1 - 2 P(B <= j - 1); j is the
    largest rank whose coverage is still >= level, from exact integer binomial sums. With too
    few values (n < 6 for 95 %) it is [min, max] with its lower coverage 1 - 2 * 0.5**n (0 for
    n = 1). The same method as mlbench's own summaries (docs/statistics.md)."""
    if n < 1:
        raise ValueError("median_ci_ranks: no values")
    total = 2 ** n
    j, tail, term = 1, 1, n  # tail = 2**n P(B <= j - 1); term = C(n, j)
    while j + 1 <= (n + 1) // 2:
        wider = tail + term  # 2**n P(B <= j): the tail of rank j + 1
        if 1 - 2 * wider / total < level:  # int / int: correctly rounded for any n
            break
        tail = wider
        j += 1
        term = term * (n - j + 1) // j
    return j, 1 - 2 * tail / total


class Measurement:
    """The result of a Timer: the block times and their statistics, times per call in seconds.

    Attributes: name, number (calls per block), rounds_ns (each measured block's total, ns),
    warmup_rounds_ns (warm-up blocks, kept apart, not in any statistic), cpu_ns (process CPU
    time of each measured block, or None), synchronized ("cuda" or "none"), calibration
    ([(number, ns)] of the blocks autorange tried), started_unix_ns, command (argv recorded
    with the result), metadata (dict of str recorded with it).
    """

    def __init__(self, name, number, rounds_ns, warmup_rounds_ns=(), cpu_ns=None,
                 synchronized="none", calibration=(), started_unix_ns=None, command=None,
                 metadata=None):
        if not rounds_ns:
            raise ValueError("Measurement: no measured block")
        self.name = name
        self.number = int(number)
        self.rounds_ns = [int(x) for x in rounds_ns]
        self.warmup_rounds_ns = [int(x) for x in warmup_rounds_ns]
        self.cpu_ns = None if cpu_ns is None else [int(x) for x in cpu_ns]
        self.synchronized = synchronized
        self.calibration = list(calibration)
        self.started_unix_ns = time.time_ns() if started_unix_ns is None else started_unix_ns
        self.command = _command() if command is None else list(command)
        self.metadata = {"python": sys.version.split()[0]} if metadata is None else metadata
        self._sorted = sorted(self.times)
        self._ranks = None  # median_ci_ranks(blocks), when first asked for

    @property
    def times(self):
        """Per-call time of each measured block, in seconds (list of float)."""
        return [ns / self.number / 1e9 for ns in self.rounds_ns]

    @property
    def warmup_times(self):
        """Per-call time of each warm-up block, in seconds (list of float)."""
        return [ns / self.number / 1e9 for ns in self.warmup_rounds_ns]

    @property
    def blocks(self):
        """Number of measured blocks (int)."""
        return len(self.rounds_ns)

    @property
    def total_time(self):
        """Seconds the measured blocks took together (float)."""
        return sum(self.rounds_ns) / 1e9

    @property
    def median(self):
        """Median time per call over the blocks, in seconds (float)."""
        return _quantile(self._sorted, 0.5)

    @property
    def mean(self):
        """Mean time per call over the blocks, in seconds (float)."""
        return math.fsum(self._sorted) / len(self._sorted)

    @property
    def stddev(self):
        """Sample standard deviation (n - 1) of the blocks' time per call, in seconds; 0.0 for
        one block."""
        n = len(self._sorted)
        if n < 2:
            return 0.0
        mean = self.mean
        return math.sqrt(math.fsum((x - mean) ** 2 for x in self._sorted) / (n - 1))

    @property
    def iqr(self):
        """Interquartile range of the blocks' time per call (Q3 - Q1, linear interpolation),
        in seconds."""
        return _quantile(self._sorted, 0.75) - _quantile(self._sorted, 0.25)

    @property
    def min(self):
        """Fastest block's time per call, in seconds."""
        return self._sorted[0]

    @property
    def max(self):
        """Slowest block's time per call, in seconds."""
        return self._sorted[-1]

    @property
    def ci(self):
        """(low, high): the confidence interval of the median per call, in seconds, from order
        statistics (median_ci_ranks): at least 95 % coverage from 6 blocks on, [min, max]
        with less below that (ci_level says how much)."""
        j, _ = self._ci_ranks()
        return self._sorted[j - 1], self._sorted[len(self._sorted) - j]

    @property
    def ci_level(self):
        """The exact coverage of ci (float in 0..1), e.g. 0.9785 for 10 blocks."""
        return self._ci_ranks()[1]

    def _ci_ranks(self):
        if self._ranks is None:
            self._ranks = median_ci_ranks(len(self._sorted))
        return self._ranks

    def __repr__(self):
        return (f"<Measurement {self.name!r}: median {format_times([self.median])[0]} per call, "
                f"{self.blocks} x {self.number}>")

    def __str__(self):
        """A readable summary: median per call with its interval, spread, blocks x calls."""
        low, high = self.ci
        median, low, high, iqr, mean, sd, fastest, slowest = format_times(
            [self.median, low, high, self.iqr, self.mean, self.stddev, self.min, self.max])
        lines = [f"{self.name}: {median} per call (median of {_plural(self.blocks, 'block')} "
                 f"x {_plural(self.number, 'call')})"]
        if self.blocks > 1:
            lines.append(f"  {self.ci_level * 100:.1f} % CI {low} .. {high}   IQR {iqr}   "
                         f"mean {mean} ± {sd}")
            lines.append(f"  min {fastest}   max {slowest}")
        notes = []
        if self.warmup_rounds_ns:
            notes.append(f"{_plural(len(self.warmup_rounds_ns), 'warm-up block')} not counted")
        if 1 < self.blocks < MIN_BLOCKS:
            notes.append(f"fewer than {MIN_BLOCKS} blocks: the interval is [min, max]")
        notes.append("CUDA synchronised" if self.synchronized == "cuda" else
                     "not synchronised with a GPU")
        lines.append("  " + "; ".join(notes))
        return "\n".join(lines)

    def to_timings(self, label=None):
        """Returns the mlbench.timings/1 document (a dict, JSON-ready) that `mlbench record`
        stores as a result: rounds_ns are the blocks' totals, number the calls per block."""
        doc = {"schema": "mlbench.timings/1", "name": self.name}
        if label is not None:
            doc["label"] = str(label)
        doc.update({
            "command": self.command,
            "timer": f"mlbench_marker.Timer {__version__}",
            "number": self.number,
            "rounds_ns": self.rounds_ns,
            "warmup_rounds_ns": self.warmup_rounds_ns,
        })
        if self.cpu_ns is not None:
            doc["cpu_ns"] = self.cpu_ns
        doc["synchronized"] = self.synchronized
        doc["metadata"] = dict(self.metadata)
        doc["started_unix_ns"] = self.started_unix_ns
        return doc

    def record(self, label=None, store=None, mlbench=None):
        """Stores this measurement as a result through `mlbench record`, labelled `label`,
        into `store` (a directory or postgresql:// URI; default: mlbench's, .mlbench or
        $MLBENCH_STORE). The binary: `mlbench` (a path), else $MLBENCH, else `mlbench` on
        PATH. Returns the stored result's id (str). Raises MlbenchNotFoundError when there is
        no binary, MlbenchError when record fails (with its message)."""
        stored = record_timings([self.to_timings(label)], store=store, binary=mlbench)
        return stored[0]["id"]


def _plural(count, noun):
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_times(seconds):
    """Returns the times (a list of seconds) as strings "1.234 ms", all in the unit and with
    the decimals that show the first with 4 significant digits (s, ms, µs or ns)."""
    first = abs(seconds[0])
    scale, unit = next(((s, u) for s, u in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))
                        if first >= s), (1e-9, "ns"))
    value = first / scale
    decimals = max(0, 3 - math.floor(math.log10(value))) if value > 0 and math.isfinite(
        value) else 0
    return [f"{x / scale:.{decimals}f} {unit}" for x in seconds]


def bench(fn, *args, name=None, sync=None, min_run_time=0.2, **kwargs):
    """Times fn(*args, **kwargs) with Timer(...).blocked_autorange(min_run_time) and returns
    the Measurement; prints its summary on stderr when not under mlbench (under mlbench the
    stage and its counter are the report)."""
    m = Timer(fn, *args, name=name, sync=sync, **kwargs).blocked_autorange(min_run_time)
    if not enabled():
        print(m, file=sys.stderr)
    return m

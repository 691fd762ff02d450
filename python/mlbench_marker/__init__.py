"""mlbench_marker: tell a running ``mlbench`` which stage of a Python workload is executing.

Pure-Python client of the mlbench marker protocol (standard library only). Each call sends one
datagram ``<kind> <t_ns> <pid> <tid> <name>[ <value>]`` to the Unix socket named by the
environment variable MLBENCH_MARKER_SOCKET; when it is unset every call is a cheap no-op.

    from mlbench_marker import stage, counter, meta

    meta("batch_size", 64)
    with stage("train"):
        ...
        counter("loss", loss)

Framework facts (docs/markers.md, "Framework facts"): the main process also sends, as metadata
under the prefix ``framework.``, the Python version and, for frameworks the script has already
imported (never imported here), their versions and settings: PyTorch's thread count and CUDA
availability, NumPy's version. ``dataloader(loader)`` adds a DataLoader's settings. mlbench's
advice reads them, so that it never recommends what is already set.

Thread-safe, and usable from forked or spawned child processes (PyTorch DataLoader workers):
each process connects its own socket on its first event. Errors while sending (mlbench gone)
are swallowed: a marker never stops the workload. Bad arguments raise ValueError or TypeError
whether or not mlbench is listening, so a workload that runs alone also runs under mlbench.
"""

import functools
import os
import socket
import sys
import threading
import time

__all__ = ["stage", "begin", "end", "counter", "meta", "instant", "enabled", "dataloader",
           "MAX_EVENT"]

MAX_EVENT = 4096  # largest datagram of the protocol, in bytes
_ENV = "MLBENCH_MARKER_SOCKET"

# Limits are checked against the longest possible "<kind> <t_ns> <pid> <tid> " prefix and the
# longest repr(float), so whether a call is accepted never depends on the pid, the clock, or
# whether mlbench is listening. (The C client checks the exact length of each event.)
_MAX_HEADER = 1 + 1 + 20 + 1 + 10 + 1 + 10 + 1
_MAX_NUMBER = len(repr(-2.2250738585072014e-308))
_MAX_NAME = MAX_EVENT - _MAX_HEADER - 1 - _MAX_NUMBER  # bytes of UTF-8

_FORBIDDEN = frozenset(chr(c) for c in list(range(0x21)) + [0x7F])  # white space, controls
_CONTROL = frozenset(chr(c) for c in list(range(0x20)) + [0x7F])

_state = None  # None: first call not made, False: disabled, True: enabled
_sock = None   # socket connected by process _pid
_pid = 0
_lock = threading.Lock()
_valid_names = set()  # names already checked; bounded so that generated names cannot grow it
_VALID_NAMES_MAX = 4096
_FACTS_EVERY_NS = 1_000_000_000  # framework facts are looked at again at most once a second
_facts_sent = {}   # framework.* key -> value last sent by this process
_facts_due = 0     # monotonic ns after which a stage begin looks at the facts again
_is_worker = False  # a forked child (DataLoader worker): its facts are not the workload's


def _show(value):
    """The offending value as quoted in an error message (truncated)."""
    text = repr(value)
    return text if len(text) <= 66 else text[:64] + "..."


def _check_name(name, what="name"):
    """Raises TypeError/ValueError unless name is a valid stage/counter name or metadata key."""
    if not isinstance(name, str):
        raise TypeError(f"mlbench_marker: {what} must be a str, not {type(name).__name__}")
    if not name:
        raise ValueError(f"mlbench_marker: invalid {what} '': it must not be empty")
    if not _FORBIDDEN.isdisjoint(name):
        raise ValueError(
            f"mlbench_marker: invalid {what} {_show(name)}: it contains white space or a "
            "control character; use a name like 'data_load'")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"mlbench_marker: invalid {what} {_show(name)}: it is not "
                         "encodable as UTF-8") from None
    if size > _MAX_NAME:
        raise ValueError(f"mlbench_marker: {what} {_show(name)} is {size} bytes long, more than "
                         f"{_MAX_NAME}: an event is at most {MAX_EVENT} bytes")
    if len(_valid_names) < _VALID_NAMES_MAX:
        _valid_names.add(name)


def _connect():
    """Connects this process's socket on its first event; returns whether events are sent."""
    global _state, _sock, _pid
    with _lock:
        pid = os.getpid()
        if _pid == pid or _state is False:
            return _state
        path = os.environ.get(_ENV)
        if not path:
            _state = False
            return False
        sock = None
        try:
            # Python sockets are close-on-exec: exec'd children connect by path themselves.
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.settimeout(None)  # blocking whatever socket.setdefaulttimeout() says: no loss
            sock.connect(path)
        except (OSError, ValueError) as err:
            if sock is not None:
                sock.close()
            try:
                print(f"mlbench-marker: cannot connect to {path}: "
                      f"{getattr(err, 'strerror', None) or err}; markers disabled",
                      file=sys.stderr)
            except Exception:  # no usable stderr: stay silent rather than fail the workload
                pass
            _state = False
            return False
        _sock = sock
        _state = True
        _pid = pid  # set last: another thread seeing _pid == getpid() finds _sock ready
        return True


# The launcher's variables naming a process's rank, the first holding a number counting
# (docs/markers.md, "Ranks"; the C client reads the same): (rank, world size, size required).
# torchrun's RANK counts only beside its WORLD_SIZE, and comes first: under srun or mpirun,
# torchrun's workers also see the outer launcher's variables, which number the agents.
_RANK_VARS = (("RANK", "WORLD_SIZE", True),
              ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", False),
              ("PMIX_RANK", "PMIX_SIZE", False),
              ("PMI_RANK", "PMI_SIZE", False),
              ("SLURM_PROCID", "SLURM_NTASKS", False))


def _env_number(name):
    text = os.environ.get(name, "")
    if text.isascii() and text.isdigit() and int(text) < 2**31 - 1:
        return int(text)
    return -1


def _rank():
    """The "RANK[ WORLD_SIZE]" value of this process's mlbench.rank event, or None."""
    for rank_var, size_var, needs_size in _RANK_VARS:
        rank, size = _env_number(rank_var), _env_number(size_var)
        if rank < 0 or (needs_size and size < 1):
            continue
        return f"{rank} {size}" if size >= 1 else str(rank)
    return None


def _emit(kind, name, tail):
    """Sends one event; tail is "" or " <value>". Never raises for send errors."""
    if _pid != os.getpid():
        if not _connect():
            return
        rank = _rank()  # first event of this process: its rank, then its facts go first
        if rank is not None:
            _emit("M", "mlbench.rank", " " + rank)
        _send_facts()
    data = f"{kind} {time.monotonic_ns()} {_pid} {threading.get_native_id()} {name}{tail}"
    try:
        _sock.send(data.encode("utf-8"))
    except OSError:  # mlbench gone or queue error: the event is lost, the workload goes on
        pass


def _require_name(name):
    """Checks name unless it passed before: the common case costs one set lookup."""
    try:
        if name in _valid_names:
            return
    except TypeError:  # unhashable: _check_name says what is wrong with it
        pass
    _check_name(name)


def _event(kind, name):
    """A B, E or I event: checked name, no value."""
    _require_name(name)
    if _state is not False:
        _emit(kind, name, "")


def _facts():
    """The framework facts of this process: framework.* key -> str. Reads only modules the
    script imported itself (sys.modules); never initialises CUDA."""
    facts = {"framework.python.version": sys.version.split()[0]}
    np = sys.modules.get("numpy")
    if np is not None and isinstance(getattr(np, "__version__", None), str):
        facts["framework.numpy.version"] = np.__version__
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "get_num_threads"):
        return facts
    facts["framework.torch.version"] = str(getattr(torch, "__version__", "unknown"))
    facts["framework.torch.num_threads"] = str(int(torch.get_num_threads()))
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and hasattr(cuda, "is_available"):
        available = bool(cuda.is_available())
        facts["framework.torch.cuda_available"] = "true" if available else "false"
        # The device's name needs a CUDA context: only when the script made one already.
        if available and getattr(cuda, "is_initialized", lambda: False)():
            facts["framework.torch.cuda_device"] = str(cuda.get_device_name(cuda.current_device()))
    return facts


def _send(facts):
    """Sends the facts that differ from those sent last (metadata: the last value counts)."""
    for key, value in facts.items():
        if _facts_sent.get(key) != value and _CONTROL.isdisjoint(value):
            _facts_sent[key] = value
            _emit("M", key, " " + value if value else "")


def _is_child_process():
    """A DataLoader worker or another multiprocessing child: its thread count (torch sets 1 in
    DataLoader workers) is not the workload's."""
    if _is_worker:
        return True
    mp = sys.modules.get("multiprocessing")
    parent = getattr(mp, "parent_process", None) if mp is not None else None
    try:
        return parent is not None and parent() is not None
    except Exception:  # an odd multiprocessing: count it as the main process
        return False


def _send_facts():
    """Sends this process's framework facts (main process only), then at most once a second on
    a stage begin, what changed. A failure to read them never reaches the workload."""
    global _facts_due
    _facts_due = time.monotonic_ns() + _FACTS_EVERY_NS
    if _is_child_process():
        return
    try:
        facts = _facts()
    except Exception:  # a framework in an odd state: no facts rather than a failed workload
        return
    _send(facts)


def _maybe_send_facts():
    if time.monotonic_ns() >= _facts_due and _pid == os.getpid():
        _send_facts()


def _after_fork_in_child():
    # The child must not share the parent's lock (it may have been held at fork time); its
    # socket is reconnected lazily, on the child's first event.
    global _sock, _pid, _lock, _is_worker
    _lock = threading.Lock()
    _is_worker = True
    if _sock is not None:
        try:
            _sock.close()
        except OSError:
            pass
    _sock = None
    _pid = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def begin(name):
    """Begin stage `name` on the calling thread (stages nest per thread)."""
    _event("B", name)
    if _state is True:
        _maybe_send_facts()


def end(name):
    """End stage `name` on the calling thread (the innermost open stage of that name)."""
    _event("E", name)


def instant(name):
    """Record an instant event `name` (a checkpoint saved, an epoch boundary...)."""
    _event("I", name)


def counter(name, value):
    """Record a sample `value` (a real number: items processed, loss, accuracy...) of counter
    `name`. The value is sent as repr(float(value)), which round-trips (nan, inf, -inf too)."""
    _require_name(name)
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"mlbench_marker: counter {name!r} value must be a number, not "
                        f"{type(value).__name__} {_show(value)}")
    try:
        text = repr(float(value))
    except TypeError:
        raise TypeError(f"mlbench_marker: counter {name!r} value must be a number, not "
                        f"{type(value).__name__}") from None
    except OverflowError:
        raise ValueError(f"mlbench_marker: counter {name!r} value {_show(value)} is too large "
                         "for a float") from None
    if _state is not False:
        _emit("C", name, " " + text)


def meta(key, value):
    """Record metadata `key` = str(value) (batch_size, precision, device, model...). The value
    may hold spaces but no newline or other control character; "" is allowed."""
    _check_name(key, "key")
    text = str(value)
    if not _CONTROL.isdisjoint(text):
        raise ValueError(f"mlbench_marker: metadata {key!r} value {_show(text)} contains a "
                         "newline or another control character; remove it")
    try:
        size = len(key.encode("utf-8")) + 1 + len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"mlbench_marker: metadata {key!r} value {_show(text)} is not "
                         "encodable as UTF-8") from None
    if _MAX_HEADER + size > MAX_EVENT:
        raise ValueError(f"mlbench_marker: metadata {key!r} value {_show(text)} is too long: "
                         f"an event is at most {MAX_EVENT} bytes; shorten it")
    if _state is not False:
        _emit("M", key, " " + text if text else "")


def enabled():
    """True when events are being sent (MLBENCH_MARKER_SOCKET is set and was connectable)."""
    if _state is False:
        return False
    if _pid != os.getpid():
        return _connect()
    return True


class _Stage:
    """A stage as context manager or decorator (see stage())."""

    __slots__ = ("name",)

    def __init__(self, name):
        _check_name(name)
        self.name = name

    def __enter__(self):
        if _state is not False:
            _emit("B", self.name, "")
            if _state is True:
                _maybe_send_facts()
        return self

    def __exit__(self, exc_type, exc, tb):
        if _state is not False:
            _emit("E", self.name, "")
        return False  # exceptions propagate

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper

    def __repr__(self):
        return f"stage({self.name!r})"


def stage(name):
    """Mark stage `name` around a block or a function; the end is sent even if it raises.

        with stage("train"):
            ...

        @stage("load")
        def load(): ...
    """
    return _Stage(name)


def dataloader(loader):
    """Record the settings of a PyTorch DataLoader (or any object with the same attributes) as
    metadata: framework.dataloader.num_workers, batch_size, pin_memory, prefetch_factor,
    persistent_workers (those it has). Returns the loader, so that it can wrap the
    construction:

        loader = mlbench_marker.dataloader(DataLoader(ds, batch_size=64, num_workers=4))

    Call it for the loader of the loop being measured: the last call counts. Raises TypeError
    when the object has no num_workers."""
    workers = getattr(loader, "num_workers", None)
    if not isinstance(workers, int) or isinstance(workers, bool):
        raise TypeError(f"mlbench_marker: dataloader() needs a DataLoader (an object with an "
                        f"int num_workers), not {type(loader).__name__}")
    facts = {"framework.dataloader.num_workers": str(workers)}
    for attr in ("batch_size", "prefetch_factor"):
        value = getattr(loader, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            facts["framework.dataloader." + attr] = str(value)
    for attr in ("pin_memory", "persistent_workers"):
        value = getattr(loader, attr, None)
        if isinstance(value, bool):
            facts["framework.dataloader." + attr] = "true" if value else "false"
    if _state is not False:
        _send(facts)  # connects on the first event, sending the framework facts first
    return loader

"""mlbench_marker: tell a running ``mlbench`` which stage of a Python workload is executing.

Pure-Python client of the mlbench marker protocol (standard library only). Each call sends one
datagram ``<kind> <t_ns> <pid> <tid> <name>[ <value>]`` to the Unix socket named by the
environment variable MLBENCH_MARKER_SOCKET; when it is unset every call is a cheap no-op. When
mlbench also sets MLBENCH_MARKER_RING=1 (and the machine is x86-64), stage, counter and instant
events are written instead to a shared-memory ring per thread, with no system call
(docs/markers.md, "Ring transport"; layout: include/mlbench/marker_ring.h); metadata stays
datagrams.

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

Timing in-process (mlbench_marker.timer): ``Timer(fn, *args)`` with timeit, autorange and
blocked_autorange, returning a ``Measurement`` (median per call with a 95 % interval...);
``bench(fn, *args)``; ``Measurement.record()`` stores one in mlbench's result store. The pytest
plugin (mlbench_marker.pytest_plugin) gives tests the ``mlbench`` fixture. docs/python.md.

Thread-safe, and usable from forked or spawned child processes (PyTorch DataLoader workers):
each process connects its own socket on its first event. Errors while sending (mlbench gone)
are swallowed: a marker never stops the workload. Bad arguments raise ValueError or TypeError
whether or not mlbench is listening, so a workload that runs alone also runs under mlbench.
"""

import functools
import mmap
import os
import socket
import struct
import sys
import threading
import time

try:
    import fcntl
except ImportError:  # not a POSIX system: no rings
    fcntl = None

__all__ = ["stage", "begin", "end", "counter", "meta", "instant", "enabled", "dataloader",
           "MAX_EVENT", "Timer", "Measurement", "bench", "MlbenchError", "MlbenchNotFoundError"]

# The version of mlbench this client belongs to: project(mlbench VERSION) in CMakeLists.txt and
# python/pyproject.toml say the same (tests/python/test_package.py checks it).
__version__ = "0.1.0"

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
_stages = {}  # name -> its _Stage (stage()), as bounded as _valid_names
_FACTS_EVERY_NS = 1_000_000_000  # framework facts are looked at again at most once a second
_facts_sent = {}   # framework.* key -> value last sent by this process
_facts_due = 0     # monotonic ns after which a stage begin looks at the facts again
_is_worker = False  # a forked child (DataLoader worker): its facts are not the workload's

# The ring transport (include/mlbench/marker_ring.h). Rings are used only on x86-64: Python has
# no memory barriers, so the writer publishes a record with plain stores (the record, then
# `head`) and relies on x86's total store order to make them visible to mlbench in that order
# (and its load of `tail` is not reordered with the record stores that follow it). On other
# machines the client keeps datagrams.
_RING_ENV = "MLBENCH_MARKER_RING"
_RING_BYTES_ENV = "MLBENCH_MARKER_RING_BYTES"
_RING_DEFAULT_BYTES = 4 << 20
_RING_MIN_BYTES = 1 << 12
_RING_MAX_BYTES = 1 << 30
_RING_HEADER_BYTES = 256
_RING_RECORD_BYTES = 32
_RING_MAX_NAMES = 65536  # name ids of one process are 1.._RING_MAX_NAMES
_RING_HEADER = struct.Struct("=8sIIQii")  # magic, version, record_bytes, capacity, pid, tid
_RING_RECORD = struct.Struct("=qdIB11x")  # t_ns, value, name id, kind
# Indexes of the header's counters in memoryview(mm).cast("Q"): single 8-byte stores and loads
# (struct's standard-size "<Q" would store byte by byte).
_HEAD, _BEGUN, _DROPPED, _TAIL = 64 // 8, 72 // 8, 80 // 8, 128 // 8
_MAP_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # no page fault in the hot path
# Python 3.13+ need not keep a duplicate of the ring's descriptor beside the mapping.
_MMAP_OPTIONS = {"trackfd": False} if sys.version_info >= (3, 13) else {}
_B, _E, _C, _I = b"BECI"  # record kinds

_ring_capacity = 0        # records per ring of this process's threads; 0: datagrams only
_tls = threading.local()  # .ring: this thread's _Ring, or None for datagrams (unset: no event yet)
_names = {}               # name -> id announced by this process (mlbench.name)
_names_lock = threading.Lock()
_pack_record = _RING_RECORD.pack_into
_monotonic_ns = time.monotonic_ns


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
    global _state, _sock, _pid, _ring_capacity
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
        _ring_capacity = _ring_setting()
        _state = True
        _pid = pid  # set last: another thread seeing _pid == getpid() finds _sock ready
        return True


def _ring_bytes():
    """MLBENCH_MARKER_RING_BYTES as the bytes of records per ring, as the C client reads it:
    decimal digits, at most 1 GiB (more counts as 1 GiB), rounded down to a power of two.
    mlbench refuses any other value before it starts the workload; one the workload set itself
    keeps the default, 4 MiB, rather than failing it: unset, not only digits, below 4 KiB, or
    beyond 64 bits."""
    text = os.environ.get(_RING_BYTES_ENV, "")
    if not (text.isascii() and text.isdigit()):
        return _RING_DEFAULT_BYTES
    size = int(text)
    if not _RING_MIN_BYTES <= size < 1 << 64:
        return _RING_DEFAULT_BYTES
    return 1 << (min(size, _RING_MAX_BYTES).bit_length() - 1)


def _ring_setting():
    """Records per ring when this process writes rings, else 0 (datagrams)."""
    if os.environ.get(_RING_ENV) != "1" or fcntl is None:
        return 0
    import platform  # only when mlbench offers rings: no import cost otherwise
    if platform.machine() not in ("x86_64", "AMD64"):  # see the comment at _RING_ENV
        return 0
    if not (hasattr(os, "memfd_create") and hasattr(socket, "send_fds")
            and hasattr(fcntl, "F_ADD_SEALS")):
        return 0
    return _ring_bytes() // _RING_RECORD_BYTES


class _Ring:
    """One writer thread's ring: its mapping and the writer's own copies of head and tail."""

    __slots__ = ("mm", "q", "cap", "mask", "head", "tail", "pid", "tid")

    def __init__(self, mm, cap, pid, tid):
        self.mm = mm
        self.q = memoryview(mm).cast("Q")
        self.cap = cap
        self.mask = cap - 1
        self.head = 0
        self.tail = 0
        self.pid = pid
        self.tid = tid


def _ring_open():
    """Creates the calling thread's ring and hands it to mlbench; None when any step fails
    (the thread then sends datagrams for good)."""
    cap = _ring_capacity
    pid, tid = _pid, threading.get_native_id()
    fd = -1
    try:
        fd = os.memfd_create("mlbench-ring", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        size = _RING_HEADER_BYTES + cap * _RING_RECORD_BYTES
        os.ftruncate(fd, size)
        # mlbench maps the file: it must never be cut under it
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        mm = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | _MAP_POPULATE,
                       prot=mmap.PROT_READ | mmap.PROT_WRITE, **_MMAP_OPTIONS)
        # Populated but not written once over, unlike the C client: in a VM whose host backs
        # guest memory lazily, that first write costs milliseconds per ring on the thread's
        # first event, and then about 60 ns a record over the first lap, a tenth of what a
        # Python event costs anyway (bench/RESULTS.md).
        _RING_HEADER.pack_into(mm, 0, b"MLBRING1", 1, _RING_RECORD_BYTES, cap, pid, tid)
        ring = _Ring(mm, cap, pid, tid)
        data = f"M {time.monotonic_ns()} {pid} {tid} mlbench.ring {cap}".encode("ascii")
        socket.send_fds(_sock, [data], [fd])
        return ring
    except Exception:  # no memfd, sealing or SCM_RIGHTS, mlbench gone: datagrams
        return None
    finally:
        if fd >= 0:
            os.close(fd)  # mlbench has its own descriptor; the mapping stays


def _intern(name, ring):
    """The id of name in this process, announced to mlbench first (mlbench.name); 0 when no id
    can be given (all taken, or the announcement failed): the event then goes as a datagram."""
    with _names_lock:
        nid = _names.get(name)
        if nid is None:
            nid = len(_names) + 1
            if nid > _RING_MAX_NAMES:
                return 0
            data = f"M {time.monotonic_ns()} {ring.pid} {ring.tid} mlbench.name {nid} {name}"
            try:
                _sock.send(data.encode("utf-8"))
            except OSError:
                return 0
            # Only now: no thread can write a record with an id whose announcement is not queued.
            _names[name] = nid
    return nid


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


def _start():
    """The first event of this process: connects, then sends its rank and its facts (they go
    before any other event). Returns whether events are sent."""
    if not _connect():
        return False
    rank = _rank()
    if rank is not None:
        _emit("M", "mlbench.rank", " " + rank)
    _send_facts()
    return True


def _emit(kind, name, tail):
    """Sends one event as a datagram; tail is "" or " <value>". Returns its t_ns, 0 when not
    sent. Never raises for send errors."""
    if _pid != os.getpid() and not _start():
        return 0
    t_ns = time.monotonic_ns()
    data = f"{kind} {t_ns} {_pid} {threading.get_native_id()} {name}{tail}"
    try:
        _sock.send(data.encode("utf-8"))
    except OSError:  # mlbench gone or queue error: the event is lost, the workload goes on
        pass
    return t_ns


def _thread_start():
    """The first B/E/I/C event of the calling thread in this process: starts the process if
    needed, then opens the thread's ring when rings are on. Returns the ring, None for
    datagrams, or False when markers are off."""
    if _pid != os.getpid() and not _start():
        return False
    ring = _ring_open() if _ring_capacity else None
    _tls.ring = ring
    return ring


def _put(kind, name, value):
    """Sends a B, E, I or C event (kind: its byte; value: the C sample, else 0.0) on the
    thread's ring, or as a datagram. Returns its t_ns, 0 when not sent. Never raises.

    The hot path: no system call, and no os.getpid(): the at-fork hook replaces _tls, so a
    ring found here belongs to this process and thread. head is read after the last call that
    precedes the writes: a Python signal handler that marks an event (CPython runs them at
    calls and jumps) can then only run after pack_into, reusing the same unpublished slot:
    one of the two records is lost, none is torn."""
    try:
        ring = _tls.ring
    except AttributeError:
        ring = _thread_start()
        if ring is False:
            return 0
    if ring is not None:
        nid = _names.get(name) or _intern(name, ring)
        if nid:
            t_ns = _monotonic_ns()
            head = ring.head
            if head - ring.tail >= ring.cap:  # looks full: see how far mlbench has read
                q = ring.q
                ring.tail = q[_TAIL]
                if head - ring.tail >= ring.cap:  # full: count the loss, never wait
                    q[_DROPPED] += 1
                    return t_ns
            q = ring.q
            q[_BEGUN] = head + 1
            _pack_record(ring.mm, _RING_HEADER_BYTES + ((head & ring.mask) << 5),
                         t_ns, value, nid, kind)
            ring.head = head + 1
            q[_HEAD] = head + 1  # publishes the record (x86: stores stay in program order)
            return t_ns
    return _emit(chr(kind), name, " " + repr(value) if kind == _C else "")


def _require_name(name):
    """Checks name unless it passed before: the common case costs one set lookup."""
    try:
        if name in _valid_names:
            return
    except TypeError:  # unhashable: _check_name says what is wrong with it
        pass
    _check_name(name)


def _event(kind, name):
    """A B, E or I event (kind: its byte): checked name, no value. Returns its t_ns, 0 when
    not sent."""
    _require_name(name)
    if _state is not False:
        return _put(kind, name, 0.0)
    return 0


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


def _maybe_send_facts(t_ns):
    """After a stage begin stamped t_ns: the facts again if they are due."""
    if t_ns >= _facts_due and _state is True and _pid == os.getpid():
        _send_facts()


def _after_fork_in_child():
    # The child must not share the parent's lock (it may have been held at fork time); its
    # socket is reconnected lazily, on the child's first event.
    # Its rings and name ids are the parent's: it creates its own rings (dropping its copies of
    # the parent's mappings) and announces its names again, on its first events.
    global _sock, _pid, _lock, _is_worker, _tls, _names, _names_lock
    _lock = threading.Lock()
    _tls = threading.local()
    _names = {}
    _names_lock = threading.Lock()
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
    try:  # _require_name(name), inlined in the hot calls
        known = name in _valid_names
    except TypeError:
        known = False
    if not known:
        _check_name(name)
    if _state is not False:
        t_ns = _put(_B, name, 0.0)
        if t_ns >= _facts_due:
            _maybe_send_facts(t_ns)


# CUDA work still queued when a stage ends (docs/markers.md, "GPU work queued at a stage's
# end"): PyTorch launches kernels asynchronously, so a stage that ends without synchronising
# ends before its GPU work does. The check costs a driver call (cudaStreamQuery, a few
# microseconds), so each stage name is checked at most once every _QUEUED_EVERY_NS.
GPU_QUEUED = "mlbench.gpu_queued"  # the instant sent just before the stage's end
_QUEUED_EVERY_NS = 1_000_000_000
_queued_next = {}  # stage name -> monotonic ns of its next check
_modules = sys.modules


def _gpu_queued(name):
    """Whether PyTorch's current CUDA stream still has work queued, checked only where the
    script initialised CUDA itself (never imports torch nor initialises CUDA) and when name is
    due; False on any doubt."""
    now = _monotonic_ns()
    if now < _queued_next.get(name, 0):
        return False
    if len(_queued_next) < _VALID_NAMES_MAX:
        _queued_next[name] = now + _QUEUED_EVERY_NS
    try:
        cuda = _modules["torch"].cuda
        return bool(cuda.is_initialized()) and not cuda.current_stream().query()
    except Exception:  # an odd torch, or none: nothing to say
        return False


def end(name):
    """End stage `name` on the calling thread (the innermost open stage of that name)."""
    try:  # _require_name(name), inlined in the hot calls
        known = name in _valid_names
    except TypeError:
        known = False
    if not known:
        _check_name(name)
    if _state is not False:
        if "torch" in _modules and _gpu_queued(name):
            _put(_I, GPU_QUEUED, 0.0)
        _put(_E, name, 0.0)


def instant(name):
    """Record an instant event `name` (a checkpoint saved, an epoch boundary...)."""
    _event(_I, name)


def counter(name, value):
    """Record a sample `value` (a real number: items processed, loss, accuracy...) of counter
    `name`. The value is sent as repr(float(value)), which round-trips (nan, inf, -inf too)."""
    _require_name(name)
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"mlbench_marker: counter {name!r} value must be a number, not "
                        f"{type(value).__name__} {_show(value)}")
    try:
        value = float(value)
    except TypeError:
        raise TypeError(f"mlbench_marker: counter {name!r} value must be a number, not "
                        f"{type(value).__name__}") from None
    except OverflowError:
        raise ValueError(f"mlbench_marker: counter {name!r} value {_show(value)} is too large "
                         "for a float") from None
    if _state is not False:
        _put(_C, name, value)


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
        return _start()  # the process's first event: its rank and facts go first
    return True


class _Stage:
    """A stage as context manager or decorator (see stage())."""

    __slots__ = ("name",)

    def __init__(self, name):
        _require_name(name)
        self.name = name

    def __enter__(self):
        if _state is not False:
            t_ns = _put(_B, self.name, 0.0)
            if t_ns >= _facts_due:
                _maybe_send_facts(t_ns)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _state is not False:
            if "torch" in _modules and _gpu_queued(self.name):
                _put(_I, GPU_QUEUED, 0.0)
            _put(_E, self.name, 0.0)
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
    try:  # a stage holds no state: one object per name serves every use, in every thread
        return _stages[name]
    except (KeyError, TypeError):  # new, or unhashable (_Stage says what is wrong with it)
        pass
    new = _Stage(name)
    if len(_stages) < _VALID_NAMES_MAX:
        _stages[name] = new
    return new


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


# The in-process timer: imported last, it uses the marker functions above.
from ._cli import MlbenchError, MlbenchNotFoundError  # noqa: E402
from .timer import Measurement, Timer, bench  # noqa: E402

"""Tests of the pure-Python marker client (python/mlbench_marker).

Each test binds its own Unix datagram socket in a temporary folder and runs a small script in
a subprocess with MLBENCH_MARKER_SOCKET pointing at it (the module latches its state on the
first call, so enabled behaviour is only tested in fresh processes), then checks the exact
datagrams received. Argument checking in disabled mode is tested in this process.

The ring transport (MLBENCH_MARKER_RING=1, include/mlbench/marker_ring.h): the receiver maps
the rings it is handed (SCM_RIGHTS) as mlbench does and reads their records [tail, head) when
the script has ended; RingMarkerClientTest runs every MarkerClientTest script over rings, and
RingTransportTest checks the rings themselves (x86-64 only: elsewhere the client keeps
datagrams, which is tested instead).
Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -p test_marker_client.py
"""

import array
import fcntl
import json
import math
import mmap
import os
import platform
import re
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

ENV = "MLBENCH_MARKER_SOCKET"
RING_ENV = "MLBENCH_MARKER_RING"
RING_BYTES_ENV = "MLBENCH_MARKER_RING_BYTES"
# where the client writes rings (Python 3.9+ on Linux x86-64)
RINGS = (platform.machine() in ("x86_64", "AMD64") and hasattr(os, "memfd_create")
         and hasattr(socket, "send_fds"))
PKG_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "..", "python"))
if PKG_DIR not in sys.path:
    sys.path.insert(0, PKG_DIR)
os.environ.pop(ENV, None)  # this process tests the disabled mode
os.environ.pop(RING_ENV, None)
import mlbench_marker  # noqa: E402

EVENT_RE = re.compile(r"([BECMI]) ([0-9]+) ([0-9]+) ([0-9]+) ([^\x00-\x20\x7f]+)(?: (.*))?",
                      re.DOTALL)


class Event:
    """One parsed datagram; `raw` is its text."""

    def __init__(self, data, via="datagram"):
        self.via = via  # "datagram" or "ring"
        self.raw = data.decode("utf-8")
        match = EVENT_RE.fullmatch(self.raw)
        if match is None:
            raise AssertionError(f"malformed event {self.raw!r}")
        self.kind = match.group(1)
        self.t_ns = int(match.group(2))
        self.pid = int(match.group(3))
        self.tid = int(match.group(4))
        self.name = match.group(5)
        self.value = match.group(6)
        # what follows "<kind> <t_ns> <pid> <tid> ", compared exactly by the tests
        self.body = self.raw.split(" ", 4)[4]

    def __repr__(self):
        return f"Event({self.raw!r})"


# include/mlbench/marker_ring.h
RING_HEADER = struct.Struct("=8sIIQii")  # magic, version, record_bytes, capacity, pid, tid
RING_RECORD = struct.Struct("=qdIB11x")  # t_ns, value, name id, kind
RING_HEAD, RING_BEGUN, RING_DROPPED, RING_TAIL = 8, 9, 10, 16  # 64-bit counter indexes


def recv_fds(sock, bufsize, maxfds=4):
    """(data, fds) of one datagram (socket.recv_fds of Python 3.11 ignores its flags)."""
    fds = array.array("i")
    data, ancdata, _, _ = sock.recvmsg(bufsize, socket.CMSG_SPACE(maxfds * fds.itemsize))
    for level, kind, cdata in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
    return data, list(fds)


class Ring:
    """A ring received from a writer thread, mapped as mlbench maps it."""

    def __init__(self, event, fd):
        self.event = event  # the "mlbench.ring <capacity>" datagram that carried it
        self.size = os.fstat(fd).st_size
        self.seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        self.mm = mmap.mmap(fd, self.size)  # shared, read/write: a reader stores tail
        self.q = memoryview(self.mm).cast("Q")
        (self.magic, self.version, self.record_bytes, self.capacity, self.pid,
         self.tid) = RING_HEADER.unpack_from(self.mm, 0)

    def counter(self, index):
        return self.q[index]

    def records(self):
        """The unread records [tail, head): (t_ns, value, name id, kind) tuples."""
        head, tail = self.q[RING_HEAD], self.q[RING_TAIL]
        assert head - tail <= self.capacity, (head, tail)
        return [RING_RECORD.unpack_from(self.mm, 256 + (i % self.capacity) * 32)
                for i in range(tail, head)]


class Receiver:
    """Drains a bound datagram socket in a thread (senders block when its queue is full), and
    maps the rings it is handed."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.05)
        self.data = []
        self.fds = []  # (index in data, fd)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            try:
                data, fds = recv_fds(self.sock, 65536)
            except socket.timeout:
                if self._stop.is_set():  # sends are synchronous: the queue is drained
                    return
                continue
            self.fds.extend((len(self.data), fd) for fd in fds)
            self.data.append(data)

    def stop(self):
        """Stops the thread once the queue is empty; returns the parsed datagrams in order.
        self.rings: the rings received, self.stray_fds: descriptors any other datagram
        carried (none expected)."""
        self._stop.set()
        self._thread.join()
        self.sock.close()
        events = [Event(d) for d in self.data]
        self.rings = []
        self.stray_fds = 0
        for index, fd in self.fds:
            try:
                if events[index].kind == "M" and events[index].name == "mlbench.ring":
                    self.rings.append(Ring(events[index], fd))
                else:
                    self.stray_fds += 1
            finally:
                os.close(fd)
        return events


def ring_events(datagrams, rings, test):
    """The records of the rings as Events (text as the datagram transport would have sent it),
    checking the protocol on the way: each ring announced once with its capacity, before its
    thread's other events; each name id announced once per process, before the first record
    that uses it. Returns (events, names: {(pid, id): name})."""
    names = {}
    announced_at = {}
    for ev in datagrams:
        if ev.kind == "M" and ev.name == "mlbench.name":
            nid, name = ev.value.split(" ", 1)
            test.assertNotIn((ev.pid, int(nid)), names, f"id announced twice: {ev}")
            names[(ev.pid, int(nid))] = name
            announced_at[(ev.pid, int(nid))] = ev.t_ns
    events = []
    for ring in rings:
        test.assertEqual((ring.magic, ring.version, ring.record_bytes),
                         (b"MLBRING1", 1, 32))
        test.assertEqual((ring.pid, ring.tid), (ring.event.pid, ring.event.tid))
        test.assertEqual(ring.event.value, str(ring.capacity))
        test.assertEqual(ring.size, 256 + 32 * ring.capacity)
        test.assertEqual(ring.capacity & (ring.capacity - 1), 0)
        seals = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
        test.assertEqual(ring.seals & seals, seals)
        test.assertEqual(ring.counter(RING_BEGUN), ring.counter(RING_HEAD))  # none torn
        for t_ns, value, nid, kind in ring.records():
            key = (ring.pid, nid)
            test.assertIn(key, names, f"record of unannounced name id {nid}")
            test.assertLess(announced_at[key], t_ns, f"name id {nid} used before announced")
            test.assertLess(ring.event.t_ns, t_ns, "record before its ring's announcement")
            kind = chr(kind)
            test.assertIn(kind, "BECI")
            if kind != "C":
                test.assertEqual(value, 0.0)
            tail = f" {value!r}" if kind == "C" else ""
            text = f"{kind} {t_ns} {ring.pid} {ring.tid} {names[key]}{tail}"
            events.append(Event(text.encode("utf-8"), via="ring"))
    return events, names


class MarkerClientTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="mlbench-marker-test-")
        self.tmp = self._tmp.name
        self.sock_path = os.path.join(self.tmp, "marker.sock")
        self.rx = Receiver(self.sock_path)

    def tearDown(self):
        if not self.rx._stop.is_set():
            self.rx.stop()
        self._tmp.cleanup()

    RING = False  # run the scripts with MLBENCH_MARKER_RING=1

    def run_child(self, code, *args, env_value=None, enabled=True, python=sys.executable,
                  ring=None, env_extra=None):
        """Runs `code` as a script in a fresh interpreter; returns (stdout JSON or None,
        stderr, events, t0_ns, t1_ns). The script must exit 0. With rings (ring, default
        self.RING), the ring records are merged into the events by time, and self.datagrams,
        self.rings, self.names keep what was received."""
        script = os.path.join(self.tmp, "child.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(code))
        env = dict(os.environ)
        env["PYTHONPATH"] = PKG_DIR + (os.pathsep + env["PYTHONPATH"]
                                       if env.get("PYTHONPATH") else "")
        env.pop(ENV, None)
        env.pop(RING_ENV, None)
        env.pop(RING_BYTES_ENV, None)
        if enabled:
            env[ENV] = self.sock_path if env_value is None else env_value
        if self.RING if ring is None else ring:
            env[RING_ENV] = "1"
        env.update(env_extra or {})
        t0 = time.monotonic_ns()
        proc = subprocess.run([python, script, *args], env=env, capture_output=True,
                              text=True, timeout=120)
        t1 = time.monotonic_ns()
        events = self.rx.stop()
        self.datagrams = events
        self.rings = self.rx.rings
        self.assertEqual(self.rx.stray_fds, 0, "a datagram other than mlbench.ring had a fd")
        records, self.names = ring_events(events, self.rings, self)
        # The framework facts every main process sends first are checked by FrameworkFactsTest;
        # the other tests compare the events their scripts send. mlbench.ring and mlbench.name
        # belong to the ring transport, checked by ring_events and RingTransportTest.
        self.facts = [e for e in events if e.kind == "M" and e.name.startswith("framework.")]
        events = [e for e in events if e not in self.facts and
                  not (e.kind == "M" and e.name in ("mlbench.ring", "mlbench.name"))]
        if records:
            events = sorted(events + records, key=lambda e: e.t_ns)
        self.assertEqual(proc.returncode, 0, f"child failed:\n{proc.stderr}")
        out = proc.stdout.strip()
        return (json.loads(out) if out else None), proc.stderr, events, t0, t1

    def check_times(self, events, t0, t1):
        for ev in events:
            self.assertTrue(t0 <= ev.t_ns <= t1, f"{ev} t_ns outside [{t0}, {t1}]")

    def test_event_formats(self):
        info, err, events, t0, t1 = self.run_child("""
            import json, os, threading
            import mlbench_marker as m
            m.begin("load")
            m.end("load")
            for name, value in [("loss", 0.1), ("images", 3), ("big", 1e300), ("tiny", 5e-324),
                                ("neg", -2.5), ("third", 1 / 3), ("nan", float("nan")),
                                ("inf", float("inf")), ("ninf", float("-inf"))]:
                m.counter(name, value)
            m.meta("model", "resnet 50  v1 ")
            m.meta("empty", "")
            m.meta("batch_size", 64)
            m.instant("checkpoint")
            m.instant("\u00e9t\u00e9")
            print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(),
                              "enabled": m.enabled()}))
        """)
        self.assertEqual(err, "")
        self.assertTrue(info["enabled"])
        expected = [("B", "load"), ("E", "load"), ("C", "loss 0.1"), ("C", "images 3.0"),
                    ("C", "big 1e+300"), ("C", "tiny 5e-324"), ("C", "neg -2.5"),
                    ("C", "third " + repr(1 / 3)), ("C", "nan nan"), ("C", "inf inf"),
                    ("C", "ninf -inf"), ("M", "model resnet 50  v1 "), ("M", "empty"),
                    ("M", "batch_size 64"), ("I", "checkpoint"), ("I", "\u00e9t\u00e9")]
        self.assertEqual([(e.kind, e.body) for e in events], expected)
        self.check_times(events, t0, t1)
        self.assertEqual([e.t_ns for e in events], sorted(e.t_ns for e in events))
        for ev in events:
            self.assertEqual(ev.pid, info["pid"])
            self.assertEqual(ev.tid, info["tid"])
        values = {"loss": 0.1, "images": 3.0, "big": 1e300, "tiny": 5e-324, "neg": -2.5,
                  "third": 1 / 3, "inf": math.inf, "ninf": -math.inf}
        for ev in events:
            if ev.kind == "C" and ev.name in values:
                self.assertEqual(float(ev.value), values[ev.name], ev)
            elif ev.kind == "C":
                self.assertTrue(math.isnan(float(ev.value)), ev)

    def test_stage_context_manager_and_decorator(self):
        _, err, events, t0, t1 = self.run_child("""
            import mlbench_marker as m

            @m.stage("load")
            def load(fail):
                "doc"
                if fail:
                    raise KeyError("boom")
                return 42

            assert load(False) == 42
            assert load.__name__ == "load" and load.__doc__ == "doc"
            try:
                load(True)
            except KeyError:
                pass
            else:
                raise SystemExit("the decorator swallowed the exception")
            try:
                with m.stage("train"):
                    raise RuntimeError("x")
            except RuntimeError:
                pass
            else:
                raise SystemExit("the context manager swallowed the exception")
            outer = m.stage("outer")
            with outer:
                with m.stage("inner"):
                    pass
        """)
        self.assertEqual(err, "")
        self.assertEqual([e.raw.split(" ", 4)[0::4] for e in events],
                         [["B", "load"], ["E", "load"], ["B", "load"], ["E", "load"],
                          ["B", "train"], ["E", "train"], ["B", "outer"], ["B", "inner"],
                          ["E", "inner"], ["E", "outer"]])
        self.check_times(events, t0, t1)

    def test_os_fork_child_has_its_pid(self):
        info, _, events, t0, t1 = self.run_child("""
            import json, os
            import mlbench_marker as m
            m.instant("parent_before")  # the parent connects before the fork
            pid = os.fork()
            if pid == 0:
                m.begin("child")
                m.end("child")
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            assert status == 0, status
            m.instant("parent_after")
            print(json.dumps({"parent": os.getpid(), "child": pid}))
        """)
        self.check_times(events, t0, t1)
        by_body = {(e.kind, e.body): e for e in events}
        self.assertEqual(len(events), 4, events)
        for key in [("I", "parent_before"), ("I", "parent_after")]:
            self.assertEqual(by_body[key].pid, info["parent"])
        for key in [("B", "child"), ("E", "child")]:
            self.assertEqual(by_body[key].pid, info["child"])
            self.assertEqual(by_body[key].tid, info["child"])  # the child's main thread
        self.assertNotEqual(info["parent"], info["child"])

    MP_SCRIPT = """
        import json, multiprocessing, os, sys
        import mlbench_marker as m

        def work(i):
            with m.stage("worker"):
                m.counter("items", i)

        if __name__ == "__main__":
            m.instant("main")
            ctx = multiprocessing.get_context(sys.argv[1])
            procs = [ctx.Process(target=work, args=(i,)) for i in range(2)]
            for p in procs:
                p.start()
            for p in procs:
                p.join()
                assert p.exitcode == 0, p.exitcode
            print(json.dumps({"parent": os.getpid(), "children": [p.pid for p in procs]}))
    """

    def check_multiprocessing(self, method):
        info, _, events, t0, t1 = self.run_child(self.MP_SCRIPT, method)
        self.check_times(events, t0, t1)
        main = [e for e in events if e.pid == info["parent"]]
        self.assertEqual([e.body for e in main], ["main"])
        for i, pid in enumerate(info["children"]):
            mine = [e for e in events if e.pid == pid]
            self.assertEqual([(e.kind, e.body) for e in mine],
                             [("B", "worker"), ("C", f"items {float(i)!r}"), ("E", "worker")],
                             f"events of child {pid}: {events}")
        self.assertEqual(len(events), 7, events)

    def test_multiprocessing_fork(self):
        self.check_multiprocessing("fork")

    def test_multiprocessing_spawn(self):
        self.check_multiprocessing("spawn")

    def test_threads_have_distinct_tids(self):
        info, _, events, _, _ = self.run_child("""
            import json, threading
            import mlbench_marker as m
            barrier = threading.Barrier(2)
            tids = {}

            def run(key):
                barrier.wait()  # both threads alive at once, so their ids differ
                tids[key] = threading.get_native_id()
                for _ in range(100):
                    m.instant("thread_" + key)
                barrier.wait()

            threads = [threading.Thread(target=run, args=(k,)) for k in "ab"]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            print(json.dumps(tids))
        """)
        self.assertNotEqual(info["a"], info["b"])
        self.assertEqual(len(events), 200)
        for ev in events:
            self.assertEqual(ev.tid, info[ev.name[-1]], ev)

    def test_disabled_sends_nothing_and_raises_nothing(self):
        info, err, events, _, _ = self.run_child("""
            import json
            import mlbench_marker as m
            m.begin("a"); m.end("a"); m.counter("c", 1.5); m.meta("k", "v w"); m.instant("i")
            with m.stage("s"):
                pass
            print(json.dumps({"enabled": m.enabled()}))
        """, enabled=False)
        self.assertEqual(events, [])
        self.assertEqual(err, "")
        self.assertFalse(info["enabled"])

    def test_unreachable_socket_disables_with_one_message(self):
        missing = os.path.join(self.tmp, "nobody.sock")
        info, err, events, _, _ = self.run_child("""
            import json
            import mlbench_marker as m
            m.begin("a"); m.end("a"); m.counter("c", 1.5); m.instant("i")
            print(json.dumps({"enabled": m.enabled()}))
        """, env_value=missing)
        self.assertFalse(info["enabled"])
        self.assertEqual(events, [])
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(f"cannot connect to {missing}", lines[0])
        self.assertIn("markers disabled", lines[0])

    def test_send_errors_are_swallowed(self):
        # The script is its own harness: it binds, connects, then closes the receiving end.
        self.run_child("""
            import os, socket, sys
            path = sys.argv[1]
            rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            rx.bind(path)
            os.environ["MLBENCH_MARKER_SOCKET"] = path
            import mlbench_marker as m
            m.begin("a")
            assert rx.recv(4096).startswith(b"M ")  # the framework facts come first
            assert rx.recv(4096).startswith(b"B ")
            rx.close()
            os.unlink(path)
            m.end("a"); m.counter("c", 1); m.meta("k", "v"); m.instant("i")
            with m.stage("s"):
                pass
            assert m.enabled()
        """, os.path.join(self.tmp, "own.sock"), enabled=False)

    def test_invalid_arguments_when_enabled(self):
        info, err, events, _, _ = self.run_child("""
            import json
            import mlbench_marker as m
            raised = []
            for name in ["", "a b", "a\\tb", "a\\nb", "x\\x01", "x\\x7f", "x" * 5000]:
                for call in (m.begin, m.end, m.instant, lambda n: m.counter(n, 1),
                             lambda n: m.meta(n, "v"), m.stage):
                    try:
                        call(name)
                    except ValueError as e:
                        raised.append(str(e))
            try:
                m.meta("k", "line\\nbreak")
            except ValueError as e:
                raised.append(str(e))
            m.instant("n" * 4000)  # long but within the limit
            m.instant("after")
            print(json.dumps({"raised": len(raised)}))
        """)
        self.assertEqual(info["raised"], 7 * 6 + 1)
        self.assertEqual([e.body for e in events], ["n" * 4000, "after"])
        self.assertLessEqual(len(events[0].raw.encode()), mlbench_marker.MAX_EVENT)
        self.assertEqual(err, "")


FAKE_TORCH = """
import sys, types
torch = types.ModuleType("torch")
torch.__version__ = "9.9.9+fake"
torch._threads = 3
torch.get_num_threads = lambda: torch._threads
def set_num_threads(n):
    torch._threads = n
torch.set_num_threads = set_num_threads
torch.cuda = types.SimpleNamespace(is_available=lambda: False, is_initialized=lambda: False)
sys.modules["torch"] = torch
"""


class FrameworkFactsTest(unittest.TestCase):
    """framework.* metadata (docs/markers.md): sent by the main process first, again when they
    change, never by a forked worker; frameworks are read from sys.modules, never imported."""

    RING = False
    setUp = MarkerClientTest.setUp
    tearDown = MarkerClientTest.tearDown
    run_child = MarkerClientTest.run_child

    def facts_of(self):
        return {e.name: e.value for e in self.facts}

    def test_no_framework_imported(self):
        info, _, events, _, _ = self.run_child("""
            import json, sys
            import mlbench_marker as m
            with m.stage("s"):
                pass
            print(json.dumps({"torch": "torch" in sys.modules, "version": sys.version.split()[0]}))
        """)
        self.assertFalse(info["torch"])  # the client did not import it
        self.assertEqual(self.facts_of(), {"framework.python.version": info["version"]})
        self.assertEqual([(e.kind, e.name) for e in events], [("B", "s"), ("E", "s")])

    def test_torch_facts_change_and_dataloader(self):
        _, _, events, _, _ = self.run_child(FAKE_TORCH + """
import os, types
import mlbench_marker as m
m._FACTS_EVERY_NS = 0  # look at the facts on every stage begin
with m.stage("a"):
    pass
torch.set_num_threads(2)
with m.stage("b"):
    pass
loader = types.SimpleNamespace(num_workers=2, batch_size=16, pin_memory=True,
                               prefetch_factor=2, persistent_workers=False)
assert m.dataloader(loader) is loader
try:
    m.dataloader(object())
except TypeError as e:
    assert "num_workers" in str(e)
else:
    raise SystemExit("dataloader(object()) did not raise")
pid = os.fork()
if pid == 0:  # a DataLoader worker: torch would say 1 thread there
    torch.set_num_threads(1)
    with m.stage("worker"):
        pass
    os._exit(0)
os.waitpid(pid, 0)
""")
        sent = [(e.name, e.value) for e in self.facts]
        self.assertIn(("framework.torch.version", "9.9.9+fake"), sent)
        self.assertIn(("framework.torch.cuda_available", "false"), sent)
        threads = [v for k, v in sent if k == "framework.torch.num_threads"]
        self.assertEqual(threads, ["3", "2"])  # first, then the change; not the worker's 1
        self.assertNotIn("framework.torch.cuda_device", dict(sent))
        self.assertEqual(sent.count(("framework.torch.version", "9.9.9+fake")), 1)
        loader = {k: v for k, v in sent if k.startswith("framework.dataloader.")}
        self.assertEqual(loader, {"framework.dataloader.num_workers": "2",
                                  "framework.dataloader.batch_size": "16",
                                  "framework.dataloader.pin_memory": "true",
                                  "framework.dataloader.prefetch_factor": "2",
                                  "framework.dataloader.persistent_workers": "false"})
        parent = {e.pid for e in self.facts}
        self.assertEqual(len(parent), 1)
        worker = [e for e in events if e.name == "worker"]
        self.assertEqual(len(worker), 2)
        self.assertNotIn(worker[0].pid, parent)

    def test_real_torch(self):
        # This interpreter, or Debian's, whose python3-torch a virtual environment may lack.
        python = next((p for p in (sys.executable, "/usr/bin/python3") if os.path.exists(p) and
                       subprocess.run([p, "-c", "import torch"], capture_output=True,
                                      timeout=120).returncode == 0), None)
        if python is None:
            self.skipTest("PyTorch is not installed (Debian: python3-torch): only the fake "
                          "module was tested")
        info, _, _, _, _ = self.run_child(python=python, code="""
            import json
            import torch
            import mlbench_marker as m
            torch.set_num_threads(1)
            with m.stage("s"):
                pass
            print(json.dumps({"version": torch.__version__,
                              "threads": torch.get_num_threads()}))
        """)
        facts = self.facts_of()
        self.assertEqual(facts["framework.torch.version"], info["version"])
        self.assertEqual(facts["framework.torch.num_threads"], str(info["threads"]))
        self.assertIn(facts["framework.torch.cuda_available"], ("true", "false"))


# torch with CUDA initialised, whose current stream is busy while BUSY holds a stage's name
FAKE_CUDA_TORCH = """
import sys, types
BUSY = set()
queries = []
class Stream:
    def query(self):
        queries.append(1)
        return not BUSY
torch = types.ModuleType("torch")
torch.__version__ = "9.9.9+fake"
torch.get_num_threads = lambda: 1
torch.cuda = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                   current_stream=Stream, get_device_name=lambda i: "Fake GPU",
                                   current_device=lambda: 0)
sys.modules["torch"] = torch
"""


class GpuQueuedTest(unittest.TestCase):
    """The instant mlbench.gpu_queued just before the end of a stage that leaves CUDA work queued
    (docs/markers.md): only where torch was imported and CUDA initialised by the script, at most
    once a second per stage name."""

    RING = False
    setUp = MarkerClientTest.setUp
    tearDown = MarkerClientTest.tearDown
    run_child = MarkerClientTest.run_child

    def test_queued_work_at_the_end(self):
        info, err, events, _, _ = self.run_child(FAKE_CUDA_TORCH + """
import json
import mlbench_marker as m
m._QUEUED_EVERY_NS = 0  # check every end
BUSY.add("train")
with m.stage("train"):
    pass
BUSY.clear()
with m.stage("eval"):  # synchronised: nothing queued
    pass
BUSY.add("x")
m.begin("step"); m.end("step")  # begin/end as well as stage()
print(json.dumps({"queries": len(queries)}))
""")
        self.assertEqual(err, "")
        self.assertEqual([(e.kind, e.name) for e in events],
                         [("B", "train"), ("I", "mlbench.gpu_queued"), ("E", "train"),
                          ("B", "eval"), ("E", "eval"),
                          ("B", "step"), ("I", "mlbench.gpu_queued"), ("E", "step")])
        self.assertEqual(info["queries"], 3)

    def test_at_most_once_a_second_per_name(self):
        info, _, events, _, _ = self.run_child(FAKE_CUDA_TORCH + """
import json
import mlbench_marker as m
BUSY.add("always")
for name in ("a", "a", "a", "b", "a"):
    with m.stage(name):
        pass
print(json.dumps({"queries": len(queries)}))
""")
        names = [e.name for e in events if e.kind in "BEI"]
        self.assertEqual(names, ["a", "mlbench.gpu_queued", "a", "a", "a", "a", "a",
                                 "b", "mlbench.gpu_queued", "b", "a", "a"])
        self.assertEqual(info["queries"], 2)

    def test_no_cuda_no_check(self):
        # torch imported without CUDA initialised, and a torch whose stream raises: no instant
        info, err, events, _, _ = self.run_child(FAKE_CUDA_TORCH + """
import json
import mlbench_marker as m
m._QUEUED_EVERY_NS = 0
BUSY.add("x")
torch.cuda.is_initialized = lambda: False
with m.stage("a"):
    pass
torch.cuda.is_initialized = lambda: True
def broken():
    raise RuntimeError("CUDA error: an illegal memory access")
torch.cuda.current_stream = broken
with m.stage("b"):
    pass
print(json.dumps({"queries": len(queries)}))
""")
        self.assertEqual(err, "")
        self.assertEqual([(e.kind, e.name) for e in events],
                         [("B", "a"), ("E", "a"), ("B", "b"), ("E", "b")])
        self.assertEqual(info["queries"], 0)


@unittest.skipUnless(RINGS, "rings are written on x86-64 only")
class RingGpuQueuedTest(GpuQueuedTest):
    """The same with rings: the instant travels in the ring with the stage's events."""

    RING = True


@unittest.skipUnless(RINGS, "rings are written on x86-64 only")
class RingMarkerClientTest(MarkerClientTest):
    """Every MarkerClientTest script again with MLBENCH_MARKER_RING=1: the same events, whose
    B, E, C and I now all travel in rings (metadata stays datagrams)."""

    RING = True

    def run_child(self, code, *args, **kwargs):
        result = super().run_child(code, *args, **kwargs)
        datagrams = [e for e in result[2] if e.kind in "BECI" and e.via == "datagram"]
        self.assertEqual(datagrams, [], "events sent as datagrams although rings are on")
        if any(e.kind in "BECI" for e in result[2]):
            self.assertTrue(self.rings)
        return result

    def test_send_errors_are_swallowed(self):
        # The script is its own harness: it binds, connects, then closes the receiving end.
        # Names already announced still go to the ring; a new name cannot be announced (its
        # events are lost as datagrams); a new thread cannot hand over a ring (datagrams).
        self.run_child("""
            import os, socket, sys, threading
            path = sys.argv[1]
            rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            rx.bind(path)
            os.environ["MLBENCH_MARKER_SOCKET"] = path
            os.environ["MLBENCH_MARKER_RING"] = "1"
            import mlbench_marker as m
            m.begin("a")
            assert rx.recv(4096).startswith(b"M ")  # the framework facts come first
            assert b" mlbench.ring 131072" in rx.recv(4096)  # (the kernel closes the fd)
            assert rx.recv(4096).endswith(b" mlbench.name 1 a")
            rx.close()
            os.unlink(path)
            m.end("a"); m.counter("c", 1); m.meta("k", "v"); m.instant("i")
            with m.stage("s"):
                pass
            assert m.enabled()
            assert m._tls.ring.head == 2, m._tls.ring.head  # B a, E a
            assert m._names == {"a": 1}, m._names
            def other():
                m.instant("a")
                assert m._tls.ring is None
            t = threading.Thread(target=other)
            t.start()
            t.join()
        """, os.path.join(self.tmp, "own.sock"), enabled=False, ring=False)


@unittest.skipUnless(RINGS, "rings are written on x86-64 only")
class RingFrameworkFactsTest(FrameworkFactsTest):
    """The framework facts stay datagrams, the same with rings on."""

    RING = True


@unittest.skipUnless(RINGS, "rings are written on x86-64 only")
class RingTransportTest(unittest.TestCase):
    """The rings themselves (include/mlbench/marker_ring.h)."""

    RING = True
    setUp = MarkerClientTest.setUp
    tearDown = MarkerClientTest.tearDown
    run_child = MarkerClientTest.run_child

    def new_receiver(self):
        """A fresh receiver on the same path, for a second script in one test."""
        if not self.rx._stop.is_set():
            self.rx.stop()
        os.unlink(self.sock_path)
        self.rx = Receiver(self.sock_path)

    def records_of(self, ring):
        """The ring's unread records as (kind, name, value)."""
        return [(chr(kind), self.names[(ring.pid, nid)], value)
                for _, value, nid, kind in ring.records()]

    def ring_of(self, pid, tid):
        rings = [r for r in self.rings if (r.pid, r.tid) == (pid, tid)]
        self.assertEqual(len(rings), 1, f"rings of {pid}/{tid}: {len(rings)} of {self.rings}")
        return rings[0]

    def test_two_threads_write_two_rings(self):
        info, err, events, t0, t1 = self.run_child("""
            import json, os, threading
            import mlbench_marker as m
            barrier = threading.Barrier(2)
            tids = {}

            def run(key):
                barrier.wait()  # both threads alive at once, so their ids differ
                tids[key] = threading.get_native_id()
                for i in range(3):
                    with m.stage("work"):
                        m.counter("items", i + (0.5 if key == "a" else 0.25))
                m.instant("done_" + key)
                barrier.wait()

            m.begin("main")
            threads = [threading.Thread(target=run, args=(k,)) for k in "ab"]
            for t in threads:
                t.start()
            for t in threads:
                t.join()  # the threads end: their rings keep what they wrote
            m.end("main")
            tids["main"] = threading.get_native_id()
            print(json.dumps({"pid": os.getpid(), "tids": tids}))
        """)
        self.assertEqual(err, "")
        pid, tids = info["pid"], info["tids"]
        self.assertEqual(len(set(tids.values())), 3)
        self.assertEqual(len(self.rings), 3)
        for key, step in (("a", 0.5), ("b", 0.25)):
            ring = self.ring_of(pid, tids[key])
            expected = []
            for i in range(3):
                expected += [("B", "work", 0.0), ("C", "items", i + step), ("E", "work", 0.0)]
            expected.append(("I", "done_" + key, 0.0))
            self.assertEqual(self.records_of(ring), expected)
            times = [r[0] for r in ring.records()]
            self.assertEqual(times, sorted(times))
            self.assertTrue(all(t0 <= t <= t1 for t in times))
            self.assertEqual((ring.counter(RING_HEAD), ring.counter(RING_BEGUN),
                              ring.counter(RING_DROPPED), ring.counter(RING_TAIL)),
                             (10, 10, 0, 0))
            self.assertEqual(ring.capacity, (4 << 20) // 32)  # the default, 4 MiB
        main = self.ring_of(pid, tids["main"])
        self.assertEqual(self.records_of(main), [("B", "main", 0.0), ("E", "main", 0.0)])
        # one id per name for the whole process, 1, 2, 3... whichever thread used it first
        self.assertEqual(sorted(self.names), [(pid, i) for i in range(1, 6)])
        self.assertEqual(sorted(self.names.values()),
                         ["done_a", "done_b", "items", "main", "work"])
        # each thread hands over its ring before its other datagrams
        for tid in tids.values():
            mine = [e for e in self.datagrams
                    if e.tid == tid and not e.name.startswith("framework.")]
            self.assertEqual(mine[0].name, "mlbench.ring", mine)
            self.assertEqual(sum(e.name == "mlbench.ring" for e in mine), 1)
        self.assertEqual(len(events), 2 + 2 * 10)
        self.assertTrue(all(e.via == "ring" for e in events))

    def test_forked_child_has_its_own_ring_and_names(self):
        info, err, events, _, _ = self.run_child("""
            import json, os
            import mlbench_marker as m
            m.begin("a")  # the parent's ring and name 1 exist before the fork
            pid = os.fork()
            if pid == 0:
                m.begin("a")
                m.instant("b")
                m.end("a")
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            assert status == 0, status
            m.instant("c")
            m.end("a")
            print(json.dumps({"parent": os.getpid(), "child": pid}))
        """)
        self.assertEqual(err, "")
        parent, child = info["parent"], info["child"]
        self.assertEqual(len(self.rings), 2)
        parent_ring = self.ring_of(parent, parent)
        child_ring = self.ring_of(child, child)
        self.assertEqual(self.records_of(parent_ring),
                         [("B", "a", 0.0), ("I", "c", 0.0), ("E", "a", 0.0)])
        self.assertEqual(self.records_of(child_ring),
                         [("B", "a", 0.0), ("I", "b", 0.0), ("E", "a", 0.0)])
        # the child numbers its names afresh and announces "a" again
        self.assertEqual({k: v for k, v in self.names.items() if k[0] == child},
                         {(child, 1): "a", (child, 2): "b"})
        self.assertEqual({k: v for k, v in self.names.items() if k[0] == parent},
                         {(parent, 1): "a", (parent, 2): "c"})
        child_rings = [e for e in self.datagrams if e.name == "mlbench.ring" and e.pid == child]
        self.assertEqual(len(child_rings), 1)
        self.assertEqual([e.pid for e in events], [parent, child, child, child, parent, parent])

    def test_full_ring_counts_every_lost_event(self):
        _, err, events, _, _ = self.run_child("""
            import mlbench_marker as m
            for i in range(100):
                with m.stage("s"):  # 200 events, 128 fit
                    pass
            m.instant("late")  # a new name, announced, but its record is lost too
            m.meta("k", "v")  # metadata still goes
        """, env_extra={RING_BYTES_ENV: "4096"})
        self.assertEqual(err, "")
        ring, = self.rings
        self.assertEqual(ring.capacity, 128)
        self.assertEqual(ring.size, 256 + 128 * 32)
        self.assertEqual((ring.counter(RING_HEAD), ring.counter(RING_BEGUN),
                          ring.counter(RING_DROPPED), ring.counter(RING_TAIL)),
                         (128, 128, 201 - 128, 0))
        self.assertEqual(self.records_of(ring), [("B", "s", 0.0), ("E", "s", 0.0)] * 64)
        self.assertEqual([(e.kind, e.body) for e in events],
                         [("B", "s"), ("E", "s")] * 64 + [("M", "k v")])

    def test_writer_rereads_tail_when_full(self):
        # The script is its own mlbench: it receives its ring and moves its tail.
        self.run_child("""
            import array, mmap, os, socket, sys
            path = sys.argv[1]
            rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            rx.bind(path)
            os.environ["MLBENCH_MARKER_SOCKET"] = path
            os.environ["MLBENCH_MARKER_RING"] = "1"
            os.environ["MLBENCH_MARKER_RING_BYTES"] = "5000"  # rounded down: 4096
            import mlbench_marker as m
            m.counter("v", 0)
            fds = array.array("i")
            while True:
                data, anc, _, _ = rx.recvmsg(4096, socket.CMSG_SPACE(4))
                if anc:
                    fds.frombytes(anc[0][2])
                    break
            assert data.endswith(b" mlbench.ring 128"), data
            mm = mmap.mmap(fds[0], 256 + 128 * 32)
            q = memoryview(mm).cast("Q")
            for i in range(1, 128):
                m.counter("v", i)
            assert (q[8], q[9], q[10]) == (128, 128, 0), list(q[8:11])
            m.counter("v", 128)  # full: lost
            assert (q[8], q[10]) == (128, 1), list(q[8:11])
            q[16] = 100  # mlbench read 100 records: 100 slots are free again
            for i in range(129, 229):
                m.counter("v", i)
            assert (q[8], q[9], q[10]) == (228, 228, 1), list(q[8:11])
            m.counter("v", 229)  # full again
            assert (q[8], q[10]) == (228, 2), list(q[8:11])
            import struct
            for n in range(100, 228):  # record n sits in slot n % 128; 128 was lost
                t, v, nid, kind = struct.unpack_from("=qdIB11x", mm, 256 + (n % 128) * 32)
                assert (v, nid, kind) == (n if n < 128 else n + 1, 1, ord("C")), (n, v)
        """, os.path.join(self.tmp, "own.sock"), enabled=False, ring=False)

    def test_names_announced_once_before_use_by_racing_threads(self):
        info, err, events, _, _ = self.run_child("""
            import json, os, threading
            import mlbench_marker as m
            barrier = threading.Barrier(4)

            def run():
                barrier.wait()
                for i in range(50):
                    m.instant(f"n{i}")

            threads = [threading.Thread(target=run) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            print(json.dumps({"pid": os.getpid()}))
        """)
        self.assertEqual(err, "")
        self.assertEqual(len(self.rings), 4)
        # ring_events (in run_child) checked that each id was announced once, before any
        # record using it; here: one id per name, and every thread's records resolve to the
        # names it wrote, in order.
        self.assertEqual(sorted(self.names.values()), sorted(f"n{i}" for i in range(50)))
        self.assertEqual(sorted(k[1] for k in self.names), list(range(1, 51)))
        for ring in self.rings:
            self.assertEqual(self.records_of(ring), [("I", f"n{i}", 0.0) for i in range(50)])
        announcements = [e for e in self.datagrams if e.name == "mlbench.name"]
        self.assertEqual(len(announcements), 50)
        self.assertEqual(len(events), 200)

    def test_names_beyond_the_limit_go_as_datagrams(self):
        _, err, events, _, _ = self.run_child("""
            import mlbench_marker as m
            m._RING_MAX_NAMES = 2
            for name in ["a", "b", "c", "a", "c", "b"]:
                m.instant(name)
            m.counter("d", 2.5)
        """)
        self.assertEqual(err, "")
        self.assertEqual(sorted(self.names.values()), ["a", "b"])
        self.assertEqual([(e.kind, e.body, e.via) for e in events],
                         [("I", "a", "ring"), ("I", "b", "ring"), ("I", "c", "datagram"),
                          ("I", "a", "ring"), ("I", "c", "datagram"), ("I", "b", "ring"),
                          ("C", "d 2.5", "datagram")])

    def test_rank_and_facts_go_before_the_first_event(self):
        _, err, events, _, _ = self.run_child("""
            import mlbench_marker as m
            with m.stage("s"):
                pass
        """, env_extra={"RANK": "3", "WORLD_SIZE": "4"})
        self.assertEqual(err, "")
        names = [e.name for e in self.datagrams]
        self.assertEqual(names[0], "mlbench.rank")
        self.assertEqual(self.datagrams[0].value, "3 4")
        self.assertEqual(names[1:], ["framework.python.version", "mlbench.ring", "mlbench.name"])
        first = min(e.t_ns for e in events if e.via == "ring")
        self.assertTrue(all(d.t_ns < first for d in self.datagrams))
        self.assertEqual([(e.kind, e.body) for e in events],
                         [("M", "mlbench.rank 3 4"), ("B", "s"), ("E", "s")])

    def test_meta_stays_a_datagram(self):
        _, err, events, _, _ = self.run_child("""
            import mlbench_marker as m
            m.meta("k", "v w")
            with m.stage("s"):
                m.meta("batch_size", 64)
        """)
        self.assertEqual(err, "")
        self.assertEqual([(e.kind, e.body, e.via) for e in events],
                         [("M", "k v w", "datagram"), ("B", "s", "ring"),
                          ("M", "batch_size 64", "datagram"), ("E", "s", "ring")])
        self.assertEqual(len(self.rings), 1)

    def test_datagrams_unless_rings_are_offered(self):
        code = """
            import mlbench_marker as m
            with m.stage("s"):
                m.counter("c", 1.5)
        """
        for value in (None, "0", "2", "true", ""):
            with self.subTest(MLBENCH_MARKER_RING=value):
                self.new_receiver()
                extra = {} if value is None else {RING_ENV: value}
                _, err, events, _, _ = self.run_child(code, ring=False, env_extra=extra)
                self.assertEqual(err, "")
                self.assertEqual(self.rings, [])
                self.assertEqual([e.name for e in self.datagrams if e.kind == "M"],
                                 ["framework.python.version"])
                self.assertEqual([(e.kind, e.body, e.via) for e in events],
                                 [("B", "s", "datagram"), ("C", "c 1.5", "datagram"),
                                  ("E", "s", "datagram")])

    def test_datagrams_on_other_machines(self):
        _, err, events, _, _ = self.run_child("""
            import platform
            platform.machine = lambda: "aarch64"  # no total store order: no rings
            import mlbench_marker as m
            with m.stage("s"):
                pass
        """)
        self.assertEqual(err, "")
        self.assertEqual(self.rings, [])
        self.assertEqual([(e.kind, e.body, e.via) for e in events],
                         [("B", "s", "datagram"), ("E", "s", "datagram")])

    def test_failed_ring_setup_keeps_datagrams_for_that_thread(self):
        info, err, events, _, _ = self.run_child("""
            import json, os, threading
            import mlbench_marker as m
            create = os.memfd_create
            def fail(*args):
                raise OSError(24, "Too many open files")
            os.memfd_create = fail
            m.instant("first")  # this thread's ring cannot be made
            os.memfd_create = create
            m.instant("second")  # ... and it is not tried again
            def other():
                m.instant("third")  # another thread makes its own
            t = threading.Thread(target=other)
            t.start()
            t.join()
            print(json.dumps({"ring": m._tls.ring}))
        """)
        self.assertEqual(err, "")
        self.assertIsNone(info["ring"])
        self.assertEqual(len(self.rings), 1)
        self.assertEqual([(e.kind, e.body, e.via) for e in events],
                         [("I", "first", "datagram"), ("I", "second", "datagram"),
                          ("I", "third", "ring")])
        self.assertNotEqual(events[2].tid, events[0].tid)

    def test_unparsable_ring_bytes_mean_the_default(self):
        for value, capacity in (("abc", 1 << 17), ("4096", 128), ("1", 1 << 17),
                                ("3000000", 1 << 16), (str(1 << 40), 1 << 25)):
            with self.subTest(MLBENCH_MARKER_RING_BYTES=value):
                self.new_receiver()
                self.run_child("""
                    import mlbench_marker as m
                    m.instant("i")
                """, env_extra={RING_BYTES_ENV: value})
                ring, = self.rings
                self.assertEqual(ring.capacity, capacity)
                self.assertEqual(self.records_of(ring), [("I", "i", 0.0)])


class ArgumentCheckTest(unittest.TestCase):
    """Bad arguments raise in this (disabled) process too: a workload that runs alone also
    runs under mlbench."""

    def test_module_is_disabled_here(self):
        self.assertFalse(mlbench_marker.enabled())
        self.assertIsNone(mlbench_marker.begin("ok"))

    def test_bad_names_raise_value_error_naming_the_value(self):
        for name in ["", "a b", "a\tb", "a\nb", "a\x00b", "a\x7fb", "x" * 4097, "\udc80"]:
            for call in (mlbench_marker.begin, mlbench_marker.end, mlbench_marker.instant,
                         mlbench_marker.stage, lambda n: mlbench_marker.counter(n, 1.0),
                         lambda n: mlbench_marker.meta(n, "v")):
                with self.assertRaises(ValueError, msg=f"{name!r} {call}") as ctx:
                    call(name)
                self.assertIn(repr(name)[:20], str(ctx.exception))

    def test_bad_types_raise_type_error(self):
        for name in [None, 5, b"load", ["a"]]:
            with self.assertRaises(TypeError):
                mlbench_marker.begin(name)
        for value in ["1.0", b"1", None, [1], object()]:
            with self.assertRaises(TypeError):
                mlbench_marker.counter("c", value)
        with self.assertRaises(ValueError):
            mlbench_marker.counter("c", 10 ** 400)
        for name in [None, 5, b"load", ["a"], {}]:  # stage() looks names up in its cache first
            with self.assertRaises(TypeError):
                mlbench_marker.stage(name)

    def test_stage_objects_are_shared_per_name(self):
        # A stage holds no state: stage() hands out one object per name, which nests.
        self.assertIs(mlbench_marker.stage("shared"), mlbench_marker.stage("shared"))
        self.assertIsNot(mlbench_marker.stage("shared"), mlbench_marker.stage("other"))
        outer = mlbench_marker.stage("shared")
        with outer:
            with mlbench_marker.stage("shared"):
                pass
        self.assertEqual(repr(outer), "stage('shared')")

    def test_bad_meta_values(self):
        for value in ["a\nb", "tab\there", "\x00"]:
            with self.assertRaises(ValueError) as ctx:
                mlbench_marker.meta("k", value)
            self.assertIn(repr(value), str(ctx.exception))
        with self.assertRaises(ValueError):
            mlbench_marker.meta("k", "v" * 5000)
        mlbench_marker.meta("k", "spaces are fine")
        mlbench_marker.meta("k", "")
        mlbench_marker.meta("k", 3.5)

    def test_ring_bytes(self):
        # As the C client reads it (lib/marker/marker_ring.c): digits only, below 4096 or
        # beyond 64 bits the default (4 MiB), above 1 GiB 1 GiB, then rounded down.
        saved = os.environ.pop(RING_BYTES_ENV, None)
        default = 4 << 20
        try:
            self.assertEqual(mlbench_marker._ring_bytes(), default)  # unset
            for text, size in [("4096", 4096), ("5000", 4096), ("8191", 4096), ("8192", 8192),
                               ("1048577", 1 << 20), ("04096", 4096), ("4095", default),
                               ("1", default), ("0", default), (str(1 << 30), 1 << 30),
                               (str((1 << 31) - 1), 1 << 30), (str((1 << 64) - 1), 1 << 30),
                               (str(1 << 64), default), ("9" * 30, default), ("", default),
                               ("abc", default), ("-4096", default), ("+4096", default),
                               ("4k", default), ("1e6", default), (" 4096", default),
                               ("4096 ", default), ("\u0664\u0660\u0669\u0666", default)]:
                os.environ[RING_BYTES_ENV] = text
                self.assertEqual(mlbench_marker._ring_bytes(), size, text)
        finally:
            os.environ.pop(RING_BYTES_ENV, None)
            if saved is not None:
                os.environ[RING_BYTES_ENV] = saved

    def test_rings_only_when_offered(self):
        saved = os.environ.pop(RING_ENV, None)
        try:
            self.assertEqual(mlbench_marker._ring_setting(), 0)
            os.environ[RING_ENV] = "0"
            self.assertEqual(mlbench_marker._ring_setting(), 0)
            os.environ[RING_ENV] = "1"
            self.assertEqual(mlbench_marker._ring_setting(), (4 << 20) // 32 if RINGS else 0)
        finally:
            os.environ.pop(RING_ENV, None)
            if saved is not None:
                os.environ[RING_ENV] = saved

    def test_valid_calls_return_none(self):
        self.assertIsNone(mlbench_marker.counter("c", float("nan")))
        self.assertIsNone(mlbench_marker.counter("c", True))
        self.assertIsNone(mlbench_marker.instant("n" * 4000))

        @mlbench_marker.stage("f")
        def f():
            return 7

        self.assertEqual(f(), 7)


if __name__ == "__main__":
    unittest.main()

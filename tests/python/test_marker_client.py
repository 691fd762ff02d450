"""Tests of the pure-Python marker client (python/mlbench_marker).

Each test binds its own Unix datagram socket in a temporary folder and runs a small script in
a subprocess with MLBENCH_MARKER_SOCKET pointing at it (the module latches its state on the
first call, so enabled behaviour is only tested in fresh processes), then checks the exact
datagrams received. Argument checking in disabled mode is tested in this process.
Run: PYTHONPATH=python python3 -m unittest discover -s tests/python -p test_marker_client.py
"""

import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

ENV = "MLBENCH_MARKER_SOCKET"
PKG_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "..", "python"))
if PKG_DIR not in sys.path:
    sys.path.insert(0, PKG_DIR)
os.environ.pop(ENV, None)  # this process tests the disabled mode
import mlbench_marker  # noqa: E402

EVENT_RE = re.compile(r"([BECMI]) ([0-9]+) ([0-9]+) ([0-9]+) ([^\x00-\x20\x7f]+)(?: (.*))?",
                      re.DOTALL)


class Event:
    """One parsed datagram; `raw` is its text."""

    def __init__(self, data):
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


class Receiver:
    """Drains a bound datagram socket in a thread (senders block when its queue is full)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.05)
        self.data = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            try:
                self.data.append(self.sock.recv(65536))
            except socket.timeout:
                if self._stop.is_set():  # sends are synchronous: the queue is drained
                    return

    def stop(self):
        """Stops the thread once the queue is empty; returns the parsed events in order."""
        self._stop.set()
        self._thread.join()
        self.sock.close()
        return [Event(d) for d in self.data]


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

    def run_child(self, code, *args, env_value=None, enabled=True, python=sys.executable):
        """Runs `code` as a script in a fresh interpreter; returns (stdout JSON or None,
        stderr, events, t0_ns, t1_ns). The script must exit 0."""
        script = os.path.join(self.tmp, "child.py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(code))
        env = dict(os.environ)
        env["PYTHONPATH"] = PKG_DIR + (os.pathsep + env["PYTHONPATH"]
                                       if env.get("PYTHONPATH") else "")
        env.pop(ENV, None)
        if enabled:
            env[ENV] = self.sock_path if env_value is None else env_value
        t0 = time.monotonic_ns()
        proc = subprocess.run([python, script, *args], env=env, capture_output=True,
                              text=True, timeout=120)
        t1 = time.monotonic_ns()
        events = self.rx.stop()
        # The framework facts every main process sends first are checked by FrameworkFactsTest;
        # the other tests compare the events their scripts send.
        self.facts = [e for e in events if e.kind == "M" and e.name.startswith("framework.")]
        events = [e for e in events if e not in self.facts]
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

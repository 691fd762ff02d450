"""End-to-end tests of the NVTX injection library (lib/nvtx/nvtx_inject.c, docs/nvtx.md): run
nvtx_prog (tests/integration/nvtx_prog.c, a program annotated with the CUDA toolkit's
header-only NVTX and nothing else) under `mlbench run --nvtx`, and check the stages, spans
(names, nesting depths, threads), the range started on one thread and ended on another, the
instants, the names made from wide strings, registered strings, categories and bad input, and
a forked child (its inherited open range sends nothing; its own range is its own stage).
Also: outside mlbench the library declines silently; it exports one symbol; a Python program
calling NVTX through ctypes (the toolkit's libnvtx3interop.so) is measured too.

`--nvtx` is used when `mlbench run --help` offers it, otherwise NVTX_INJECTION64_PATH is set
through env(1): the same library is loaded either way.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree), NVTX_LIB
(libmlbench_nvtx.so), NVTX_PROG (nvtx_prog; unset when the build found no NVTX headers: the
tests that need it skip), NVTX_INTEROP (libnvtx3interop.so, optional), NVTX_SANITIZED (set when
the library was built with sanitizers: it then loads only into sanitized programs)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
NVTX_LIB = os.path.abspath(os.environ.get("NVTX_LIB", "build/lib/nvtx/libmlbench_nvtx.so"))
NVTX_PROG = os.environ.get("NVTX_PROG")
NVTX_INTEROP = os.environ.get("NVTX_INTEROP")
SANITIZED = bool(os.environ.get("NVTX_SANITIZED"))

MS = 1_000_000
NAME_CAP = 4096 - 45  # longest stage name: a datagram less the longest event header

# name -> (depth on its thread, thread: "main" or "worker") of every span nvtx_prog makes.
SPANS = {
    "outer": (0, "main"),
    "inner_step": (1, "main"),
    "wide_grüße": (1, "main"),
    "ex_ascii": (2, "main"),
    "ex_ünicode_Ω": (1, "main"),
    "my_category": (1, "main"),
    "nvtx": (1, "main"),
    "ctl_name_x": (1, "main"),
    "bad?utf8": (1, "main"),
    "L" * NAME_CAP: (1, "main"),
    "my_domain:dstep": (1, "main"),
    "my_domain:registered_name": (2, "main"),
    "handoff": (0, "main"),
    "start_wide": (1, "main"),
    "start_ex": (1, "main"),
    "worker": (0, "worker"),
    "worker_inner": (1, "worker"),
    "my_domain:wstep": (1, "worker"),
    "my_domain:drange": (0, "worker"),
    "child": (0, "child"),
}
INSTANTS = ["my_domain:dmark", "mark_a", "mark_wé", "mark_ex"]

# Marks and ranges through the NVTX C library from Python: argv[1] is libnvtx3interop.so.
PY_PROG = r"""
import ctypes, sys, time
nvtx = ctypes.CDLL(sys.argv[1])
nvtx.nvtxRangePushA.argtypes = [ctypes.c_char_p]
nvtx.nvtxRangePushW.argtypes = [ctypes.c_wchar_p]
nvtx.nvtxMarkA.argtypes = [ctypes.c_char_p]
levels = [nvtx.nvtxRangePushA(b"py outer"), nvtx.nvtxRangePushW("py wïde")]
time.sleep(0.02)
levels.append(nvtx.nvtxRangePop())
nvtx.nvtxMarkA(b"py mark")
levels.append(nvtx.nvtxRangePop())
sys.exit(0 if levels == [0, 1, 1, 0] else f"wrong levels {levels}")
"""


def nvtx_option_offered():
    p = subprocess.run([MLBENCH, "run", "--help"], capture_output=True, text=True, timeout=30)
    return "--nvtx" in p.stdout + p.stderr


def measure(tmp, command, runs=1):
    """Runs `command` under mlbench run with NVTX injected; returns (exit status, stderr,
    result or None)."""
    out = os.path.join(tmp, "result.json")
    env = dict(os.environ, MLBENCH_NVTX_LIBRARY=NVTX_LIB)
    if nvtx_option_offered():
        inject = ["--nvtx", "--"]
    else:
        inject = ["--", "env", f"NVTX_INJECTION64_PATH={NVTX_LIB}"]
    p = subprocess.run([MLBENCH, "run", "--store", os.path.join(tmp, "store"), "-r", str(runs),
                        "-o", out, *inject, *command],
                       capture_output=True, text=True, env=env, timeout=120)
    result = None
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    return p.returncode, p.stderr, result


class NvtxProgTest(unittest.TestCase):
    """nvtx_prog measured once; each test reads that one result."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlbench-nvtx-")
        cls.run_ = None
        if NVTX_PROG:
            cls.rc, cls.err, cls.result = measure(cls.tmp.name, [NVTX_PROG, "--check"])
            if cls.result:
                cls.run_ = cls.result["runs"][0]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if not NVTX_PROG:
            self.skipTest("NVTX_PROG is not set: the build found no NVTX v3 headers "
                          "(nvtx3/nvToolsExt.h of the CUDA toolkit), so nvtx_prog was not built")
        self.assertEqual(self.rc, 0, self.err)
        self.assertIsNotNone(self.run_, self.err)

    def spans(self):
        return {s["name"]: s for s in self.run_["spans"]}

    def test_run_ok_and_levels_returned(self):
        # --check: nvtx_prog exits 1 when a push or pop returned a level NVTX does not specify.
        self.assertEqual(self.run_["status"], "ok", self.run_.get("stderr_tail"))
        self.assertEqual(self.run_["exit_code"], 0, self.run_.get("stderr_tail"))
        self.assertIsNone(self.run_["stderr_tail"])  # nothing to say: no warning

    def test_marker_stream_is_clean(self):
        m = self.run_["markers"]
        self.assertEqual((m["malformed"], m["unbalanced"], m["unclosed"]), (0, 0, 0), m)
        self.assertEqual(m["events"], 2 * len(SPANS) + len(INSTANTS))

    def test_stages_depths_and_threads(self):
        spans = self.spans()
        self.assertEqual(sorted(spans), sorted(SPANS))
        self.assertEqual(len(self.run_["spans"]), len(SPANS))  # each exactly once
        pid = spans["outer"]["pid"]
        worker_tid = spans["worker"]["tid"]
        child_pid = spans["child"]["pid"]
        self.assertNotEqual(worker_tid, pid)
        self.assertNotEqual(child_pid, pid)
        threads = {"main": (pid, pid), "worker": (pid, worker_tid),
                   "child": (child_pid, child_pid)}
        for name, (depth, thread) in SPANS.items():
            s = spans[name]
            with self.subTest(name=name[:40]):
                self.assertEqual(s["depth"], depth)
                self.assertEqual((s["pid"], s["tid"]), threads[thread])
                self.assertTrue(s["closed"])
        stages = {s["name"]: s for s in self.run_["stages"]}
        self.assertEqual(stages["ex_ascii"]["depth"], 2)
        self.assertEqual(stages["outer"]["count"], 1)

    def test_durations(self):
        spans = self.spans()
        for name, at_least_ms in [("outer", 50), ("inner_step", 20), ("wide_grüße", 10),
                                  ("ex_ascii", 10), ("ex_ünicode_Ω", 10),
                                  ("my_domain:dstep", 10), ("worker_inner", 10),
                                  ("start_wide", 5), ("start_ex", 5), ("my_domain:drange", 5)]:
            s = spans[name]
            with self.subTest(name=name):
                self.assertGreaterEqual(s["end_ns"] - s["start_ns"], at_least_ms * MS)
                self.assertLess(s["end_ns"] - s["start_ns"], (at_least_ms + 500) * MS)

    def test_range_ended_by_another_thread(self):
        # Started on the main thread, ended by the worker 10 + 5 + 40 ms later: one closed span
        # on the main thread (the protocol pairs B and E per thread).
        s = self.spans()["handoff"]
        self.assertEqual(s["tid"], s["pid"])
        self.assertGreaterEqual(s["end_ns"] - s["start_ns"], 55 * MS)
        worker = self.spans()["my_domain:drange"]
        self.assertGreater(s["end_ns"], worker["end_ns"])

    def test_instants(self):
        instants = self.run_["instants"]
        self.assertEqual([i["name"] for i in instants], INSTANTS)
        pid = self.spans()["outer"]["pid"]
        for i in instants:
            self.assertEqual((i["pid"], i["tid"]), (pid, pid))
        dstep = self.spans()["my_domain:dstep"]
        self.assertTrue(dstep["start_ns"] <= instants[0]["t_ns"] <= dstep["end_ns"])

    def test_names_made_valid(self):
        spans = self.spans()
        self.assertIn("ctl_name_x", spans)  # tab and newline
        self.assertIn("bad?utf8", spans)    # a byte that is not UTF-8
        longest = [n for n in spans if n.startswith("LLL")]
        self.assertEqual(len(longest), 1)
        self.assertEqual(len(longest[0].encode()), NAME_CAP)  # cut to fit one datagram


class NvtxLibraryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-nvtx-")

    def tearDown(self):
        self.tmp.cleanup()

    def test_outside_mlbench_declines_silently(self):
        # No MLBENCH_MARKER_SOCKET: the library declines; NVTX calls are no-ops, nothing printed.
        if not NVTX_PROG:
            self.skipTest("NVTX_PROG is not set: the build found no NVTX v3 headers")
        env = {k: v for k, v in os.environ.items() if k != "MLBENCH_MARKER_SOCKET"}
        env["NVTX_INJECTION64_PATH"] = NVTX_LIB
        p = subprocess.run([NVTX_PROG], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))

    def test_exports_only_the_entry_point(self):
        nm = shutil.which("nm")
        if not nm:
            self.skipTest("nm (binutils) is not installed")
        p = subprocess.run([nm, "-D", "--defined-only", NVTX_LIB], capture_output=True,
                           text=True, timeout=30, check=True)
        symbols = [line.split()[-1] for line in p.stdout.splitlines() if line.strip()]
        functions = [s for s in symbols if not s.startswith("_")]  # _init, _edata, __bss_start...
        self.assertEqual(functions, ["InitializeInjectionNvtx2"])

    def test_python_through_ctypes(self):
        if SANITIZED:
            self.skipTest("the library is built with sanitizers: it loads only into sanitized "
                          "programs, and python3 is not one")
        if not NVTX_INTEROP or not os.path.exists(NVTX_INTEROP):
            self.skipTest("NVTX_INTEROP is not set: the build found no libnvtx3interop.so "
                          "(CUDA toolkit) for Python to call NVTX through")
        rc, err, result = measure(self.tmp.name, [sys.executable, "-c", PY_PROG, NVTX_INTEROP])
        self.assertEqual(rc, 0, err)
        run = result["runs"][0]
        self.assertEqual(run["status"], "ok", run.get("stderr_tail"))
        spans = {s["name"]: s for s in run["spans"]}
        self.assertEqual(sorted(spans), ["py_outer", "py_wïde"])
        self.assertEqual((spans["py_outer"]["depth"], spans["py_wïde"]["depth"]), (0, 1))
        self.assertGreaterEqual(spans["py_wïde"]["end_ns"] - spans["py_wïde"]["start_ns"], 20 * MS)
        self.assertEqual([i["name"] for i in run["instants"]], ["py_mark"])


if __name__ == "__main__":
    unittest.main()

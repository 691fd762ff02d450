"""End-to-end tests of `mlbench run`: run the built binary on test workloads and check the JSON
result it writes (fields, statuses, stage times with tolerances) and its exit status.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree)."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))

MS = 1_000_000

# An outsider: sends forged events to the marker socket named by argv[1], prints its pid.
FORGER = """
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(sys.argv[1])
t, pid = time.monotonic_ns(), os.getpid()
for ev in (f"M {t} {pid} {pid} model forged", f"B {t} {pid} {pid} forged",
           f"C {t + 1} {pid} {pid} accuracy 0.999", f"E {t + 2} {pid} {pid} forged"):
    s.send(ev.encode())
print(pid)
"""


def within(value_ns, truth_ms, rel=0.10):
    """A measured span of a known sleep: never much shorter than the truth, and longer only by
    what a busy machine adds. The upper bound allows the tolerance plus half the truth (CI's
    shared machines stretched 100 ms sleeps by 30 %), which still fails a double count (2x)."""
    truth = truth_ms * MS
    return truth * (1 - rel) <= value_ns <= truth * (1 + max(rel, 0.1) + 0.5)


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def mlbench(self, *args, env=None, timeout=90):
        """Runs mlbench run with a private store; returns (exit status, stdout, stderr)."""
        e = dict(os.environ)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        e.update(env or {})
        p = subprocess.run([MLBENCH, "run", "--store", self.store, *args], capture_output=True,
                           text=True, env=e, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def result(self):
        """The one result file in the store."""
        files = glob.glob(os.path.join(self.store, "runs", "*.json"))
        self.assertEqual(len(files), 1, files)
        with open(files[0]) as f:
            return json.load(f)

    @staticmethod
    def stage(summary_or_run, name):
        for s in summary_or_run["stages"]:
            if s["name"] == name:
                return s
        raise AssertionError(f"stage {name!r} missing from {[s['name'] for s in summary_or_run['stages']]}")

    def test_seq_stages(self):
        rc, out, err = self.mlbench("-r", "3", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertEqual(r["schema"], "mlbench.result/1")
        self.assertEqual(len(r["runs"]), 3)
        s = r["summary"]
        self.assertEqual(s["runs_ok"], 3)
        names = [x["name"] for x in s["stages"]]
        self.assertEqual(names, ["load", "train", "step"])  # order of first begin
        self.assertTrue(within(self.stage(s, "load")["active_ns"]["median"], 50))
        self.assertTrue(within(self.stage(s, "train")["active_ns"]["median"], 100))
        step = self.stage(s, "step")
        self.assertEqual(step["depth"], 1)
        self.assertEqual(step["count_median"], 2)
        self.assertTrue(within(step["active_ns"]["median"], 100))
        # the wall time is the stages plus the process's own start and exit, which a sanitized
        # build makes longer: held to the same program timed here, not to a constant
        t0 = time.monotonic()
        subprocess.run([STAGE_PROG, "seq"], check=True, capture_output=True, timeout=60)
        own_ms = (time.monotonic() - t0) * 1000
        self.assertGreaterEqual(s["wall_ns"]["median"], 150 * MS)
        self.assertTrue(within(s["wall_ns"]["median"], max(150, own_ms), rel=0.5), own_ms)
        run = r["runs"][0]
        self.assertEqual(run["status"], "ok")
        self.assertEqual(run["exit_code"], 0)
        self.assertEqual(run["metadata"], {"batch_size": "32", "model": "test model"})
        counters = {c["name"]: c for c in run["counters"]}
        self.assertEqual(counters["images"]["n"], 2)
        self.assertEqual(counters["images"]["sum"], 64)
        self.assertEqual(counters["accuracy"]["last"], 0.875)
        self.assertEqual([i["name"] for i in run["instants"]], ["checkpoint"])
        self.assertEqual(len(run["spans"]), 4)
        self.assertTrue(all(sp["closed"] for sp in run["spans"]))
        self.assertIn("load", out)
        self.assertIn("total", out)

    def test_python_stages(self):
        rc, out, err = self.mlbench("-r", "3", "--", sys.executable, os.path.join(HERE, "stage_prog.py"), "workers")
        self.assertEqual(rc, 0, err)
        r = self.result()
        s = r["summary"]
        self.assertTrue(within(self.stage(s, "load")["active_ns"]["median"], 50))
        self.assertTrue(within(self.stage(s, "train")["active_ns"]["median"], 100))
        decode = [sp for sp in r["runs"][0]["spans"] if sp["name"] == "decode"]
        self.assertEqual(len(decode), 2)
        self.assertEqual(len({sp["pid"] for sp in decode}), 2, "one span from each worker process")
        self.assertEqual(r["runs"][0]["metadata"]["framework"], "none")

    def test_threads(self):
        rc, _, err = self.mlbench("-r", "3", "--", STAGE_PROG, "threads")
        self.assertEqual(rc, 0, err)
        r = self.result()
        for run in r["runs"]:
            work = self.stage(run, "work")
            self.assertEqual(work["count"], 2)
            spans = [sp for sp in run["spans"] if sp["name"] == "work"]
            self.assertEqual(len({sp["tid"] for sp in spans}), 2)
            # busy adds the two threads up; active is the wall time with either open. Checked
            # against the spans themselves: a busy machine can start the second thread late,
            # so the overlap is not always the whole 50 ms
            for sp in spans:
                self.assertTrue(within(sp["end_ns"] - sp["start_ns"], 50), sp)
            self.assertEqual(work["busy_ns"], sum(sp["end_ns"] - sp["start_ns"] for sp in spans))
            a, b = sorted((sp["start_ns"], sp["end_ns"]) for sp in spans)
            union = (max(a[1], b[1]) - a[0]) if b[0] <= a[1] else (a[1] - a[0]) + (b[1] - b[0])
            self.assertEqual(work["active_ns"], union, work)
            self.assertLess(work["active_ns"], work["busy_ns"], "the two spans overlap")

    def test_children(self):
        rc, _, err = self.mlbench("-r", "3", "--", STAGE_PROG, "children")
        self.assertEqual(rc, 0, err)
        r = self.result()
        for run in r["runs"]:
            spans = [sp for sp in run["spans"] if sp["name"] == "child"]
            self.assertEqual(len(spans), 2)
            self.assertEqual(len({sp["pid"] for sp in spans}), 2)
            self.assertTrue(within(self.stage(run, "child")["active_ns"], 100))

    def test_killed(self):
        rc, out, err = self.mlbench("-r", "2", "--", STAGE_PROG, "kill")
        self.assertEqual(rc, 1)
        r = self.result()
        for run in r["runs"]:
            self.assertEqual(run["status"], "signaled")
            self.assertEqual(run["signal"], "SIGKILL")
            self.assertIsNone(run["exit_code"])
            doomed = self.stage(run, "doomed")
            self.assertEqual(doomed["unclosed"], 1)
            self.assertTrue(within(self.stage(run, "setup")["active_ns"], 20, rel=0.5))
        self.assertIn("no_successful_run", [w["code"] for w in r["warnings"]])
        self.assertIn("SIGKILL", err)

    def test_timeout(self):
        t0 = time.monotonic()
        rc, _, err = self.mlbench("-r", "1", "--timeout", "300ms", "--", STAGE_PROG, "hang")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(rc, 1, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["status"], "timeout")
        self.assertEqual(run["signal"], "SIGTERM")
        forever = self.stage(run, "forever")
        self.assertEqual(forever["unclosed"], 1)
        self.assertTrue(within(run["wall_ns"], 300, rel=0.3), run["wall_ns"])

    def test_stubborn(self):
        """A workload that ignores SIGTERM is killed after the grace period."""
        rc, _, err = self.mlbench("-r", "1", "--timeout", "200ms", "--grace", "300ms", "--",
                                  STAGE_PROG, "stubborn")
        self.assertEqual(rc, 1, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["status"], "timeout")
        self.assertEqual(run["signal"], "SIGKILL")
        self.assertTrue(within(run["wall_ns"], 500, rel=0.3), run["wall_ns"])

    def test_interrupted(self):
        for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            with self.subTest(signal=sig.name):
                store = os.path.join(self.tmp.name, sig.name)
                p = subprocess.Popen([MLBENCH, "run", "--store", store, "-r", "5", "--", STAGE_PROG, "hang"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                time.sleep(0.7)
                p.send_signal(sig)
                out, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, status, err)
                files = glob.glob(os.path.join(store, "runs", "*.json"))
                self.assertEqual(len(files), 1)
                with open(files[0]) as f:
                    r = json.load(f)
                self.assertEqual(r["status"], "interrupted")
                self.assertEqual(r["interrupted_by"], sig.name)
                self.assertEqual(len(r["runs"]), 1)
                self.assertEqual(r["runs"][0]["status"], "interrupted")
                self.assertEqual(r["runs"][0]["signal"], "SIGTERM")  # what mlbench sent it
                self.assertEqual(self.stage(r["runs"][0], "forever")["unclosed"], 1)
                self.assertIn("interrupted", out)

    def test_failed_run(self):
        rc, _, err = self.mlbench("-r", "2", "--", STAGE_PROG, "fail")
        self.assertEqual(rc, 1)
        r = self.result()
        self.assertEqual([x["status"] for x in r["runs"]], ["failed", "failed"])
        self.assertEqual(r["runs"][0]["exit_code"], 3)
        self.assertIn("dataset missing", r["runs"][0]["stderr_tail"])
        self.assertIn("dataset missing", err)
        rc, _, _ = self.mlbench("-r", "3", "--fail-fast", "--", STAGE_PROG, "fail")
        self.assertEqual(rc, 1)
        runs = sorted(glob.glob(os.path.join(self.store, "runs", "*.json")), key=os.path.getmtime)
        with open(runs[-1]) as f:
            self.assertEqual(len(json.load(f)["runs"]), 1, "--fail-fast stops at the first failure")

    def test_command_not_found(self):
        rc, _, err = self.mlbench("-r", "3", "--", "no-such-command-mlbench")
        self.assertEqual(rc, 127)
        self.assertIn("command not found: no-such-command-mlbench", err)
        run = self.result()["runs"]
        self.assertEqual(len(run), 1)
        self.assertEqual(run[0]["status"], "failed")
        self.assertEqual(run[0]["exit_code"], 127)
        self.assertEqual(run[0]["error"], "command not found: no-such-command-mlbench")

    def test_quiet_failure_and_help(self):
        """-q hid why a run failed (issue 13: `run -r 1 -q -- nosuchcmd` exited 127 silently;
        the docs say errors are still printed); the workload's stderr tail reached the
        terminal raw (issue 12); `mlbench help run` printed the global usage."""
        rc, out, err = self.mlbench("-q", "-r", "1", "--", "no-such-command-mlbench")
        self.assertEqual(rc, 127)
        self.assertEqual(out, "")
        self.assertIn("command not found: no-such-command-mlbench", err)
        # a run that never ran gets no verdicts (issue 13: it was told a CPU quota may be
        # throttling it), and the warning says so once
        r = self.result()
        self.assertIsNone(r["analysis"])
        codes = [w["code"] for w in r["warnings"]]
        self.assertEqual(codes.count("no_successful_run"), 1)
        self.assertIn("no analysis is made", " ".join(w["message"] for w in r["warnings"]))
        rc, out, _ = self.mlbench("-r", "1", "--", "no-such-command-mlbench")
        self.assertNotIn("verdicts:", out)
        self.assertNotIn("findings", out)
        script = os.path.join(self.tmp.name, "evil.py")
        with open(script, "w") as f:
            f.write('import sys\nsys.stderr.write("evil\\x1b]0;owned\\x07 \\u202e end\\n")\n'
                    'sys.exit(3)\n')
        store = self.store
        for quiet in ([], ["-q"]):
            with self.subTest(quiet=bool(quiet)):
                self.store = os.path.join(self.tmp.name, f"s{len(quiet)}")
                rc, _, err = self.mlbench(*quiet, "-r", "1", "--", sys.executable, script)
                self.assertEqual(rc, 1, err)
                self.assertIn("exit status 3", err)
                self.assertIn("evil?]0;owned? ? end", err)
                for ch in ("\x1b", "\x07", "\u202e"):
                    self.assertNotIn(ch, err)
        self.store = store
        p = subprocess.run([MLBENCH, "help", "run"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("Usage: mlbench run "), p.stdout)
        p = subprocess.run([MLBENCH, "help", "nosuch"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no command 'nosuch'", p.stderr)

    def test_malformed_markers(self):
        rc, _, err = self.mlbench("-r", "1", "--", STAGE_PROG, "malformed")
        self.assertEqual(rc, 0, err)
        r = self.result()
        m = r["runs"][0]["markers"]
        self.assertEqual(m["malformed"], 6)
        self.assertEqual(m["unbalanced"], 1)
        self.assertTrue(any("overlong" in x for x in m["malformed_examples"]))
        codes = [w["code"] for w in r["warnings"]]
        self.assertIn("malformed_markers", codes)
        self.assertIn("unbalanced_markers", codes)
        self.assertEqual(self.stage(r["runs"][0], "fine")["count"], 1)

    def test_many_spans(self):
        rc, _, err = self.mlbench("-r", "1", "--", STAGE_PROG, "many")
        self.assertEqual(rc, 0, err)
        r = self.result()
        run = r["runs"][0]
        self.assertEqual(run["markers"]["events"], 50000)
        self.assertEqual(self.stage(run, "tick")["count"], 25000)
        self.assertEqual(len(run["spans"]), 20000)
        self.assertEqual(run["spans_dropped"], 5000)
        self.assertIn("spans_truncated", [w["code"] for w in r["warnings"]])

    def test_many_names(self):
        """Issue 12: 20 000 distinct stages open at once took 13.7 s and 1.25 GB to aggregate
        and wrote a 200 MB result; a run keeps the first 1000 names of each kind and counts
        the rest."""
        rc, out, err = self.mlbench("-r", "2", "--", STAGE_PROG, "wide", "1500")
        self.assertEqual(rc, 0, err)
        r = self.result()
        for run in r["runs"]:
            self.assertEqual(len(run["stages"]), 1000)
            self.assertEqual(run["markers"]["names_dropped"], 500)
            self.assertEqual(run["markers"]["name_events_dropped"], 1000)
            self.assertEqual(run["markers"]["unbalanced"], 0)
        names = [st["name"] for st in r["summary"]["stages"]]
        self.assertEqual(names, [f"s{i}" for i in range(1000)])
        self.assertIn("names_dropped", [w["code"] for w in r["warnings"]])
        self.assertIn("more than 1000 distinct", out)

    def test_no_markers(self):
        rc, out, err = self.mlbench("-r", "3", "--", "sleep", "0.05")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertEqual(r["summary"]["stages"], [])
        self.assertIsNone(r["runs"][0]["outside_ns"])
        # a whole process: sleep's 50 ms plus starting it, which a busy machine makes longer
        median = r["summary"]["wall_ns"]["median"]
        self.assertTrue(50 * MS <= median <= 95 * MS, r["summary"]["wall_ns"])
        # the text shows the same median as the JSON
        m = re.search(r"(?m)^total\s+(\d+\.\d+) ms", out)
        self.assertIsNotNone(m, out)
        self.assertAlmostEqual(float(m.group(1)), median / MS, delta=0.01)

    def test_shell_and_prepare(self):
        marker = os.path.join(self.tmp.name, "prepared")
        rc, _, err = self.mlbench("-r", "2", "--prepare", f"touch {marker}", "--cleanup", f"rm {marker}",
                                  "--", "test", "-e", marker)
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.exists(marker), "cleanup ran")
        rc, _, err = self.mlbench("-r", "1", "--prepare", "echo $(id)", "--", "true")
        self.assertEqual(rc, 2)
        self.assertIn("--shell", err)
        rc, _, err = self.mlbench("-r", "1", "--shell", "--", "exit 0 | cat")
        self.assertEqual(rc, 0, err)
        # issue 12: an operator after a pattern in one word slipped past the refusal and
        # "rm -f cache/*; cat keep.txt" ran as one rm of three words, deleting keep.txt
        work = os.path.join(self.tmp.name, "work")
        os.makedirs(os.path.join(work, "cache"))
        keep = os.path.join(work, "keep.txt")
        open(keep, "w").close()
        for cleanup, message in [("rm -f cache/*; cat keep.txt", "a pattern only a shell expands"),
                                 ("rm -f cache/x; cat keep.txt", "holds a shell operator (';')"),
                                 ("rm -f ~/x keep.txt", "'~', a pattern"),
                                 ("rm -f $KEEP", "uses a variable"),
                                 ("rm -f `echo keep.txt`", "command substitution")]:
            with self.subTest(cleanup=cleanup):
                p = subprocess.run([MLBENCH, "run", "--store", self.store, "-r", "1", "--cleanup",
                                    cleanup, "--", "true"], capture_output=True, text=True,
                                   cwd=work, env=dict(os.environ, KEEP="keep.txt"), timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)
                self.assertIn("add --shell", p.stderr)
                self.assertTrue(os.path.exists(keep), "nothing ran")
        # quoted, the same characters are words
        rc, _, err = self.mlbench("-r", "1", "--prepare", f"touch '{marker}*;'", "--", "true")
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(marker + "*;"))
        rc, _, err = self.mlbench("-r", "2", "--prepare", "false", "--", "true")
        self.assertEqual(rc, 1)
        self.assertIn("--prepare command failed", err)

    def test_output_file(self):
        out_path = os.path.join(self.tmp.name, "out.json")
        rc, _, err = self.mlbench("-r", "1", "-l", "baseline", "-o", out_path, "--", "true")
        self.assertEqual(rc, 0, err)
        with open(out_path) as f:
            r = json.load(f)
        self.assertEqual(r["label"], "baseline")
        self.assertEqual(r, self.result())
        self.assertEqual([f for f in os.listdir(self.tmp.name) if ".tmp." in f], [])

    def test_store_lost(self):
        """The store vanishes during the run: the result goes to TMPDIR, exit status 3."""
        runs = os.path.join(self.store, "runs")
        rc, out, err = self.mlbench("-r", "1", "--shell", "--", f"rm -rf {runs} && touch {runs}",
                                    env={"TMPDIR": self.tmp.name})
        self.assertEqual(rc, 3, err)
        saved = glob.glob(os.path.join(self.tmp.name, "mlbench-*.json"))
        self.assertEqual(len(saved), 1, err)
        self.assertIn(saved[0], err)
        with open(saved[0]) as f:
            self.assertEqual(json.load(f)["runs"][0]["status"], "ok")

    def test_automatic_runs(self):
        rc, _, err = self.mlbench("--", "sleep", "0.6")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertIsNone(r["config"]["runs"])
        # at least 3 runs and 5 s: 9 runs of 0.6 s, 8 if load made each take over 0.625 s;
        # the rule is checked against the result's own wall times
        walls = [run["wall_ns"] for run in r["runs"] if not run["warmup"]]
        want = next(k for k in range(3, len(walls) + 1) if sum(walls[:k]) >= 5e9)
        self.assertEqual(r["summary"]["runs_measured"], want, walls)
        self.assertIn(want, (8, 9), walls)
        rc, _, err = self.mlbench("--", "true")
        files = glob.glob(os.path.join(self.store, "runs", "*.json"))
        quick = [json.load(open(f)) for f in files]
        self.assertIn(10, [q["summary"]["runs_measured"] for q in quick], "at most 10")

    def test_litter_of_killed_runs(self):
        """issue 12: an mlbench killed with SIGKILL left its socket directory in $TMPDIR and
        half-written results in runs/, which nothing cleaned. The next run removes those of
        dead processes, and only those."""
        tmpdir = os.path.join(self.tmp.name, "t")
        runs = os.path.join(self.store, "runs")
        os.makedirs(tmpdir)
        os.makedirs(runs)
        dead = subprocess.Popen(["true"])
        dead.wait()
        live = os.getpid()
        for pid in (dead.pid, live):
            d = os.path.join(tmpdir, f"mlbench-{pid}-abcdef")
            os.makedirs(d)
            open(os.path.join(d, "marker.sock"), "w").close()
            open(os.path.join(runs, f"20990101T000000-aaaaaa.json.tmp.{pid}.abcdef"), "w").close()
        other = os.path.join(tmpdir, "mlbench-notapid-abcdef")  # not ours by its name
        os.makedirs(other)
        rc, _, err = self.mlbench("-r", "1", "--", "true", env={"TMPDIR": tmpdir})
        self.assertEqual(rc, 0, err)
        left = sorted(os.listdir(tmpdir))
        self.assertEqual(left, sorted([f"mlbench-{live}-abcdef", "mlbench-notapid-abcdef"]), left)
        temps = [n for n in os.listdir(runs) if ".tmp." in n]
        self.assertEqual(temps, [f"20990101T000000-aaaaaa.json.tmp.{live}.abcdef"])

    def test_warmup_kept(self):
        rc, _, err = self.mlbench("-r", "2", "-w", "1", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertEqual([x["warmup"] for x in r["runs"]], [True, False, False])
        self.assertEqual(r["summary"]["runs_measured"], 2)
        self.assertEqual(self.stage(r["summary"], "load")["n"], 2)

    def test_bad_input(self):
        cases = [
            (["--bogus", "--", "true"], "unknown option '--bogus'"),
            (["-r", "0", "--", "true"], "--runs '0'"),
            (["-r", "x", "--", "true"], "--runs 'x'"),
            (["--timeout", "-1", "--", "true"], "--timeout '-1'"),
            (["--timeout", "abc", "--", "true"], "--timeout 'abc'"),
            (["-o", "/nonexistent-dir/x.json", "--", "true"], "/nonexistent-dir"),
            (["-l", "", "--", "true"], "--label is empty"),
            (["--prepare", "", "--", "true"], "--prepare is empty"),
            (["-r"], "needs a value"),
            # issue 12: a duration that overflows once scaled, or is too long to be meant (it
            # was cast to nanoseconds out of range: every run "timed out" at once, or the
            # result document could not be built and was lost)
            (["-r", "2", "--grace", "1e308h", "--", "true"], "--grace '1e308h'"),
            (["--timeout", "1e10", "--", "true"], "--timeout '1e10' is not a positive duration up to 365 days"),
            (["--grace", "1e10", "--", "true"], "--grace '1e10' is not a positive duration up to 1h"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.mlbench(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertEqual(out, "")
        self.assertFalse(glob.glob(os.path.join(self.store, "runs", "*.json")), "no result for bad input")
        p = subprocess.run([MLBENCH, "frobnicate"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", p.stderr)
        # a store that cannot be created
        blocker = os.path.join(self.tmp.name, "file")
        open(blocker, "w").close()
        p = subprocess.run([MLBENCH, "run", "--store", blocker, "--", "true"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn(blocker, p.stderr)

    def test_json_summary(self):
        rc, out, err = self.mlbench("-r", "2", "--json", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual(j["status"], "complete")
        self.assertTrue(os.path.exists(j["result_file"]))
        self.assertEqual([s["name"] for s in j["summary"]["stages"]], ["load", "train", "step"])
        # not a terminal: no control characters anywhere
        self.assertFalse(re.search(r"[\x00-\x08\x0b-\x1f]", err))

    def test_progress_tty(self):
        """On a terminal, stderr carries a status line redrawn in place with the run, stage and
        elapsed time; the summary still goes to stdout."""
        import pty
        master, slave = pty.openpty()
        p = subprocess.Popen([MLBENCH, "run", "--store", self.store, "-r", "2", "--", STAGE_PROG, "hang"],
                             stdout=subprocess.PIPE, stderr=slave, text=True)
        os.close(slave)
        time.sleep(0.8)
        p.send_signal(signal.SIGINT)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        p.communicate(timeout=30)
        os.close(master)
        tty = b"".join(chunks).decode()
        self.assertRegex(tty, r"\r\x1b\[Krun 1/2  stage forever  \d")
        self.assertEqual(p.returncode, 130)

    def verdict(self, r, stage):
        for v in r["analysis"]["verdicts"]:
            if v["stage"] == stage:
                return v
        raise AssertionError(f"no verdict for {stage}: {r['analysis']}")

    def resource(self, entry, metric):
        for m in entry["resources"]:
            if m["metric"] == metric:
                return m
        raise AssertionError(f"{metric} missing")

    def require_quiet(self, r):
        """CPU verdicts need the CPUs: when other processes took them, mlbench must say so
        (the other_load warning), and the verdict cannot be judged."""
        codes = [w["code"] for w in r["warnings"]]
        if "other_load" in codes:
            self.skipTest("the machine was busy with other processes during the run "
                          "(mlbench warned other_load): CPU verdicts cannot be checked")
        if "cpu_steal" in codes:
            self.skipTest("the hypervisor took this machine's CPUs during the run "
                          "(mlbench warned cpu_steal): CPU verdicts cannot be checked")
        starved = [v["stage"] for v in (r.get("analysis") or {}).get("verdicts", [])
                   if v["rule"] == "cpu-starved"]
        if starved:
            self.skipTest(f"the workload's threads waited for a CPU (mlbench said cpu-starved for "
                          f"{starved}): CPU verdicts cannot be checked")

    def test_cpu_bound_parallel(self):
        if os.cpu_count() < 2:
            self.skipTest("needs 2 CPUs to tell parallel from single-thread work")
        rc, out, err = self.mlbench("-r", "1", "--interval", "50ms", "--", STAGE_PROG, "burn2")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.require_quiet(r)
        compute = self.stage(r["summary"], "compute")
        cores = self.resource(compute, "process_cpu_seconds_total")["mean"]
        self.assertGreater(cores, 1.5, cores)
        self.assertEqual(self.verdict(r, "compute")["rule"], "cpu-bound-parallel")
        self.assertIn("cpu-bound-parallel", out)

    def test_cpu_bound_single_thread(self):
        if os.cpu_count() < 2:
            self.skipTest("single-thread is only a bottleneck on a multi-core machine")
        rc, out, err = self.mlbench("-r", "1", "--interval", "50ms", "--", STAGE_PROG, "burn1")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.require_quiet(r)
        cores = self.resource(self.stage(r["summary"], "compute"), "process_cpu_seconds_total")["mean"]
        self.assertTrue(0.8 <= cores <= 1.2, cores)
        self.assertEqual(self.verdict(r, "compute")["rule"], "cpu-bound-single-thread")
        finding = [f for f in r["analysis"]["findings"] if f["rule"] == "cpu-bound-single-thread"]
        self.assertEqual(len(finding), 1)
        self.assertIn("parallel", finding[0]["recommendation"])
        self.assertGreater(finding[0]["saving_ns"], 0)
        self.assertEqual(r["analysis"]["bottleneck"], "compute")

    def test_idle(self):
        rc, out, err = self.mlbench("-r", "1", "--interval", "50ms", "--", STAGE_PROG, "sleeper")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertEqual(self.verdict(r, "wait")["rule"], "idle")
        samples = r["runs"][0]["samples"]
        self.assertGreaterEqual(len(samples["t_ns"]), 15)  # 1 s at 50 ms
        names = {s["metric"] for s in samples["series"]}
        self.assertIn("process_resident_bytes", names)
        self.assertIn("system_cpu_busy_ratio", names)

    def test_foreign_sender(self):
        """A process outside the workload's tree that learnt the socket's path sends a forged
        model, a stage and a counter: they are ignored and counted as foreign, with a warning;
        the markers of the workload, its child, grandchild and daemonised orphan all count."""
        path_file = os.path.join(self.tmp.name, "socket-path")
        e = dict(os.environ)
        p = subprocess.Popen([MLBENCH, "run", "--store", self.store, "-r", "1", "--", STAGE_PROG,
                              "tree-then-wait", path_file], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=e)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(path_file) and time.monotonic() < deadline:
                time.sleep(0.01)
            with open(path_file) as f:
                sock = f.read()
            forger = subprocess.run([sys.executable, "-c", FORGER, sock], capture_output=True,
                                    text=True, timeout=30)
            self.assertEqual(forger.returncode, 0, forger.stderr)
            forger_pid = int(forger.stdout)
        finally:
            open(path_file + ".sent", "w").close()
            out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        r = self.result()
        run = r["runs"][0]
        names = [s["name"] for s in run["stages"]]
        self.assertEqual(sorted(names), ["after", "child", "grandchild", "orphan", "own"],
                         (names, run["markers"], [(s["name"], s["pid"]) for s in run["spans"]]))
        self.assertEqual(run["metadata"].get("model"), "real")
        self.assertNotIn("accuracy", [c["name"] for c in run.get("counters", [])])
        m = run["markers"]
        self.assertGreaterEqual(m["foreign"], 4)  # meta, begin, end, counter
        self.assertEqual(m["first_foreign_pid"], forger_pid)
        self.assertEqual(m["malformed"], 0)
        warn = [w for w in r["warnings"] if w["code"] == "foreign_markers"]
        self.assertEqual(len(warn), 1, r["warnings"])
        self.assertIn(f"pid {forger_pid}", warn[0]["message"])
        self.assertIn("outside the workload's process tree", out + err)
        self.assertNotIn("forged", json.dumps(r))

    def test_harness_killed(self):
        """mlbench SIGKILLed mid-run: its workload does not live on, re-parented to init."""
        pid_file = os.path.join(self.tmp.name, "workload.pid")
        code = ("import os, sys, time\n"
                "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
                "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
                "time.sleep(60)\n")
        p = subprocess.Popen([MLBENCH, "run", "--store", self.store, "-r", "1", "--",
                              sys.executable, "-c", code, pid_file],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not os.path.exists(pid_file) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(pid_file) as f:
            pid = int(f.read())
        os.kill(pid, 0)  # running, under mlbench
        p.kill()
        p.wait(timeout=10)
        deadline = time.monotonic() + 3
        alive = True
        while alive and time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
                # a zombie waiting for init to reap it is gone too
                with open(f"/proc/{pid}/stat") as f:
                    alive = f.read().rsplit(")", 1)[1].split()[0] != "Z"
            except (ProcessLookupError, FileNotFoundError):
                alive = False
            if alive:
                time.sleep(0.02)
        if alive:
            os.kill(pid, signal.SIGKILL)
        self.assertFalse(alive, f"workload {pid} outlived the SIGKILLed mlbench")

    def test_short_lived_workers(self):
        """20 processes of 50 ms each: their CPU time is all counted, by rusage and by the sampler."""
        rc, out, err = self.mlbench("-r", "1", "--interval", "20ms", "--", STAGE_PROG, "forkers")
        self.assertEqual(rc, 0, err)
        run = self.result()["runs"][0]
        cpu_s = (run["user_ns"] + run["sys_ns"]) / 1e9
        self.assertGreater(cpu_s, 0.8, cpu_s)  # 20 x 50 ms = 1 s
        series = {s["metric"]: s for s in run["samples"]["series"]}
        values = [v for v in series["process_cpu_seconds_total"]["values"] if v is not None]
        self.assertGreater(max(values) - min(values), 0.8)

    def test_gpu_claim_without_gpu(self):
        """A run labelled for the GPU that used none is called out."""
        rc, out, err = self.mlbench("-r", "1", "-l", "resnet-gpu", "--", STAGE_PROG, "seq")
        self.assertEqual(rc, 0, err)
        codes = [w["code"] for w in self.result()["warnings"]]
        self.assertTrue({"gpu_not_used", "gpu_unverified"} & set(codes), codes)

    def fake_gpu(self, script, *args):
        """Runs mlbench with the fake NVML library replaying script (tests/fakes/fake_nvml.c)."""
        path = os.path.join(self.tmp.name, "nvml.script")
        with open(path, "w") as f:
            f.write(script)
        return self.mlbench(*args, env={"MLBENCH_NVML_LIBRARY": os.environ["FAKE_NVML"],
                                        "FAKE_NVML_SCRIPT": path})

    GPU = """devices 2
name 0 NVIDIA H200
cc 0 9 0
mem_total 0 150000000000
mem_used 0 20000000000
util 0 95/60
power 0 500000
throttle 0 0
procs 0 CHILD:20000000000
util 1 0/0
procs 1 -
"""

    def test_fake_gpu_bound(self):
        """A GPU busy at 95 % while the CPU sleeps: gpu-bound, only the GPU the workload used
        counts, memory headroom noticed, and a GPU label is not questioned."""
        rc, out, err = self.fake_gpu(self.GPU, "-r", "1", "-l", "gpu-run", "--interval", "50ms",
                                     "-v", "--", STAGE_PROG, "sleeper")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertEqual(r["sampling"]["sources"], ["proc", "system", "nvml"])
        self.assertEqual(r["analysis"]["gpus"], [0])
        self.assertEqual(self.verdict(r, "wait")["rule"], "gpu-bound")
        rules = [f["rule"] for f in r["analysis"]["findings"]]
        self.assertIn("gpu-memory-headroom", rules)
        util = self.resource(self.stage(r["summary"], "wait"), "gpu_utilization_ratio")
        self.assertAlmostEqual(util["mean"], 0.95)
        codes = [w["code"] for w in r["warnings"]]
        self.assertNotIn("gpu_not_used", codes)
        self.assertNotIn("gpu_throttling", codes)
        self.assertIn("GPU util", out)

    def test_fake_gpu_throttled(self):
        script = self.GPU.replace("throttle 0 0", "throttle 0 0 0x40")
        rc, out, err = self.fake_gpu(script, "-r", "1", "--interval", "50ms", "--", STAGE_PROG, "sleeper")
        self.assertEqual(rc, 0, err)
        codes = [w["code"] for w in self.result()["warnings"]]
        self.assertIn("gpu_throttling", codes)

    def test_serve(self):
        """run --serve exposes the running benchmark to Prometheus; a port in use is refused."""
        import socket
        import urllib.request
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        p = subprocess.Popen([MLBENCH, "run", "--store", self.store, "-r", "1", "--interval", "50ms",
                              "--serve", f"127.0.0.1:{port}", "--", STAGE_PROG, "sleeper"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            text, deadline = "", time.monotonic() + 10
            wanted = ('mlbench_stage_active{stage="wait"} 1',
                      "# TYPE mlbench_process_cpu_seconds_total counter")
            while not all(w in text for w in wanted) and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                        text = r.read().decode()
                except OSError:
                    pass
                time.sleep(0.05)
            self.assertIn('mlbench_stage_active{stage="wait"} 1', text)
            self.assertIn("# TYPE mlbench_process_cpu_seconds_total counter", text)
            # the port is taken while it runs
            rc, _, err = self.mlbench("-r", "1", "--serve", f"127.0.0.1:{port}", "--", "true")
            self.assertEqual(rc, 2)
            self.assertIn(str(port), err)
        finally:
            out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)

    def test_adaptive_interval(self):
        """Without --interval a short run is sampled often (10 ms at first); with one, at that
        interval. The counts allow a loaded machine to miss ticks."""
        rc, out, err = self.mlbench("-r", "1", "--", "sleep", "0.3")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertTrue(r["sampling"]["adaptive"])
        self.assertTrue(r["config"]["interval_adaptive"])
        self.assertEqual(r["sampling"]["first_interval_ns"], 10 * MS)
        self.assertEqual(r["sampling"]["interval_ns"], 100 * MS)
        t = r["runs"][0]["samples"]["t_ns"]
        self.assertGreaterEqual(len(t), 12, t)  # 28 on a quiet machine
        gaps = [b - a for a, b in zip(t, t[1:])]
        self.assertLess(min(gaps), 30 * MS, gaps)
        self.tmp.cleanup()
        self.setUp()
        rc, out, err = self.mlbench("-r", "1", "--interval", "100ms", "--", "sleep", "0.3")
        self.assertEqual(rc, 0, err)
        r = self.result()
        self.assertFalse(r["sampling"]["adaptive"])
        self.assertFalse(r["config"]["interval_adaptive"])
        self.assertLessEqual(len(r["runs"][0]["samples"]["t_ns"]), 6)

    def test_bad_interval(self):
        for value in ("5ms", "11s", "abc", "-1", "0"):
            with self.subTest(value=value):
                rc, out, err = self.mlbench("--interval", value, "--", "true")
                self.assertEqual(rc, 2)
                self.assertIn(f"--interval '{value}'", err)

    def test_schema(self):
        """Every field of a result is documented in docs/result-schema.md with its type, and
        every documented field that is not optional is present."""
        self.mlbench("-r", "2", "-w", "1", "--price", "2.5", "--", STAGE_PROG, "seq")  # cost too
        self.mlbench("-r", "1", "--", STAGE_PROG, "kill")
        self.mlbench("-r", "1", "--", "no-such-command-mlbench")
        documented = load_schema(os.path.join(SOURCE, "docs", "result-schema.md"))
        files = glob.glob(os.path.join(self.store, "runs", "*.json"))
        self.assertEqual(len(files), 3)
        for f in files:
            with open(f) as fh:
                check_schema(self, json.load(fh), documented, f)


def check_schema(test, doc, documented, name):
    """Asserts (on test) that every field of doc is documented with its type, and that every
    documented field that is not optional is present."""
    seen = {}
    walk(doc, "", seen)
    for path, types in seen.items():
        test.assertIn(path, documented, f"{path} is not documented")
        for t in types:
            test.assertIn(t, documented[path][0], f"{path}: {t} not in {documented[path][0]}")
    for path, (_, optional) in documented.items():
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        if (not optional and (parent == "" or "object" in seen.get(parent, ()))
                and "*" not in path
                and not path.endswith("[]")):  # elements exist only in non-empty arrays
            test.assertIn(path, seen, f"documented field {path} missing in {name}")


TYPES = {"integer", "number", "string", "boolean", "array", "object", "null"}


def load_schema(md_path):
    """Rows `| \`path\` | type[ or null][, optional] | meaning |` of the schema document.
    A "stats object" row stands for the object and every `STATS.*` row under its path; a
    "resource object" row likewise with the `RESOURCE.*` rows, a "latency object" row with the
    `LATENCY.*` rows."""
    rows = {}
    in_table = False  # only tables headed "| path | type | meaning |"
    with open(md_path) as f:
        for line in f:
            if re.match(r"^\|\s*path\s*\|\s*type\s*\|", line):
                in_table = True
            elif not line.startswith("|"):
                in_table = False
            if not in_table:
                continue
            m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|", line)
            if not m:
                continue
            spec = m.group(2)
            types = set(re.findall(r"[a-z]+", spec)) & TYPES
            if "number" in types:
                types.add("integer")  # a JSON number may be written without a fraction
            kind = ("STATS" if "stats object" in spec else "RESOURCE" if "resource object" in spec
                    else "LATENCY" if "latency object" in spec else None)
            if kind:
                types.add("object")
            rows[m.group(1)] = (types, "optional" in spec, kind)
    documented = {}
    for path, (types, optional, kind) in rows.items():
        if path.startswith(("STATS.", "RESOURCE.", "LATENCY.")):
            continue
        documented[path] = (types, optional)
        if kind:
            for sub, (t, o, _) in rows.items():
                if sub.startswith(kind + "."):
                    documented[path + sub[len(kind):]] = (t, o)
    return documented


def walk(value, path, seen):
    t = ("null" if value is None else "boolean" if isinstance(value, bool) else
         "integer" if isinstance(value, int) else "number" if isinstance(value, float) else
         "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object")
    if path:
        seen.setdefault(path, set()).add(t)
    if isinstance(value, dict):
        wildcard = path in ("runs[].metadata", "sweep.parameters", "load.scenarios[].errors",
                            "load.scenarios[].server.stages", "load.scenarios[].server.counters")
        for k, v in value.items():
            walk(v, f"{path}.*" if wildcard else (f"{path}.{k}" if path else k), seen)
    elif isinstance(value, list):
        for v in value:
            walk(v, f"{path}[]", seen)


if __name__ == "__main__":
    unittest.main()

"""Fault injection of every write path, and a SIGKILL loop: "no result is ever lost; never a
partial file".

Each sweep runs one command once without faults to count its eligible calls of each function
(tests/fault/fault_shim.c, through LD_PRELOAD), then once per call N with the Nth call failing,
and checks after each: the old state or the new one is on disk (every runs/*.json parses, a
report is the old file or the complete new one, a dataset has its MANIFEST and every image or
none of them), no temporary file is left, no index row names a missing file, and a failed write
gives a non-zero exit status and a message naming the path and the system's reason. The index
is derived data: a failure of the index alone keeps the result file, and the next command
indexes it.

Environment (set by ctest): MLBENCH, WORKLOAD (mlbench-workload), FAULT_SHIM
(libfault_shim.so), FAULT_SANITIZED=1 in the ASan/UBSan build."""
import glob
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
WORKLOAD = os.environ.get("WORKLOAD", "build/mlbench-workload")
SHIM = os.environ.get("FAULT_SHIM", "build/tests/fault/libfault_shim.so")
SANITIZED = os.environ.get("FAULT_SANITIZED") == "1"

# The functions whose failure is a write failure, with the errno each is failed with.
FILE_FAULTS = [("write", "ENOSPC"), ("pwrite", "ENOSPC"), ("fsync", "EIO"),
               ("rename", "EACCES"), ("unlink", "EACCES"), ("open", "EDQUOT")]
REASONS = {"ENOSPC": "No space left on device", "EIO": "Input/output error",
           "EACCES": "Permission denied", "EDQUOT": "Disk quota exceeded",
           "ENOMEM": "Cannot allocate memory"}
# SQLite says these in its own words where it does not keep errno (SQLITE_FULL, _NOMEM, ...).
SQLITE_WORDS = ("database or disk is full", "disk I/O error", "unable to open database file",
                "out of memory")


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class FaultCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-fault-test-")
        self.tmpdir = os.path.join(self.tmp.name, "tmp")  # the TMPDIR of the commands
        os.makedirs(self.tmpdir)
        self.counts_file = os.path.join(self.tmp.name, "counts")
        self.points = 0  # injections made, for the summary line

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, fault=None):
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["TMPDIR"] = self.tmpdir
        e["LD_PRELOAD"] = SHIM
        e["MLBENCH_FAULT_COUNTS"] = self.counts_file
        e.pop("MLBENCH_FAULT", None)
        if fault:
            e["MLBENCH_FAULT"] = fault
        if SANITIZED:
            # The shim comes before the ASan runtime; ASan refuses that unless told it is meant.
            e["ASAN_OPTIONS"] = ",".join(
                x for x in [e.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0"] if x)
        return e

    def call(self, cmd, fault=None, timeout=60):
        """Runs cmd under the shim; returns (status, stderr, counts)."""
        if os.path.exists(self.counts_file):
            os.unlink(self.counts_file)
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.env(fault),
                           timeout=timeout, preexec_fn=no_core)
        counts = {}
        if os.path.exists(self.counts_file):
            with open(self.counts_file) as f:
                for line in f:
                    w = line.split()
                    if w[0] == "fired":
                        counts["fired"] = (w[1], int(w[2]))
                    else:
                        counts[w[0]] = int(w[1])
        return p.returncode, p.stderr, counts

    def plain(self, cmd):
        """Runs cmd without the shim; returns (status, stdout, stderr)."""
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["TMPDIR"] = self.tmpdir
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def sweep(self, setup, cmd_of, check, faults=FILE_FAULTS):
        """For each function and each N up to its count in a clean call: setup() makes the
        state before (returns what check needs), cmd_of(state) the command, check(state, fn,
        errno, status, stderr) the assertions. Returns {fn: count}."""
        state = setup()
        rc, err, counts = self.call(cmd_of(state))
        self.assertEqual(rc, 0, err)
        check(state, None, None, rc, err)
        found = {}
        for fn, errno_name in faults:
            n_calls = counts.get(fn, 0)
            found[fn] = n_calls
            # one more than counted: a run that makes one call more (a larger result) is tried
            # too, and one that does not shows that nothing fails past the last call
            for n in range(1, n_calls + 2):
                state = setup()
                rc, err, c = self.call(cmd_of(state), f"{fn}:{n}:{errno_name}")
                with self.subTest(fault=f"{fn}:{n}:{errno_name}"):
                    self.assertNotIn("AddressSanitizer", err)
                    self.assertNotIn("runtime error", err)
                    if c.get("fired") == (fn, n):
                        check(state, fn, errno_name, rc, err)
                    else:
                        # The number of writes of a result depends on its size, which varies
                        # from run to run near a multiple of the stream's buffer: this run made
                        # fewer calls and none failed.
                        self.assertLess(c.get(fn, 0), n, f"the call did not fail: {c}")
                        self.assertEqual(rc, 0, err)
                        check(state, None, None, rc, err)
                self.points += 1
        return found

    def assert_names_error(self, err, path, errno_name, also=()):
        """A failure's message names the file and the system's reason (or SQLite's words for
        it, or one of also)."""
        self.assertIn(path, err)
        reason = REASONS[errno_name]
        self.assertTrue(reason in err or any(w in err for w in SQLITE_WORDS + tuple(also)),
                        f"no reason ({reason}) in: {err}")

    def report_points(self, what, found, t0):
        print(f"\n{what}: {found}, {self.points} injections in {time.monotonic() - t0:.1f} s",
              flush=True)


class StoreState:
    """A store copied from a template before each injection."""

    def __init__(self, case, template):
        self.dir = os.path.join(case.tmp.name, "s")
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(case.tmpdir)
        os.makedirs(case.tmpdir)
        if template:
            shutil.copytree(template, self.dir)
        else:
            os.makedirs(self.dir)
        self.runs = os.path.join(self.dir, "runs")
        self.before = set(os.listdir(self.runs)) if os.path.isdir(self.runs) else set()


class StoreChecks(FaultCase):
    def results(self, store):
        """The ids of the result files in runs/, each of which must parse; no temporaries."""
        runs = os.path.join(store, "runs")
        ids = set()
        for name in os.listdir(runs) if os.path.isdir(runs) else []:
            self.assertNotIn(".tmp.", name, "a temporary file was left in runs/")
            self.assertTrue(name.endswith(".json"), name)
            with open(os.path.join(runs, name)) as f:
                doc = json.load(f)  # never a torn file
            self.assertEqual(doc["id"] + ".json", name)
            ids.add(doc["id"])
        return ids

    def index_rows(self, store):
        """The rows of results.db, each of which must name an existing file."""
        db = os.path.join(store, "results.db")
        if not os.path.exists(db):
            return set()
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT id, path FROM results").fetchall()
        except sqlite3.DatabaseError:
            return None  # an index mlbench sets aside and rebuilds
        finally:
            con.close()
        for rid, path in rows:
            full = path if path.startswith("/") else os.path.join(store, path)
            self.assertTrue(os.path.exists(full), f"index row {rid} names a missing file {path}")
        return {rid for rid, _ in rows}

    def assert_consistent(self, store):
        """After the next history (which removes the temporaries of dead writers): files parse,
        no temporaries, rows name files, and history lists exactly the files."""
        rc, out, err = self.plain([MLBENCH, "history", "--json", "--store", store])
        self.assertEqual(rc, 0, err)
        ids = self.results(store)
        listed = {r["id"] for r in json.loads(out)["results"]}
        self.assertEqual(listed, ids, "the index after history is not the files")
        self.assertEqual(self.index_rows(store), ids)
        return ids


class RunFaultTest(StoreChecks):
    """mlbench run: the result file, its fallback in $TMPDIR, and the index."""

    def run_sweep(self, with_index):
        template = os.path.join(self.tmp.name, "template")
        rc, _, err = self.plain([MLBENCH, "run", "-q", "-r", "1", "--store", template, "--",
                                 "true"])
        self.assertEqual(rc, 0, err)
        if not with_index:
            os.unlink(os.path.join(template, "results.db"))
            for side in glob.glob(os.path.join(template, "results.db-*")):
                os.unlink(side)

        def setup():
            return StoreState(self, template)

        def cmd(s):
            return [MLBENCH, "run", "-q", "-r", "1", "--store", s.dir, "--", "true"]

        def check(s, fn, errno_name, rc, err):
            ids = self.results(s.dir)
            self.index_rows(s.dir)
            new = ids - {n[:-5] for n in s.before}
            self.assertLessEqual(len(new), 1)
            fallback = glob.glob(os.path.join(self.tmpdir, "mlbench-*.json"))
            for p in fallback:
                with open(p) as f:
                    json.load(f)
            if new:
                # recorded: the index may have failed (a warning), never the file
                self.assertEqual(rc, 0, err)
                self.assertEqual(fallback, [])
                if "warning" in err:
                    self.assert_names_error(err, s.dir, errno_name)
            else:
                self.assertNotEqual(rc, 0, "no result in runs/, yet exit status 0")
                if fn:
                    self.assert_names_error(err, s.dir, errno_name)
                if rc == 3:  # it ran: the result was kept in $TMPDIR, or the error says so
                    self.assertTrue(fallback or "cannot write" in err, err)
                else:  # refused before running: the index could not be opened
                    self.assertEqual(rc, 2, err)
            self.assertEqual([n for n in os.listdir(self.tmpdir) if ".tmp." in n], [])
            self.assertEqual(self.assert_consistent(s.dir), ids)

        t0 = time.monotonic()
        found = self.sweep(setup, cmd, check)
        self.report_points("run " + ("into a store" if with_index else "making the index"),
                           found, t0)

    def test_run(self):
        self.run_sweep(True)

    def test_run_new_index(self):
        self.run_sweep(False)


class StoreFaultTest(StoreChecks):
    """mlbench rm, and history rebuilding the index from the files."""

    def make_template(self, n):
        template = os.path.join(self.tmp.name, "template")
        for _ in range(n):
            rc, _, err = self.plain([MLBENCH, "run", "-q", "-r", "1", "--store", template,
                                     "--", "true"])
            self.assertEqual(rc, 0, err)
        return template

    def test_rm(self):
        template = self.make_template(2)
        victim = sorted(os.listdir(os.path.join(template, "runs")))[0][:-5]

        def check(s, fn, errno_name, rc, err):
            self.index_rows(s.dir)
            # a file moved aside whose deletion failed is litter, removed by the next command
            ids = self.assert_consistent(s.dir)
            if rc == 0:
                self.assertNotIn(victim, ids)
            else:
                self.assertEqual(ids, {n[:-5] for n in s.before}, "rm failed, yet removed")
                self.assert_names_error(err, s.dir, errno_name, ["cannot be written"])

        t0 = time.monotonic()
        found = self.sweep(lambda: StoreState(self, template),
                           lambda s: [MLBENCH, "rm", victim, "--store", s.dir], check)
        self.report_points("rm", found, t0)

    def test_history_rebuild(self):
        template = self.make_template(3)
        os.unlink(os.path.join(template, "results.db"))
        for side in glob.glob(os.path.join(template, "results.db-*")):
            os.unlink(side)
        all_ids = self.results(template)

        def check(s, fn, errno_name, rc, err):
            self.assertEqual(self.results(s.dir), all_ids)  # the files are never touched
            self.index_rows(s.dir)
            if rc != 0:
                self.assert_names_error(err, s.dir, errno_name)
            self.assert_consistent(s.dir)

        t0 = time.monotonic()
        found = self.sweep(lambda: StoreState(self, template),
                           lambda s: [MLBENCH, "history", "--json", "--store", s.dir], check)
        self.report_points("history rebuilding the index", found, t0)


class ReportFaultTest(FaultCase):
    """mlbench report -o FILE in each format: the old file or the complete new one."""

    def test_report(self):
        store = os.path.join(self.tmp.name, "store")
        rc, _, err = self.plain([MLBENCH, "run", "-q", "-r", "2", "--store", store, "--",
                                 "true"])
        self.assertEqual(rc, 0, err)
        result = glob.glob(os.path.join(store, "runs", "*.json"))[0]
        out_dir = os.path.join(self.tmp.name, "out")
        t0 = time.monotonic()
        found = {}
        for ext in ("md", "html", "csv", "json"):
            out = os.path.join(out_dir, "report." + ext)
            fmt = ["--format", "trace"] if ext == "json" else []
            cmd = [MLBENCH, "report", result, "-o", out] + fmt
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            rc, _, err = self.plain(cmd)
            self.assertEqual(rc, 0, err)
            with open(out, "rb") as f:
                new = f.read()
            if ext == "json":
                json.loads(new)
            old = b"the report before\n"

            def setup():
                shutil.rmtree(out_dir, ignore_errors=True)
                os.makedirs(out_dir)
                with open(out, "wb") as f:
                    f.write(old)

            def check(_, fn, errno_name, rc, err):
                self.assertEqual(os.listdir(out_dir), ["report." + ext],
                                 "a temporary file was left beside the report")
                with open(out, "rb") as f:
                    now = f.read()
                if rc == 0:
                    self.assertEqual(now, new, "exit status 0, but not the whole report")
                else:
                    self.assertEqual(now, old, "the report failed, yet the file changed")
                    self.assert_names_error(err, out, errno_name)

            found[ext] = self.sweep(setup, lambda _: cmd, check)
        self.report_points("report -o", found, t0)


class DatasetFaultTest(FaultCase):
    """imgclf's dataset preparation: a MANIFEST and every image, or nothing of ours."""

    def test_prepare(self):
        data = os.path.join(self.tmp.name, "data")
        cmd = [WORKLOAD, "imgclf", "--prepare-only", "--dataset", "synthetic", "--image-size",
               "8", "--train-images", "20", "--val-images", "10", "--data-dir", data,
               "--threads", "1", "--quiet"]

        def setup():
            shutil.rmtree(data, ignore_errors=True)

        def check(_, fn, errno_name, rc, err):
            names = set(os.listdir(data)) if os.path.isdir(data) else set()
            self.assertFalse([n for n in names if "tmp" in n.lower()], names)
            if rc == 0:
                with open(os.path.join(data, "MANIFEST")) as f:
                    json.load(f)
                images = glob.glob(os.path.join(data, "*", "*", "*.jpg"))
                self.assertEqual(len(images), 30)
                for p in images:
                    with open(p, "rb") as f:
                        b = f.read()
                    self.assertEqual(b[:2], b"\xff\xd8", p)  # a whole JPEG: SOI ... EOI
                    self.assertEqual(b[-2:], b"\xff\xd9", p)
            else:
                self.assertLessEqual(names, {".mlbench-lock"}, "a partial dataset was left")
                self.assert_names_error(err, data, errno_name)

        t0 = time.monotonic()
        found = self.sweep(setup, lambda _: cmd, check)
        self.report_points("dataset prepare", found, t0)


class MallocFaultTest(StoreChecks):
    """Allocation failure: xalloc aborts (no result could be kept anyway), SQLite and jansson
    report it. Sampled: a run makes thousands of allocations; the last ones (writing and
    indexing the result) are all tried. After an abort the next run removes the temporaries of
    the dead writer."""

    def test_run_malloc(self):
        template = os.path.join(self.tmp.name, "template")
        rc, _, err = self.plain([MLBENCH, "run", "-q", "-r", "1", "--store", template, "--",
                                 "true"])
        self.assertEqual(rc, 0, err)
        s = StoreState(self, template)
        cmd = [MLBENCH, "run", "-q", "-r", "1", "--store", s.dir, "--", "true"]
        rc, err, counts = self.call(cmd)
        self.assertEqual(rc, 0, err)
        total = counts["malloc"]
        tail = 40 if not SANITIZED else 20
        ns = sorted(set(range(1, total, max(1, total // 20))) |
                    set(range(max(1, total - tail), total + 1)))
        t0 = time.monotonic()
        for n in ns:
            s = StoreState(self, template)
            rc, err, c = self.call(cmd, f"malloc:{n}:ENOMEM")
            with self.subTest(n=n):
                if rc < 0:  # aborted (xalloc): no torn file, and the next run cleans up
                    self.assertEqual(rc, -signal.SIGABRT, err)
                    self.assertIn("out of memory", err)
                    self.results_without_temporaries(s)
                    rc2, _, err2 = self.plain(cmd)
                    self.assertEqual(rc2, 0, err2)
                else:
                    self.assertNotIn("AddressSanitizer", err)
                self.assert_consistent(s.dir)
            self.points += 1
        self.report_points("run, malloc", {"malloc": total, "tried": len(ns)}, t0)

    def results_without_temporaries(self, s):
        """The result files parse (temporaries of the dead writer may be there)."""
        for name in os.listdir(s.runs):
            if ".tmp." not in name:
                with open(os.path.join(s.runs, name)) as f:
                    json.load(f)


class KillLoopTest(StoreChecks):
    """SIGKILL at random points of `mlbench run -r 1 -- true`, many during the result's
    writing: no partial file, and the next run and history put everything in order."""

    KILLS = 200

    def test_sigkill_loop(self):
        store = os.path.join(self.tmp.name, "store")
        cmd = [MLBENCH, "run", "-q", "-r", "1", "--store", store, "--", "true"]
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["TMPDIR"] = self.tmpdir
        # how long a run takes here: the delays span it
        t = time.monotonic()
        self.assertEqual(subprocess.run(cmd, env=e, capture_output=True).returncode, 0)
        span = time.monotonic() - t
        rng = random.Random(os.environ.get("FAULT_SEED", "12"))
        killed_during = 0
        t0 = time.monotonic()
        for _ in range(self.KILLS):
            p = subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, span * 1.1))
            p.send_signal(signal.SIGKILL)
            killed_during += p.wait() == -signal.SIGKILL
            for name in os.listdir(os.path.join(store, "runs")):
                if ".tmp." not in name:
                    with open(os.path.join(store, "runs", name)) as f:
                        json.load(f)  # never a partial result, at any moment
        print(f"\n{self.KILLS} kills ({killed_during} before the end) in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
        self.assertGreater(killed_during, self.KILLS // 4, "the kills came too late")
        self.index_rows(store)
        rc = subprocess.run(cmd, env=e, capture_output=True).returncode
        self.assertEqual(rc, 0)
        ids = self.assert_consistent(store)  # no temporaries left by the dead writers
        self.assertGreaterEqual(len(ids), 2)
        left = [n for n in os.listdir(self.tmpdir) if n.startswith("mlbench-")]
        self.assertEqual(left, [], "marker directories of killed runs were not removed")


if __name__ == "__main__":
    unittest.main()

"""The result store on either backend, end to end: one suite of history, show, compare, report,
rm, --detect, --host and store push run against a directory store (SQLite index) and against a
shared PostgreSQL store (a real server from Debian's postgresql package, started here in a
temporary directory, Unix socket only). Then what only the shared store does: concurrent
writers from several processes, a server killed while results are being written, a server of a
newer schema or with tables not ours refused untouched, a server that is away (the result kept
locally, exit 3, pushed later), passwords refused and credentials never written out.

Environment (set by ctest): MLBENCH (the binary)."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer  # noqa: E402

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
SERVER = PgServer()
WHY_NOT = SERVER.missing()


def setUpModule():
    if not WHY_NOT:
        SERVER.start()


def tearDownModule():
    SERVER.cleanup()


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-shared-test-")
        self.cwd = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args, store=None, timeout=120):
        """mlbench ARGS (with --store STORE) in the test's directory: (status, stdout, stderr)."""
        env = dict(os.environ)
        env.pop("MLBENCH_STORE", None)
        cmd = [MLBENCH, args[0]] + (["--store", store] if store else []) + list(args[1:])
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=self.cwd,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def result_doc(self, rid, host=None):
        """A result file of id rid (made by one real run, then its id, created time and host
        set) in the test directory; returns its path."""
        if not hasattr(self, "template"):
            scratch = os.path.join(self.cwd, "scratch")
            os.mkdir(scratch)
            rc, out, err = self.cli("run", "-q", "--json", "-r", "2", "--", STAGE_PROG, "seq",
                                    store=scratch)
            self.assertEqual(rc, 0, err)
            with open(os.path.join(scratch, "runs", json.loads(out)["id"] + ".json")) as f:
                self.template = json.load(f)
        doc = json.loads(json.dumps(self.template))
        doc["id"] = rid
        doc["created"] = "%s-%s-%sT%s:%s:%s.000Z" % (rid[0:4], rid[4:6], rid[6:8], rid[9:11],
                                                     rid[11:13], rid[13:15])
        if host:
            doc["environment"]["hostname"] = host
        path = os.path.join(self.cwd, rid + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path


class Suite:
    """The same behaviour on both backends; self.store is a directory or a connection string."""

    def bench(self, *command, label):
        rc, out, err = self.cli("run", "-q", "--json", "-r", "3", "-l", label, "--", *command,
                                store=self.store)
        self.assertEqual(rc, 0, err)
        return json.loads(out)["id"]

    def test_every_verb(self):
        # 10 ms against 100 ms: a gap that a loaded CI machine (ASan, -j2) cannot close
        a1 = self.bench("sleep", "0.01", label="fast")
        b = self.bench("sleep", "0.1", label="slow")
        a2 = self.bench("sleep", "0.01", label="fast")
        rc, out, err = self.cli("history", "--json", store=self.store)
        self.assertEqual(rc, 0, err)
        doc = json.loads(out)
        self.assertEqual([r["id"] for r in doc["results"]], [a1, b, a2])
        self.assertEqual(doc["results"][1]["label"], "slow")
        self.assertEqual(doc["results"][1]["host"], os.uname().nodename)
        self.assertGreater(doc["results"][1]["wall_ns"]["median"], 25e6)
        # a result with stages keeps them, in order, with their medians
        rc, out, err = self.cli("store", "push", self.store,
                                self.result_doc("20980101T000000-bbbbbb"))
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("history", "--json", "--last", "1", store=self.store)
        staged = json.loads(out)["results"][0]
        want = self.template["summary"]["stages"]
        self.assertEqual([s["name"] for s in staged["stages"]], [s["name"] for s in want])
        self.assertEqual([s["median"] for s in staged["stages"]],
                         [s["active_ns"]["median"] for s in want])
        rc, out, err = self.cli("rm", "20980101T000000-bbbbbb", store=self.store)
        self.assertEqual(rc, 0, err)
        # show: by id, prefix, label and latest; --json is the document
        for ref in (b, b[:-2], "slow"):
            rc, out, err = self.cli("show", ref, store=self.store)
            self.assertEqual(rc, 0, err)
            self.assertIn(b, out)
        rc, out, err = self.cli("show", "--json", "latest", store=self.store)
        self.assertEqual(rc, 0, err)
        shown = json.loads(out)
        self.assertEqual(shown["id"], a2)
        self.assertEqual(shown["summary"]["runs_ok"], 3)
        # compare and report from the store
        rc, out, err = self.cli("compare", "--json", a1, "slow", store=self.store)
        self.assertEqual(rc, 0, err)
        cmp = json.loads(out)
        total = [s for s in cmp["candidates"][0]["stages"] if s["name"] == "total"][0]
        self.assertGreater(total["change_pct"], 50, total)
        rc, out, err = self.cli("report", "-f", "markdown", a1, b, store=self.store)
        self.assertEqual(rc, 0, err)
        self.assertIn(b, out)
        # history --host, and the host column once two hosts share the store
        rc, out, err = self.cli("store", "push", self.store,
                                self.result_doc("20990101T000000-aaaaaa", host="other-host"))
        self.assertEqual(rc, 0, err)
        self.assertIn("pushed 1 result", out)
        rc, out, err = self.cli("history", store=self.store)
        self.assertEqual(rc, 0, err)
        self.assertIn("host", out.splitlines()[0])
        self.assertIn("other-host", out)
        rc, out, err = self.cli("history", "--json", "--host", "other-host", store=self.store)
        self.assertEqual([r["id"] for r in json.loads(out)["results"]],
                         ["20990101T000000-aaaaaa"])
        # the same id again is one result
        rc, out, err = self.cli("store", "push", self.store,
                                os.path.join(self.cwd, "20990101T000000-aaaaaa.json"))
        self.assertEqual(rc, 0, err)
        self.assertIn("pushed 0 results", out)
        self.assertIn("1 already there", out)
        # rm, then the reference is unknown
        rc, out, err = self.cli("rm", "slow", store=self.store)
        self.assertEqual((rc, out.strip()), (0, f"removed {b}"), err)
        rc, out, err = self.cli("show", b, store=self.store)
        self.assertEqual(rc, 2)
        self.assertIn(f"unknown run '{b}'", err)
        rc, out, err = self.cli("history", "--json", store=self.store)
        self.assertEqual(len(json.loads(out)["results"]), 3)

    def test_detect(self):
        # a step from 10 ms to 100 ms in one series: --detect names the first slow result. The
        # results are made, not measured, so that the test is about the store and not about
        # how noisy the machine is (a loaded CI run once made a 10 ms result look slow)
        ids = []
        for i in range(8):
            rid = "20990101T0000%02d-dddd%02d" % (i, i)
            path = self.result_doc(rid)
            with open(path) as f:
                doc = json.load(f)
            doc["label"] = "step"
            level = 10e6 if i < 4 else 100e6
            level *= 1 + 0.01 * (i % 3)  # a little noise, the same on every run of the test
            doc["summary"]["wall_ns"].update(
                {"n": 3, "median": level, "mad": 0.01 * level, "ci_low": 0.98 * level,
                 "ci_high": 1.02 * level, "ci_level": 0.75})
            with open(path, "w") as f:
                json.dump(doc, f)
            rc, out, err = self.cli("store", "push", self.store, path)
            self.assertEqual(rc, 0, err)
            ids.append(rid)
        rc, out, err = self.cli("history", "--detect", "--json", "--label", "step",
                                store=self.store)
        self.assertIn(rc, (0, 1), err)
        changes = [c for c in json.loads(out)["changes"] if c["stage"] == "total"]
        self.assertEqual([(c["id"], c["direction"]) for c in changes], [(ids[4], "slower")])
        self.assertEqual(changes[0]["previous_id"], ids[3])

    def test_load_column(self):
        """history's load figures come from the document, on either backend (a load result is
        the one without a command; only its load section counts)."""
        path = self.result_doc("20980102T000000-cccccc")
        with open(path) as f:
            doc = json.load(f)
        del doc["command"]
        doc["load"] = {"scenarios": [
            {"scenario": "server", "role": "probe", "target_qps": 50, "percentile": 99},
            {"scenario": "server", "role": "run", "target_qps": 100, "percentile": 99,
             "latency_s": {"p99": 0.012}, "throughput_qps": 99.5, "valid": True}]}
        with open(path, "w") as f:
            json.dump(doc, f)
        rc, out, err = self.cli("store", "push", self.store, path)
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("history", "--json", store=self.store)
        self.assertEqual(rc, 0, err)
        row = [r for r in json.loads(out)["results"] if r["id"] == "20980102T000000-cccccc"][0]
        self.assertEqual(row["load"], [{"key": "server 100 QPS", "metric": "p99",
                                        "metric_s": 0.012, "throughput_qps": 99.5,
                                        "valid": True}])

    def test_pull(self):
        rid = self.bench("sleep", "0.001", label="pulled")
        self.bench("sleep", "0.001", label="other")
        rc, out, err = self.cli("store", "pull", self.store, "--label", "pulled", "--to", "local")
        self.assertEqual(rc, 0, err)
        self.assertIn("pulled 1 result", out)
        self.assertTrue(os.path.exists(os.path.join(self.cwd, "local", "runs", rid + ".json")))
        rc, out, err = self.cli("store", "pull", self.store, "--to", "local")
        self.assertEqual(rc, 0, err)
        self.assertIn("pulled 1 result", out)
        self.assertIn("(1 already there)", out)


class StoreCommandTest(Base):
    def test_bad_input(self):
        cases = [
            (("store",), "give push TARGET"),
            (("store", "frob", "x"), "unknown action 'frob'"),
            (("store", "push"), "give push TARGET"),
            (("store", "pull", "x", "--from", "y"), "--from is push's"),
            (("store", "push", "t"), "no local store '.mlbench' to push from"),
            (("store", "push", "t", "--from", "postgresql://me:pw1234@h/db"),
             "--from takes a directory store"),
            (("store", "push", "t", "nope"), "store push: no result store at '.mlbench'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.cli(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertNotIn("pw1234", err)
        self.assertEqual(sorted(os.listdir(self.cwd)), ["t"] if os.path.exists(
            os.path.join(self.cwd, "t")) else [])


class DirectoryStoreTest(Suite, Base):
    def setUp(self):
        super().setUp()
        self.store = os.path.join(self.cwd, "store")


@unittest.skipIf(WHY_NOT, WHY_NOT)
class PostgresStoreTest(Suite, Base):
    def setUp(self):
        super().setUp()
        # a database of its own for each test: the tables are created by the first mlbench
        self.db = "t" + str(int(time.monotonic_ns() % 10**12))
        SERVER.createdb(self.db)
        self.store = SERVER.uri(self.db)


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SharedOnlyTest(Base):
    def setUp(self):
        super().setUp()
        self.db = "s" + str(int(time.monotonic_ns() % 10**12))
        SERVER.createdb(self.db)
        self.store = SERVER.uri(self.db)

    def local_results(self, n, prefix, host=None):
        """n result files in a local store directory; returns its path."""
        d = os.path.join(self.cwd, prefix)
        os.makedirs(os.path.join(d, "runs"))
        for i in range(n):
            rid = "20990102T%06d-%s" % (i, prefix[-6:].rjust(6, "0"))
            os.rename(self.result_doc(rid, host), os.path.join(d, "runs", rid + ".json"))
        return d

    def test_concurrent_writers(self):
        # four processes push 50 results each into a database without tables yet: the first
        # ones race to create them (the advisory lock), then all 200 land, each once, whole
        dirs = [self.local_results(50, "w%05d" % k) for k in range(4)]
        procs = [subprocess.Popen([MLBENCH, "store", "push", self.store, "--from", d],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in dirs]
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn("pushed 50 results", out)
        self.assertEqual(SERVER.psql("SELECT count(*) FROM mlbench_results", self.db), "200")
        stages = len(self.template["summary"]["stages"])
        self.assertEqual(SERVER.psql("SELECT count(*) FROM mlbench_stages", self.db),
                         str(200 * stages))
        self.assertEqual(SERVER.psql("SELECT version FROM mlbench_schema", self.db), "1")

    def test_killed_mid_write(self):
        d = self.local_results(400, "k00001")
        p = subprocess.Popen([MLBENCH, "store", "push", self.store, "--from", d],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # kill the server once some results are in
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if int(SERVER.psql("SELECT count(*) FROM mlbench_results", self.db) or 0) > 20:
                    break
            except RuntimeError:
                pass
            time.sleep(0.02)
        SERVER.stop("immediate")
        try:
            out, err = p.communicate(timeout=120)
        finally:
            SERVER.restart()
        self.assertEqual(p.returncode, 3, err)
        self.assertIn("store push: stopped there; run it again", err)
        # every result that landed is whole: no row without its stages
        stages = len(self.template["summary"]["stages"])
        partial = SERVER.psql("SELECT count(*) FROM mlbench_results r WHERE (SELECT count(*) "
                              "FROM mlbench_stages s WHERE s.result_id = r.id) <> %d" % stages,
                              self.db)
        self.assertEqual(partial, "0")
        landed = int(SERVER.psql("SELECT count(*) FROM mlbench_results", self.db))
        self.assertLess(landed, 400)
        # the local copies are all there: pushing again completes it, each result once
        self.assertEqual(len(os.listdir(os.path.join(d, "runs"))), 400)
        rc, out, err = self.cli("store", "push", self.store, "--from", d)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"pushed {400 - landed} results", out)
        self.assertEqual(SERVER.psql("SELECT count(*) FROM mlbench_results", self.db), "400")

    def test_newer_schema_refused(self):
        rc, out, err = self.cli("run", "-q", "-r", "1", "--", "true", store=self.store)
        self.assertEqual(rc, 0, err)
        SERVER.psql("UPDATE mlbench_schema SET version = 99", self.db)
        before = SERVER.psql("SELECT id, document::text FROM mlbench_results", self.db)
        for args in (("history",), ("show", "latest"), ("run", "-r", "1", "--", "true")):
            with self.subTest(args=args):
                rc, out, err = self.cli(*args, store=self.store)
                self.assertEqual(rc, 2, err)
                self.assertIn("version 99, newer than this mlbench reads (1)", err)
        self.assertFalse(os.path.exists(os.path.join(self.cwd, ".mlbench")),
                         "a refused store is refused before anything runs")
        self.assertEqual(SERVER.psql("SELECT id, document::text FROM mlbench_results", self.db),
                         before)
        self.assertEqual(SERVER.psql("SELECT version FROM mlbench_schema", self.db), "99")

    def test_not_ours_refused(self):
        SERVER.psql("CREATE TABLE mlbench_results (x int)", self.db)
        rc, out, err = self.cli("history", store=self.store)
        self.assertEqual(rc, 2, err)
        self.assertIn("is not an mlbench store", err)
        self.assertEqual(SERVER.psql("SELECT to_regclass('mlbench_schema') IS NULL", self.db),
                         "t")

    def test_away_result_kept_and_pushed(self):
        away = SERVER.uri("nosuchdb")
        rc, out, err = self.cli("run", "-q", "--json", "-r", "2", "-l", "away", "--", "true",
                                store=away)
        self.assertEqual(rc, 3, err)
        self.assertIn("cannot connect", err)
        self.assertIn("nosuchdb", err)
        self.assertIn("the result is kept in .mlbench/runs/", err)
        rid = json.loads(out)["id"]
        kept = os.path.join(self.cwd, ".mlbench", "runs", rid + ".json")
        self.assertTrue(os.path.exists(kept), err)
        # as the message says: push it later
        rc, out, err = self.cli("store", "push", self.store, kept)
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("show", "--json", rid, store=self.store)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["label"], "away")
        # the other verbs say the same, exit 3
        for args in (("history",), ("show", "latest"), ("rm", "x"), ("compare", "a", "b")):
            rc, out, err = self.cli(*args, store=away)
            self.assertEqual(rc, 3, (args, err))
            self.assertIn("nosuchdb", err)

    def test_credentials_never_written(self):
        # a user name that is refused: the message names host and database, not the user
        uri = SERVER.uri(self.db) + "&user=zzsecretuser&application_name=zzapp"
        rc, out, err = self.cli("run", "-q", "-r", "1", "--", "true", store=uri)
        self.assertEqual(rc, 3, err)
        self.assertIn(self.db, err)
        self.assertNotIn("zzsecretuser", out + err)
        with open(os.path.join(self.cwd, ".mlbench", "runs",
                               os.listdir(os.path.join(self.cwd, ".mlbench", "runs"))[0])) as f:
            self.assertNotIn("zzsecret", f.read())
        # a password is refused before anything runs, and not repeated
        for bad in ("postgresql://me:hunter2pw@localhost/db",
                    "host=localhost dbname=db password=hunter2pw"):
            rc, out, err = self.cli("history", store=bad)
            self.assertEqual(rc, 2, err)
            self.assertIn("carries a password", err)
            self.assertIn("PGPASSFILE", err)
            self.assertNotIn("hunter2pw", err)
        rc, out, err = self.cli("history", store="mysql://localhost/db")
        self.assertEqual(rc, 2)
        self.assertIn("unsupported scheme 'mysql://'", err)
        # what a result and the history say of a good store: host and database only
        rc, out, err = self.cli("run", "-q", "--json", "-r", "1", "--", "true",
                                store=SERVER.uri(self.db) + "&application_name=zzapp")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("zzapp", out + err)
        rc, out, err = self.cli("history", "--json",
                                store=SERVER.uri(self.db) + "&application_name=zzapp")
        self.assertEqual(json.loads(out)["store"], SERVER.uri(self.db))

    def test_sweep_needs_a_directory(self):
        rc, out, err = self.cli("sweep", "-L", "n", "1,2", "--", "sleep", "0.00{n}",
                                store=self.store)
        self.assertEqual(rc, 2, err)
        self.assertIn("directory store", err)


if __name__ == "__main__":
    unittest.main()

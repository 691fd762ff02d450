"""End-to-end tests of the result store: real `mlbench run` results in a private store, then
`mlbench history` (table, trends, --json, --detect), `show`, `rm`, and the bad inputs (unknown
or ambiguous references, a corrupt result file, an index that is not ours or is newer): each a
clear message, exit status 2, nothing in the store modified.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree)."""
import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")

SPARK_UTF8 = set("\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588")


class StoreTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-store-test-")
        self.store = os.path.join(self.tmp.name, "store")
        self.runs = os.path.join(self.store, "runs")
        self.db = os.path.join(self.store, "results.db")

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args, env=None, store=True, timeout=90):
        """Runs mlbench VERB ARGS with the private store; returns (status, stdout, stderr)."""
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e.update(env or {})
        verb, rest = args[0], list(args[1:])
        cmd = [MLBENCH, verb] + (["--store", self.store] if store else []) + rest
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def bench(self, *command, label=None, runs=3):
        """Records one result of COMMAND; returns its id."""
        before = set(os.listdir(self.runs)) if os.path.isdir(self.runs) else set()
        args = ["run", "-q", "-r", str(runs)] + (["-l", label] if label else []) + ["--"]
        rc, _, err = self.cli(*args, *command)
        self.assertEqual(rc, 0, err)
        new = set(os.listdir(self.runs)) - before
        self.assertEqual(len(new), 1, new)
        return new.pop()[:-len(".json")]

    def history_json(self, *args):
        rc, out, err = self.cli("history", "--json", *args)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def snapshot(self):
        """Every file of the store with a digest of its content."""
        files = {}
        for root, _, names in os.walk(self.store):
            for n in names:
                p = os.path.join(root, n)
                with open(p, "rb") as f:
                    files[os.path.relpath(p, self.store)] = hashlib.sha256(f.read()).hexdigest()
        return files

    # ------------------------------------------------------------------ history

    def test_damaged_index(self):
        """issue 12: a results.db with damaged pages blocked every command with "database disk
        image is malformed". The index is derived data: set aside and rebuilt."""
        ids = {self.bench("true", runs=1) for _ in range(3)}
        size = os.path.getsize(self.db)
        with open(self.db, "r+b") as f:
            for off in range(4096, size, 4096):
                f.seek(off)
                f.write(b"\x0d" + b"\xff" * 200)
        rc, out, err = self.cli("history")
        self.assertEqual(rc, 0, err)
        self.assertIn("was damaged", err)
        self.assertNotIn("malformed", err)
        self.assertEqual({e["id"] for e in self.history_json()["results"]}, ids)
        aside = [n for n in os.listdir(self.store) if n.startswith("results.db.corrupt-")]
        self.assertEqual(len(aside), 1, os.listdir(self.store))
        ids.add(self.bench("true", runs=1))
        rc, out, err = self.cli("history")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual({e["id"] for e in self.history_json()["results"]}, ids)

    def test_hostile_counts(self):
        """issue 12: a result with a huge runs_measured overflowed signed arithmetic in history
        (UBSan aborted; the plain build printed '9223372036854775805 failed')."""
        rid = self.bench("true", runs=1)
        path = os.path.join(self.runs, rid + ".json")
        with open(path) as f:
            r = json.load(f)
        for i, (measured, ok) in enumerate([(9.3e18, -9.3e18), (1e300, 5), (-3, 2), (2.5, 1)]):
            r["id"] = f"20990101T00000{i}-bad{i:03d}"
            r["summary"]["runs_measured"], r["summary"]["runs_ok"] = measured, ok
            r["summary"]["wall_ns"]["n"] = measured
            with open(os.path.join(self.runs, r["id"] + ".json"), "w") as f:
                json.dump(r, f)
        rc, out, err = self.cli("history")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("-9223372036854775808", out)
        self.assertNotIn("922337203685477", out)
        for e in self.history_json()["results"]:
            self.assertGreaterEqual(e["runs_measured"], 0, e)
            self.assertLessEqual(e["runs_ok"], e["runs_measured"], e)

    def test_hostile_medians(self):
        """issue 12: a trend line scaled 7 * (median - lo) before dividing by the span, which
        overflows to inf for medians near 1.8e308 and indexed its glyphs out of bounds."""
        rid = self.bench("true", runs=1, label="huge")
        path = os.path.join(self.runs, rid + ".json")
        with open(path) as f:
            r = json.load(f)
        for i, median in enumerate([1.7e308, 1e-300, 1.0e308]):
            r["id"] = f"20990101T00000{i}-big{i:03d}"
            r["summary"]["wall_ns"]["median"] = median
            with open(os.path.join(self.runs, r["id"] + ".json"), "w") as f:
                json.dump(r, f)
        rc, out, err = self.cli("history", "--detect", env={"LC_ALL": "C"})
        self.assertEqual(rc, 0, err)
        trend = [l for l in out.split("trends")[-1].splitlines() if l.startswith("  total")]
        self.assertEqual(len(trend), 1, out)
        glyphs = trend[0].split()[1]
        self.assertEqual(len(glyphs), 4, trend)
        self.assertTrue(set(glyphs) <= set("_.-:=+*#"), trend)
        self.assertEqual(glyphs[1], "#", trend)  # the largest median is the top glyph

    def test_trend_of_failed_results(self):
        """A series whose results all failed printed a trend header with nothing under it
        (issue 13)."""
        for _ in range(2):
            rc, _, _ = self.cli("run", "-q", "-r", "1", "--", "false")
            self.assertEqual(rc, 1)
        rc, out, err = self.cli("history")
        self.assertEqual(rc, 0, err)
        trend = out.split("trends")[-1].splitlines()
        at = [i for i, l in enumerate(trend) if l.startswith("command false: 2 results")]
        self.assertEqual(len(at), 1, out)
        self.assertEqual(trend[at[0] + 1], "  no successful result: nothing to draw", out)

    def test_history_table_and_json(self):
        a1 = self.bench(STAGE_PROG, "seq", label="seq")
        other = self.bench(STAGE_PROG, "threads")
        a2 = self.bench(STAGE_PROG, "seq", label="seq")
        # utf-8 locale: block sparklines; no control characters anywhere (not a terminal)
        rc, out, err = self.cli("history", env={"LC_ALL": "C.UTF-8"})
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("id"), out)
        for word in ("created", "label", "status", "runs", "total", "load", "train", "step", "work"):
            self.assertIn(word, lines[0])
        rows = [l.split()[0] for l in lines[1:4]]
        self.assertEqual(rows, [a1, other, a2], "oldest first, newest last")
        self.assertIn("seq: 2 results", out)
        self.assertTrue(SPARK_UTF8 & set(out), out)
        self.assertFalse([c for c in out if ord(c) < 32 and c != "\n"], "control characters")
        self.assertTrue(os.path.exists(self.db), "the index was built")
        # ASCII locale: no block characters
        rc, out, _ = self.cli("history", env={"LC_ALL": "C"})
        self.assertEqual(rc, 0)
        self.assertFalse(SPARK_UTF8 & set(out))
        self.assertTrue(all(ord(c) < 128 for c in out))

        doc = self.history_json()
        self.assertEqual(doc["schema"], "mlbench.history/1")
        self.assertEqual([r["id"] for r in doc["results"]], [a1, other, a2])
        r = doc["results"][0]
        self.assertEqual(r["label"], "seq")
        self.assertTrue(r["command"].endswith("stage_prog seq"), r["command"])
        self.assertEqual(r["status"], "complete")
        self.assertEqual(r["runs_measured"], 3)
        self.assertEqual(r["runs_ok"], 3)
        self.assertTrue(r["mlbench_commit"])
        self.assertEqual(r["host"], os.uname().nodename)
        with open(os.path.join(self.runs, a1 + ".json")) as f:
            full = json.load(f)
        self.assertEqual(r["wall_ns"]["median"], full["summary"]["wall_ns"]["median"])
        self.assertEqual([s["name"] for s in r["stages"]], ["load", "train", "step"])
        self.assertEqual(r["stages"][0]["median"],
                         full["summary"]["stages"][0]["active_ns"]["median"])
        self.assertNotIn("changes", doc)
        # filters
        self.assertEqual([x["id"] for x in self.history_json("--label", "seq")["results"]], [a1, a2])
        self.assertEqual([x["id"] for x in self.history_json("--last", "2")["results"]], [other, a2])
        self.assertEqual([x["id"] for x in self.history_json("--stage", "work")["results"]], [other])
        rc, out, _ = self.cli("history", "--stage", "train")
        self.assertEqual(rc, 0)
        self.assertIn("train", out.splitlines()[0])
        self.assertNotIn("load", out.splitlines()[0])
        rc, out, _ = self.cli("history", "--label", "nothing")
        self.assertEqual(rc, 0)
        self.assertIn("no results with label 'nothing'", out)

    def test_no_control_characters(self):
        # a shared result file must not drive the terminal through its label or stage names
        rid = self.bench(STAGE_PROG, "seq", label="\x1b[2Jred\x07")
        for args in (("history",), ("history", "--detect"), ("show", rid)):
            with self.subTest(args=args):
                rc, out, err = self.cli(*args)
                self.assertEqual(rc, 0, err)
                self.assertIn("?[2Jred?", out)
                self.assertFalse([c for c in out if ord(c) < 32 and c != "\n" or ord(c) == 127])

    def test_index_rebuilt_from_files(self):
        ids = [self.bench(STAGE_PROG, "seq", label="x") for _ in range(2)]
        self.cli("history")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.unlink(self.db + suffix)
        self.assertEqual([r["id"] for r in self.history_json()["results"]], ids)
        # a result file put there by hand is indexed; one deleted by hand is dropped
        with open(os.path.join(self.runs, ids[1] + ".json")) as f:
            doc = json.load(f)
        doc["id"] = "20991231T235959-abcdef"
        doc["created"] = "2099-12-31T23:59:59.000Z"
        with open(os.path.join(self.runs, doc["id"] + ".json"), "w") as f:
            json.dump(doc, f)
        os.unlink(os.path.join(self.runs, ids[0] + ".json"))
        self.assertEqual([r["id"] for r in self.history_json()["results"]], [ids[1], doc["id"]])
        rc, out, _ = self.cli("show", "latest")
        self.assertEqual(rc, 0)
        self.assertIn(doc["id"], out)

    def test_two_runs_finishing_together(self):
        results = []

        def one(label):
            results.append(self.cli("run", "-q", "-r", "2", "-l", label, "--", STAGE_PROG, "seq"))

        threads = [threading.Thread(target=one, args=(f"w{i}",)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for rc, _, err in results:
            self.assertEqual(rc, 0, err)
        doc = self.history_json()
        self.assertEqual(sorted(r["label"] for r in doc["results"]), ["w0", "w1"])

    # ------------------------------------------------------------------ detection

    def test_detect_step(self):
        # The same benchmark (one label), 50 ms, then 100 ms: a step at the fifth result. One
        # real result is the template of six whose figures are set, so that what detection
        # is given does not depend on how busy the machine is (CI's load made real sleeps too
        # noisy to call the step now and then).
        template = self.bench("sleep", "0.05", label="nap", runs=5)
        with open(os.path.join(self.runs, template + ".json")) as f:
            r = json.load(f)
        os.remove(os.path.join(self.runs, template + ".json"))
        ids = []
        for i, ms in enumerate([50.1, 49.9, 50.3, 50.0, 100.2, 99.8]):
            r["id"] = f"20990101T0000{i:02d}-step{i:02d}"
            r["created"] = f"2099-01-01T00:00:{i:02d}.000Z"
            w = r["summary"]["wall_ns"]
            w.update(median=ms * 1e6, ci_low=ms * 0.995e6, ci_high=ms * 1.005e6, ci_level=0.95,
                     mad=ms * 0.002e6, n=6)
            # the code changed with the step: what --detect names is the commit range
            r["environment"]["git"] = {"commit": ("a1" if i < 4 else "b2") * 20}
            with open(os.path.join(self.runs, r["id"] + ".json"), "w") as f:
                json.dump(r, f)
            ids.append(r["id"])
        doc = self.history_json("--detect")
        self.assertEqual(doc["detect"]["min_effect_pct"], 2)
        changes = [c for c in doc["changes"] if c["stage"] == "total"]
        self.assertEqual([c["id"] for c in changes], [ids[4]], doc["changes"])
        c = changes[0]
        self.assertEqual(c["label"], "nap")
        self.assertEqual(c["direction"], "slower")
        self.assertGreater(c["change_pct"], 95)
        self.assertLess(c["change_pct"], 105)
        self.assertGreater(c["after_ns"], c["before_ns"])
        self.assertEqual((c["previous_id"], c["previous_commit"], c["commit"]),
                         (ids[3], "a1" * 20, "b2" * 20))
        rc, out, err = self.cli("history", "--detect")
        self.assertEqual(rc, 0, err)  # the step is not at the newest result (ids[5])
        self.assertIn("slower", out)
        self.assertIn(ids[4], out.split("changes")[-1])
        self.assertIn("git log " + "a1" * 6 + ".." + "b2" * 6, out)
        # the newest result slower than those before: exit status 1, for CI (issue 13)
        rc, _, err = self.cli("rm", ids[5])
        self.assertEqual(rc, 0, err)
        rc, out, err = self.cli("history", "--detect")
        self.assertEqual(rc, 1, out + err)
        self.assertIn(ids[4], out.split("changes")[-1])
        self.assertEqual(self.cli("history", "--detect", "--json")[0], 1)
        # without the step: nothing
        rc, _, err = self.cli("rm", ids[4])
        self.assertEqual(rc, 0, err)
        doc = self.history_json("--detect")
        self.assertEqual(doc["changes"], [])
        rc, out, _ = self.cli("history", "--detect")
        self.assertIn("none", out.split("changes")[-1])

    # ------------------------------------------------------------------ show

    def test_show(self):
        first = self.bench(STAGE_PROG, "seq", label="base")
        second = self.bench(STAGE_PROG, "threads", label="other")
        path = os.path.join(self.runs, first + ".json")
        for ref in (first, first[:-3], "base", path):
            with self.subTest(ref=ref):
                rc, out, err = self.cli("show", "-v", ref)
                self.assertEqual(rc, 0, err)
                self.assertIn(first, out)
                self.assertIn("[base]", out)
                for word in ("CI of median", "share", "load", "train", "step", "total",
                             "3 runs measured, 3 ok", "counters", "metadata batch_size=32"):
                    self.assertIn(word, out)
        rc, out, _ = self.cli("show", "latest")
        self.assertEqual(rc, 0)
        self.assertIn(second, out)
        self.assertIn("work", out)
        rc, out, _ = self.cli("show", "--json", "base")
        self.assertEqual(rc, 0)
        with open(path) as f:
            self.assertEqual(out, f.read())
        # a file anywhere, with no store at all
        elsewhere = os.path.join(self.tmp.name, "copy.json")
        with open(path) as f, open(elsewhere, "w") as g:
            g.write(f.read())
        rc, out, err = self.cli("show", elsewhere, store=False)
        self.assertEqual(rc, 0, err)
        self.assertIn(first, out)

    # ------------------------------------------------------------------ rm

    def test_rm(self):
        a = self.bench(STAGE_PROG, "seq", label="a")
        b = self.bench(STAGE_PROG, "seq", label="b")
        c = self.bench(STAGE_PROG, "seq", label="c")
        self.cli("history")  # the index exists before the snapshot
        # one bad reference: nothing removed
        before = self.snapshot()
        rc, out, err = self.cli("rm", a, "nope")
        self.assertEqual(rc, 2)
        self.assertIn("unknown run 'nope'", err)
        self.assertIn("nothing removed", err)
        self.assertEqual(self.snapshot(), before)
        # a file outside the store: refused, left alone
        outside = os.path.join(self.tmp.name, "x.json")
        with open(os.path.join(self.runs, a + ".json")) as f, open(outside, "w") as g:
            g.write(f.read())
        rc, _, err = self.cli("rm", outside)
        self.assertEqual(rc, 2)
        self.assertIn("is not a result file of the store", err)
        self.assertTrue(os.path.exists(outside))
        # by id, by label and by path inside the store
        rc, out, err = self.cli("rm", a, "b", os.path.join(self.runs, c + ".json"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), ["removed", a, "removed", b, "removed", c])
        self.assertEqual(os.listdir(self.runs), [])
        self.assertEqual(self.history_json()["results"], [])
        with contextlib.closing(sqlite3.connect(self.db)) as db:
            self.assertEqual(db.execute("SELECT count(*) FROM stages").fetchone()[0], 0)
        rc, _, err = self.cli("rm", a)
        self.assertEqual(rc, 2)
        self.assertIn(f"unknown run '{a}'", err)

    # ------------------------------------------------------------------ bad input

    def test_bad_references(self):
        a = self.bench(STAGE_PROG, "seq", label="a")
        b = self.bench(STAGE_PROG, "seq", label="b")
        common = os.path.commonprefix([a, b])
        self.cli("history")
        before = self.snapshot()
        cases = [
            (("show", "nope"), "unknown run 'nope' (see mlbench history)"),
            (("show", common), f"ambiguous prefix '{common}' matches {a} and {b}"),
            (("rm", common), "ambiguous prefix"),
            (("show",), "give one result"),
            (("show", a, b), "give one result"),
            (("rm",), "give the results to remove"),
            (("show", "--bogus", a), "unknown option '--bogus'"),
            (("history", "--bogus"), "unknown option '--bogus'"),
            (("history", "--last", "0"), "--last '0'"),
            (("history", "extra"), "unexpected argument 'extra'"),
            (("rm", "--bogus", a), "unknown option '--bogus'"),
            (("history", "--label"), "needs a value"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.cli(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertEqual(out, "")
        self.assertEqual(self.snapshot(), before)
        missing = os.path.join(self.tmp.name, "none")
        for verb in (("history",), ("show", "latest"), ("rm", "x")):
            rc, _, err = self.cli(*verb[:1], "--store", missing, *verb[1:], store=False)
            self.assertEqual(rc, 2)
            self.assertIn("no result store at", err)
        self.assertFalse(os.path.exists(missing))

    def test_corrupt_result_file(self):
        good = self.bench(STAGE_PROG, "seq", label="good")
        bad = self.bench(STAGE_PROG, "seq", label="bad")
        path = os.path.join(self.runs, bad + ".json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[: len(text) // 2])  # truncated
        rc, out, err = self.cli("show", bad)
        self.assertEqual(rc, 2)
        self.assertIn(path, err)
        self.assertRegex(err, r"line \d+, column \d+")
        self.assertEqual(out, "")
        # history goes on without it, and says why
        rc, out, err = self.cli("history")
        self.assertEqual(rc, 0, err)
        self.assertIn(good, out)
        self.assertNotIn(bad, out)
        self.assertIn(bad, err)
        self.assertIn("left out of the store index", err)
        # and it can be removed
        rc, _, err = self.cli("rm", bad)
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.exists(path))

    def check_refused(self, message):
        before = self.snapshot()
        for args in (("history",), ("show", "latest"), ("rm", "latest"), ("history", "--json")):
            with self.subTest(args=args):
                rc, out, err = self.cli(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertIn(self.db, err)
                self.assertEqual(out, "")
        self.assertEqual(self.snapshot(), before)

    def test_index_not_ours(self):
        self.bench(STAGE_PROG, "seq", label="a")
        with open(self.db, "w") as f:
            f.write("this is not a database\n" * 50)
        self.check_refused("is not an mlbench store")
        os.unlink(self.db)
        with contextlib.closing(sqlite3.connect(self.db)) as db:
            db.execute("CREATE TABLE songs (title TEXT)")
            db.commit()
        self.check_refused("is not an mlbench store")

    def test_index_newer(self):
        self.bench(STAGE_PROG, "seq", label="a")
        self.cli("history")
        with contextlib.closing(sqlite3.connect(self.db)) as db:
            db.execute("PRAGMA user_version = 7")
        self.check_refused("newer than this mlbench reads")


if __name__ == "__main__":
    unittest.main()

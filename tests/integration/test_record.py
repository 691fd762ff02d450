"""End-to-end tests of `mlbench record`: timings measured in another process (documents of
schema mlbench.timings/1, as python/mlbench_marker's timer writes them) stored as results, then
read back by show, history, compare and report. The statistics are checked against what Python
computes from the rounds; what the timer did not measure must be null or absent, never 0; a bad
document (hostile input, truncated JSON, one bad among several) exits 2 and stores nothing; a
store that cannot be written exits 3 and leaves no file.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree)."""
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pg_server import PgServer  # noqa: E402
from test_run import check_schema, load_schema  # noqa: E402

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMA = load_schema(os.path.join(SOURCE, "docs", "result-schema.md"))

# What a timing in the process does not measure: null in every run, never 0.
UNMEASURED = ["sys_ns", "max_rss_bytes", "minor_faults", "major_faults",
              "voluntary_context_switches", "involuntary_context_switches"]


def per_call(round_ns, number):
    """A round's time per call as the result holds it: whole ns, halves away from zero."""
    return int(round_ns / number + 0.5)


def timings(name="sort", number=1000, rounds=None, **extra):
    """A document of schema mlbench.timings/1."""
    doc = {"schema": "mlbench.timings/1", "name": name, "number": number,
           "rounds_ns": rounds if rounds is not None else
           [1234100 + 1000 * (i % 7) for i in range(20)]}
    doc.update(extra)
    return doc


class RecordTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-record-test-")
        self.cwd = self.tmp.name
        self.store = os.path.join(self.cwd, "store")
        self.runs = os.path.join(self.store, "runs")

    def tearDown(self):
        self.tmp.cleanup()

    def cli(self, *args, stdin=None, store=True, timeout=120):
        """mlbench ARGS (with the test's --store) in the test's directory, stdin given as text:
        (status, stdout, stderr)."""
        env = dict(os.environ)
        env.pop("MLBENCH_STORE", None)
        cmd = [MLBENCH, args[0]] + (["--store", self.store] if store else []) + list(args[1:])
        p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env,
                           cwd=self.cwd, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def record(self, *docs, args=(), raw=None):
        """Records docs (JSON Lines on stdin) with --json; returns the printed array."""
        text = raw if raw is not None else "".join(json.dumps(d) + "\n" for d in docs)
        rc, out, err = self.cli("record", "--json", *args, stdin=text)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def stored_files(self):
        return sorted(os.listdir(self.runs)) if os.path.isdir(self.runs) else []

    def show(self, ref):
        rc, out, err = self.cli("show", "--json", ref)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def check_unmeasured(self, result, cpu):
        """Nothing the timer did not measure is 0: null in the runs, absent from the summary."""
        for run in result["runs"]:
            for key in UNMEASURED:
                self.assertIsNone(run[key], (key, run["index"]))
            if not cpu or run["warmup"]:
                self.assertIsNone(run["user_ns"], run["index"])
        s = result["summary"]
        self.assertNotIn("sys_ns", s)
        self.assertNotIn("max_rss_bytes", s)
        if not cpu:
            self.assertNotIn("user_ns", s)
            self.assertIsNone(s["cpu_cores"])
        self.assertIsNone(result["analysis"])  # no samples: no verdicts
        self.assertEqual(result["sampling"]["sources"], [])
        self.assertTrue(result["sampling"]["not_measured"])
        check_schema(self, result, SCHEMA, result["id"])

    # ------------------------------------------------------------------ round trip

    def test_round_trip(self):
        random.seed(7)
        number = 1000
        rounds = [random.randint(1200000, 1300000) for _ in range(25)]
        cpu = [r - random.randint(0, 50000) for r in rounds]
        doc = timings(name="sort", number=number, rounds=rounds, cpu_ns=cpu,
                      label="tests/test_sort.py::test_sort[1000]",
                      command=["pytest", "tests/test_sort.py::test_sort[1000]"],
                      timer="mlbench_marker.Timer 0.1.0", synchronized="none",
                      warmup_rounds_ns=[5000000, 1400000],
                      metadata={"python": "3.11.2", "batch": 64, "lr": 0.001},
                      started_unix_ns=1733380000123456789, unknown_field={"ignored": [1, 2]})
        [entry] = self.record(doc)
        calls = [per_call(r, number) for r in rounds]
        self.assertEqual(entry["label"], doc["label"])
        self.assertEqual(entry["name"], "sort")
        self.assertEqual(entry["n"], 25)
        self.assertEqual(entry["median_ns"], statistics.median(calls))
        self.assertLessEqual(entry["ci_low_ns"], entry["median_ns"])
        self.assertGreaterEqual(entry["ci_high_ns"], entry["median_ns"])
        self.assertTrue(os.path.isabs(entry["path"]), entry)
        self.assertEqual(entry["path"], os.path.join(os.path.realpath(self.runs),
                                                     entry["id"] + ".json"))

        r = self.show(entry["id"])
        with open(entry["path"]) as f:
            self.assertEqual(json.load(f), r)
        self.assertEqual(r["label"], doc["label"])
        self.assertEqual(r["command"]["argv"], doc["command"])
        self.assertEqual(r["created"], "2024-12-05T06:26:40.123Z")
        self.assertEqual(len(r["runs"]), 27)
        self.assertEqual([x["warmup"] for x in r["runs"]], [True] * 2 + [False] * 25)
        measured = r["runs"][2:]
        self.assertEqual([x["wall_ns"] for x in measured], calls)
        self.assertEqual([x["round_ns"] for x in measured], rounds)
        self.assertEqual([x["user_ns"] for x in measured], [per_call(c, number) for c in cpu])
        self.assertEqual([x["round_cpu_ns"] for x in measured], cpu)
        for x in r["runs"]:
            self.assertEqual((x["status"], x["exit_code"]), ("ok", 0))
            self.assertEqual(x["stages"], [])
        # runs start where the ones before them ended
        self.assertEqual(r["runs"][0]["start"], "2024-12-05T06:26:40.123Z")
        self.assertEqual(r["runs"][1]["start"], "2024-12-05T06:26:40.128Z")
        s = r["summary"]
        self.assertEqual((s["runs_measured"], s["runs_ok"], s["runs_used"]), (25, 25, 25))
        self.assertEqual(s["wall_ns"]["median"], statistics.median(calls))
        self.assertAlmostEqual(s["wall_ns"]["mean"], statistics.mean(calls), delta=1e-6)
        self.assertAlmostEqual(s["wall_ns"]["stddev"], statistics.stdev(calls), delta=1e-6)
        self.assertEqual(s["user_ns"]["median"],
                         statistics.median(per_call(c, number) for c in cpu))
        self.assertGreater(s["cpu_cores"], 0.9)
        self.assertEqual(s["stages"], [])
        self.assertEqual({m["key"]: m["value"] for m in s["metadata"]},
                         {"python": "3.11.2", "batch": "64", "lr": "0.001"})
        self.assertEqual(r["config"]["timings"], {
            "schema": "mlbench.timings/1", "name": "sort", "number": 1000, "rounds": 25,
            "warmup_rounds": 2, "synchronized": "none", "timer": "mlbench_marker.Timer 0.1.0"})
        self.assertEqual((r["config"]["runs"], r["config"]["warmup"]), (25, 2))
        self.assertIn("hostname", r["environment"])
        self.assertIn("cpus_online", r["environment"])
        codes = [w["code"] for w in r["warnings"]]
        self.assertIn("slow_warmup", codes)
        self.assertNotIn("few_rounds", codes)
        self.check_unmeasured(r, cpu=True)

        h = self.cli("history", "--json")
        self.assertEqual(h[0], 0, h[2])
        [e] = json.loads(h[1])["results"]
        self.assertEqual((e["id"], e["label"], e["command"]),
                         (entry["id"], doc["label"], " ".join(doc["command"])))
        self.assertEqual(e["wall_ns"]["median"], statistics.median(calls))
        self.assertEqual(e["runs_measured"], 25)
        # by its id: as a REF, a label with '/' (a pytest node id) reads as a file path
        rc, out, err = self.cli("show", "-v", entry["id"])
        self.assertEqual(rc, 0, err)
        self.assertIn(doc["label"], out)
        self.assertIn("python=3.11.2", out)
        for fmt in ("md", "html", "csv", "trace"):
            rc, _, err = self.cli("report", entry["id"], "--format", fmt, "-o",
                                  os.path.join(self.cwd, "report." + fmt))
            self.assertEqual(rc, 0, (fmt, err))

    def test_compare_slower(self):
        random.seed(3)
        base = [random.randint(990000, 1010000) for _ in range(20)]
        slow = [2 * x for x in base]
        out = self.record(timings(label="base", rounds=base), timings(label="slow", rounds=slow))
        self.assertEqual([e["label"] for e in out], ["base", "slow"])
        self.assertEqual(len(self.stored_files()), 2)
        rc, text, err = self.cli("compare", "--json", "base", "slow")
        self.assertEqual(rc, 0, err)
        [cand] = json.loads(text)["candidates"]
        [total] = cand["stages"]
        self.assertEqual(total["name"], "total")
        self.assertEqual(total["verdict"], "slower")
        self.assertAlmostEqual(total["change_pct"], 100, delta=1)
        self.assertEqual((total["n_baseline"], total["n_candidate"]), (20, 20))
        rc, text, err = self.cli("compare", out[0]["id"], out[1]["id"])
        self.assertEqual(rc, 0, err)
        self.assertIn("slower", text)

    def test_json_lines(self):
        docs = [timings(name="f%d" % i, label="case %d" % i, number=10 * (i + 1),
                        rounds=[(1000 + i) * 10 * (i + 1)] * 6) for i in range(3)]
        # one pretty-printed over lines, one compact, blank lines between: all one stream
        raw = json.dumps(docs[0], indent=2) + "\n\n" + json.dumps(docs[1]) + "   " + \
            json.dumps(docs[2]) + "\n"
        out = self.record(raw=raw)
        self.assertEqual([e["label"] for e in out], ["case 0", "case 1", "case 2"])
        self.assertEqual([e["median_ns"] for e in out], [1000, 1001, 1002])
        self.assertEqual(len({e["id"] for e in out}), 3)
        self.assertEqual(sorted(e["id"] + ".json" for e in out), self.stored_files())
        for e in out:
            self.assertEqual(self.show(e["id"])["config"]["timings"]["name"],
                             "f%d" % out.index(e))

    def test_cpu_absent(self):
        [e] = self.record(timings(rounds=[5000, 5100, 5050, 5020, 4990, 5010], number=1))
        r = self.show(e["id"])
        self.check_unmeasured(r, cpu=False)
        self.assertNotIn("round_cpu_ns", r["runs"][0])
        # the summary's text shows no CPU figure it does not have
        rc, out, err = self.cli("show", e["id"])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("cores busy", out)

    def test_warmup_kept_not_counted(self):
        rounds = [100000, 101000, 99000, 100500, 100200, 99800]
        [e] = self.record(timings(number=100, rounds=rounds, warmup_rounds_ns=[900000, 800000],
                                  cpu_ns=[90000] * 6))
        r = self.show(e["id"])
        self.assertEqual([x["warmup"] for x in r["runs"]], [True, True] + [False] * 6)
        self.assertEqual([x["wall_ns"] for x in r["runs"][:2]], [9000, 8000])
        self.assertEqual([x["round_ns"] for x in r["runs"][:2]], [900000, 800000])
        self.assertEqual(r["summary"]["runs_measured"], 6)
        self.assertEqual(r["summary"]["wall_ns"]["max"], 1010)
        self.assertEqual(e["median_ns"], statistics.median(per_call(x, 100) for x in rounds))
        self.check_unmeasured(r, cpu=True)

    def test_few_rounds(self):
        for n, shown in ((1, None), (2, None), (3, "75%"), (4, "87%")):
            with self.subTest(rounds=n):
                rc, out, err = self.cli("record", stdin=json.dumps(
                    timings(rounds=[10000 + 10 * i for i in range(n)], number=10)))
                self.assertEqual(rc, 0, err)
                self.assertIn("few rounds: the interval is wide", out)
                if shown:
                    self.assertIn(shown + " CI", out)
                else:
                    self.assertNotIn("CI", out)
                rid = out.split()[1]
                codes = [w["code"] for w in self.show(rid)["warnings"]]
                self.assertIn("few_rounds", codes)
                self.assertNotIn("few_runs", codes)
                self.assertNotIn("low_ci_coverage", codes)

    # ------------------------------------------------------------------ options and output

    def test_output_json_and_quiet(self):
        doc = timings(label="from doc")
        out_file = os.path.join(self.cwd, "one.json")
        rc, out, err = self.cli("record", "-o", out_file, "-l", "override", "-q",
                                stdin=json.dumps(doc))
        self.assertEqual((rc, out, err), (0, "", ""))
        [name] = self.stored_files()
        with open(out_file) as f, open(os.path.join(self.runs, name)) as g:
            written = json.load(f)
            self.assertEqual(written, json.load(g))
        self.assertEqual(written["label"], "override")

        rc, out, err = self.cli("record", stdin=json.dumps(doc))
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"^stored \d{8}T\d{6}-[0-9a-f]{6}  label 'from doc'  sort: "
                              r"1\.23\d us per call \(median of 20 rounds of 1000 calls, "
                              r"95% CI 1\.23\d us \.\. 1\.23\d us\)\n")
        # from a file, and "-" for standard input
        path = os.path.join(self.cwd, "in.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps(timings(label="file")))
        self.assertEqual(self.record(args=(path,), raw="")[0]["label"], "file")
        self.assertEqual(self.record(timings(label="dash"), args=("-",))[0]["label"], "dash")
        self.assertEqual(len(self.stored_files()), 4)

        # -o and -l apply to one result
        two = json.dumps(timings()) + "\n" + json.dumps(timings())
        for opt in (["-o", os.path.join(self.cwd, "x.json")], ["-l", "x"]):
            rc, out, err = self.cli("record", *opt, stdin=two)
            self.assertEqual(rc, 2, err)
            self.assertIn("2 documents", err)
        self.assertEqual(len(self.stored_files()), 4)
        rc, out, err = self.cli("record", "--help")
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("Usage: mlbench record"), out)
        self.assertIn("Exit status", out)
        rc, _, err = self.cli("record", "a", "b", stdin="")
        self.assertEqual(rc, 2, err)
        rc, _, err = self.cli("record", os.path.join(self.cwd, "missing.json"))
        self.assertEqual(rc, 2, err)
        self.assertIn("missing.json", err)

    def test_store_not_writable(self):
        blocker = os.path.join(self.cwd, "file")
        with open(blocker, "w") as f:
            f.write("not a directory")
        cases = [os.path.join(blocker, "store")]
        if os.getuid() != 0:  # root writes anywhere
            ro = os.path.join(self.cwd, "ro")
            os.makedirs(os.path.join(ro, "runs"))
            os.chmod(os.path.join(ro, "runs"), 0o555)
            cases.append(ro)
        for store in cases:
            with self.subTest(store=store):
                env = dict(os.environ, TMPDIR=self.cwd)
                p = subprocess.run([MLBENCH, "record", "--store", store], input=json.dumps(
                    timings()), capture_output=True, text=True, env=env, cwd=self.cwd,
                    timeout=60)
                self.assertEqual(p.returncode, 3, p.stderr)
                self.assertIn("cannot use the result store", p.stderr)
                self.assertEqual(p.stdout, "")
                left = [n for n in os.listdir(self.cwd) if n.startswith("mlbench-")]
                self.assertEqual(left, [])
                if store != cases[0]:
                    self.assertEqual(os.listdir(os.path.join(store, "runs")), [])
        # -o that cannot be written: the result is in the store, the status says 3
        rc, _, err = self.cli("record", "-o", os.path.join(blocker, "out.json"),
                              stdin=json.dumps(timings()))
        self.assertEqual(rc, 3, err)
        self.assertEqual(len(self.stored_files()), 1)

    # ------------------------------------------------------------------ bad input

    BAD = [
        # (document or raw text, what the message must say)
        (timings(label="x", rounds=[100, 200, 300, -5], number=10),
         "document 1 (label 'x'): rounds_ns[3] is -5: give durations in nanoseconds > 0"),
        (timings(rounds=[1000, "2000"]), 'rounds_ns[1] is "2000" (a string)'),
        (timings(rounds=[1000, None]), "rounds_ns[1] is null"),
        (timings(rounds=[0]), "rounds_ns[0] is 0"),
        (timings(rounds=[1e20]), "rounds_ns[0] is 1e+20"),
        (timings(rounds=[]), "rounds_ns has 0 values"),
        (timings(rounds={"a": 1}), "rounds_ns is an object"),
        (timings(rounds=[100], number=1000), "below the 1 ns"),
        (timings(number=0), "number is 0"),
        (timings(number=-3), "number is -3"),
        (timings(number=2.5), "number is 2.5"),
        (timings(number="1000"), 'number is "1000"'),
        (timings(number=1e300), "number is 1e+300"),
        (timings(schema="mlbench.timings/2"), 'schema is "mlbench.timings/2"'),
        (timings(schema=None), "schema is null"),
        (timings(name=""), 'name is ""'),
        (timings(name="x" * 201), "name is"),
        (timings(name="red\u001b[31m"), "\\u001B[31m"),
        (timings(name=["sort"]), "name is an array"),
        (timings(label="a\nb"), "label is"),
        (timings(label=False), "label is false (a boolean)"),
        (timings(cpu_ns=[1, 2]), "cpu_ns has 2 values for 20 measured round(s)"),
        (timings(cpu_ns=[-1] * 20), "cpu_ns[0] is -1: give durations in nanoseconds >= 0"),
        (timings(warmup_rounds_ns=[10, "x"]), 'warmup_rounds_ns[1] is "x"'),
        (timings(warmup_rounds_ns=5), "warmup_rounds_ns is 5 (a number)"),
        (timings(synchronized="gpu"), 'synchronized is "gpu": give "cuda" or "none"'),
        (timings(metadata=[1]), "metadata is an array"),
        (timings(metadata={"a": [1]}), "metadata.a is an array"),
        (timings(metadata={"b": True}), "metadata.b is true (a boolean)"),
        (timings(metadata={"mlbench.rank": "0"}), 'metadata key "mlbench.rank"'),
        (timings(metadata={"": "v"}), 'metadata key ""'),
        (timings(command=[]), "command is an empty array"),
        (timings(command="pytest"), 'command is "pytest" (a string)'),
        (timings(command=["pytest", 3]), "command[1] is 3"),
        (timings(started_unix_ns=-1), "started_unix_ns is -1"),
        (timings(started_unix_ns=1.5e18), "started_unix_ns is 1.5e+18"),
        (timings(timer=7), "timer is 7 (a number)"),
        ({"name": "x", "number": 1, "rounds_ns": [5]}, 'has no "schema"'),
        (timings(**{"name": None}), "name is null"),
        ({"schema": "mlbench.timings/1", "name": "x", "rounds_ns": [5]}, 'has no "number"'),
        ({"schema": "mlbench.timings/1", "name": "x", "number": 1}, 'has no "rounds_ns"'),
        ([1, 2], "document 1: is an array, not an object"),
        ("null", "document 1 is not valid JSON: '[' or '{' expected near 'null'"),
        ("7", "line 1, column 1: document 1 is not valid JSON"),
        ('{"schema": "mlbench.timings/1", "number": 1, "number": 2}', "duplicate object key"),
        ('{"rounds_ns": [NaN]}', "line 1, column 18: document 1 is not valid JSON: invalid token near 'NaN'"),
        ('{"rounds_ns": [1e400]}', "real number overflow"),
        ('{"rounds_ns": [100000000000000000000000]}', "too big integer"),
        ("[" * 5000 + "]" * 5000, "maximum parsing depth"),
        ("\n\n{\"schema\": \n \"mlbench.timings/1\",\n \"rounds_ns\": [1, 2",
         "line 5, column 19: document 1 is not valid JSON"),
        ("{} garbage", "line 1, column 10: document 2 is not valid JSON"),
        ("", "holds no document"),
        (" \n\t\n", "holds no document"),
        ("\ufeff{}", "document 1 is not valid JSON"),
    ]

    def test_bad_input(self):
        for doc, expected in self.BAD:
            text = doc if isinstance(doc, str) else json.dumps(doc)
            with self.subTest(expected=expected):
                rc, out, err = self.cli("record", stdin=text)
                self.assertEqual(rc, 2, (text[:200], out, err))
                self.assertIn(expected, err)
                self.assertEqual(out, "")
                self.assertNotIn("\x1b", err)  # the input never reaches the terminal raw
                self.assertFalse(os.path.exists(self.store), "a bad document made the store")

    def test_one_bad_among_several(self):
        good = [timings(label="a"), timings(label="b"), timings(label="c")]
        bad = copy.deepcopy(good)
        bad[1]["rounds_ns"][3] = -5
        rc, out, err = self.cli("record", stdin="\n".join(json.dumps(d) for d in bad))
        self.assertEqual(rc, 2, err)
        self.assertIn("document 2 (label 'b'): rounds_ns[3] is -5", err)
        self.assertEqual(self.stored_files(), [])
        # the third truncated: nothing of the first two either
        text = json.dumps(good[0]) + "\n" + json.dumps(good[1]) + "\n" + json.dumps(good[2])[:-9]
        rc, out, err = self.cli("record", stdin=text)
        self.assertEqual(rc, 2, err)
        self.assertRegex(err, r"line 3, column \d+: document 3 is not valid JSON")
        self.assertEqual(self.stored_files(), [])
        self.assertEqual(len(self.record(*good)), 3)

    def test_fuzz(self):
        """Random damage to valid documents: mlbench stores the document or refuses it (exit 2,
        nothing stored), and never crashes."""
        rng = random.Random(2024)
        valid = json.dumps(timings(label="fuzz", warmup_rounds_ns=[2000000], cpu_ns=[1000] * 20,
                                   metadata={"k": "v"}, command=["a", "b"], timer="t",
                                   synchronized="cuda", started_unix_ns=1700000000000000000))
        values = [None, True, -1, 0, 1, 2 ** 63, -2 ** 63, 1e308, -1e-300, "", "x" * 300, [],
                  {}, [[[]]], {"a": {"b": 1}}, "\u0000".join("ab"), "\u202e", 0.5]
        keys = ["schema", "name", "label", "command", "timer", "number", "rounds_ns",
                "warmup_rounds_ns", "cpu_ns", "synchronized", "metadata", "started_unix_ns"]
        stored = 0
        for i in range(120):
            kind = i % 4
            if kind == 0:  # cut anywhere
                text = valid[:rng.randrange(len(valid))]
            elif kind == 1:  # a byte changed
                k = rng.randrange(len(valid))
                text = valid[:k] + rng.choice('{}[]",:0-e.\\ x\u00e9') + valid[k + 1:]
            elif kind == 2:  # a field of another type
                d = json.loads(valid)
                d[rng.choice(keys)] = rng.choice(values)
                text = json.dumps(d)
            else:  # a round of another type, among several documents
                d = json.loads(valid)
                d["rounds_ns"][rng.randrange(20)] = rng.choice(values)
                text = valid + "\n" + json.dumps(d)
            before = self.stored_files()
            rc, out, err = self.cli("record", "-q", stdin=text)
            self.assertIn(rc, (0, 2), (text, err))
            if rc == 2:
                self.assertEqual(self.stored_files(), before, text)
                self.assertTrue(err.startswith("mlbench: error: record: "), err)
            else:
                stored += 1
                self.assertGreater(len(self.stored_files()), len(before))
        self.assertGreater(stored, 0)
        for name in self.stored_files():
            with open(os.path.join(self.runs, name)) as f:
                check_schema(self, json.load(f), SCHEMA, name)


WHY_NOT = PgServer().missing()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SharedStoreTest(unittest.TestCase):
    """A recorded timing lands in a shared PostgreSQL store as a run's result does."""

    @classmethod
    def setUpClass(cls):
        cls.server = PgServer()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def test_shared(self):
        db = "r" + str(int(time.monotonic_ns() % 10 ** 12))
        self.server.createdb(db)
        uri = self.server.uri(db)
        with tempfile.TemporaryDirectory(prefix="mlbench-record-pg-") as cwd:
            env = dict(os.environ)
            env.pop("MLBENCH_STORE", None)

            def cli(*args, stdin=None):
                p = subprocess.run([MLBENCH, args[0], "--store", uri] + list(args[1:]),
                                   input=stdin, capture_output=True, text=True, env=env,
                                   cwd=cwd, timeout=120)
                return p.returncode, p.stdout, p.stderr

            rc, out, err = cli("record", "--json", stdin=json.dumps(timings(label="pg")))
            self.assertEqual(rc, 0, err)
            [e] = json.loads(out)
            self.assertIsNone(e["path"])
            rc, out, err = cli("history", "--json")
            self.assertEqual(rc, 0, err)
            self.assertEqual([r["id"] for r in json.loads(out)["results"]], [e["id"]])
            rc, out, err = cli("show", "--json", "pg")
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out)["config"]["timings"]["rounds"], 20)
            self.assertFalse(os.path.exists(os.path.join(cwd, ".mlbench")))


if __name__ == "__main__":
    unittest.main()

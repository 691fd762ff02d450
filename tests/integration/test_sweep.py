"""End-to-end tests of `mlbench sweep`: a 2x2 matrix of sleeps of known length (medians, the
winner, the interleaved rounds, every point a stored result with its sweep id), several
commands with names, constraints, bad input refused before anything runs, Ctrl-C keeping every
finished point, compare of a sweep, and interleaving putting a burner's interference on every
point alike.

Environment (set by ctest): MLBENCH (the binary), WORKLOAD (mlbench-workload), MEMGROW
(tests/integration/memgrow.c built), MLBENCH_SOURCE."""
import glob
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
WORKLOAD = os.environ.get("WORKLOAD", "build/mlbench-workload")
MEMGROW = os.environ.get("MEMGROW", "build/tests/integration/memgrow")


class SweepTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-sweep-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def sweep(self, *args, timeout=300):
        p = subprocess.run([MLBENCH, "sweep", "--store", self.store, *args],
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def sweep_json(self, *args, **kw):
        rc, out, err = self.sweep("--json", *args, **kw)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def result(self, point):
        with open(os.path.join(self.store, point["result_path"])) as f:
            return json.load(f)

    def sweeps(self):
        return sorted(glob.glob(os.path.join(self.store, "sweeps", "*.json")))

    def test_matrix_of_sleeps(self):
        doc = self.sweep_json("-r", "3", "--seed", "7", "-L", "a", "0.1,0.2", "-L", "b", "0,0.1",
                              "--", "sh", "-c", "sleep {a}; sleep {b}")
        self.assertEqual(doc["schema"], "mlbench.sweep/1")
        self.assertEqual(doc["status"], "complete")
        self.assertEqual(doc["mode"], "matrix")
        self.assertEqual(doc["seed"], 7)
        self.assertEqual([p["name"] for p in doc["points"]],
                         ["a=0.1 b=0", "a=0.1 b=0.1", "a=0.2 b=0", "a=0.2 b=0.1"])
        # Interleaved: three rounds, each every point once, not all in the same order.
        self.assertEqual(len(doc["rounds"]), 3)
        for r in doc["rounds"]:
            self.assertEqual(sorted(r), [0, 1, 2, 3])
        medians = {}
        for p in doc["points"]:
            self.assertEqual(p["status"], "ok", p)
            self.assertEqual(p["runs_ok"], 3)
            expected = float(p["parameters"]["a"]) + float(p["parameters"]["b"])
            medians[p["name"]] = median = p["figures"]["total"]["median_ns"] / 1e9
            self.assertGreater(median, expected * 0.98)
        # Each point's median less the fastest's is the known difference within 10 % (the
        # start of three processes, which a loaded machine makes slow, cancels out).
        base = medians["a=0.1 b=0"]
        for p in doc["points"]:
            extra = float(p["parameters"]["a"]) + float(p["parameters"]["b"]) - 0.1
            if extra:
                self.assertAlmostEqual(medians[p["name"]] - base, extra, delta=extra * 0.1 + 0.01,
                                       msg=p["name"])
            r = self.result(p)
            self.assertEqual(r["sweep"]["id"], doc["id"])
            self.assertEqual(r["sweep"]["point"], p["index"])
            self.assertEqual(r["sweep"]["parameters"], p["parameters"])
            self.assertEqual(r["command"]["argv"][2], "sleep %s; sleep %s" % (p["parameters"]["a"],
                                                                     p["parameters"]["b"]))
            self.assertEqual(r["id"], p["result_id"])
        self.assertEqual(doc["winner"]["name"], "a=0.1 b=0")
        # The runs of the points really alternate: by start time, the first four runs made
        # belong to four different points.
        starts = []
        for p in doc["points"]:
            for run in self.result(p)["runs"]:
                starts.append((run["start"], p["index"]))
        starts.sort()
        self.assertEqual(sorted(i for _, i in starts[:4]), [0, 1, 2, 3])
        self.assertEqual([i for _, i in starts[:4]], doc["rounds"][0])
        # The same seed gives the same rounds.
        again = self.sweep_json("-r", "3", "--seed", "7", "-L", "a", "0.1,0.2", "-L", "b",
                                "0,0.1", "--", "sh", "-c", "sleep {a}; sleep {b}")
        self.assertEqual(again["rounds"], doc["rounds"])
        self.assertEqual(len(self.sweeps()), 2)

    def test_point_results_match_the_schema(self):
        """A point's result, sweep member included, is documented field by field."""
        from test_run import load_schema, walk
        doc = self.sweep_json("-r", "1", "-L", "n", "1,2", "--", "sleep", "0.0{n}")
        documented = load_schema(os.path.join(os.environ.get("MLBENCH_SOURCE", "../.."), "docs",
                                              "result-schema.md"))
        seen = {}
        walk(self.result(doc["points"][1]), "", seen)
        for path, types in seen.items():
            self.assertIn(path, documented, f"{path} is not documented")
            for t in types:
                self.assertIn(t, documented[path][0], path)
        self.assertIn("sweep.parameters.*", seen)

    def test_table_and_no_interleave(self):
        # 3 runs a point: with 2 the best cannot be told from the runner-up (a 67 % interval),
        # and the sweep names no winner (issue 35)
        rc, out, err = self.sweep("-r", "3", "--no-interleave", "-P", "t", "1", "3", "--",
                                  "sleep", "0.0{t}")
        self.assertEqual(rc, 0, err)
        for name in ("t=1", "t=2", "t=3"):
            self.assertIn(name, out)
        self.assertIn("winner", out)
        with open(self.sweeps()[0]) as f:
            doc = json.load(f)
        self.assertFalse(doc["interleave"])
        self.assertEqual(doc["winner"]["name"], "t=1")
        # one point after another: every run of t=1 before any of t=2
        runs = []
        for p in doc["points"]:
            for run in self.result(p)["runs"]:
                runs.append((run["start"], p["index"]))
        self.assertEqual([i for _, i in sorted(runs)], [0, 0, 0, 1, 1, 1, 2, 2, 2])

    def test_no_winner_between_equals(self):
        """Issue 35: two identical commands got a winner. The best is compared with the
        runner-up as `compare` would; when it is not significantly better, no point wins and
        the sweep says by how much they could differ."""
        # 0.3 s sleeps: a wake-up's few ms of noise, even on a loaded machine, stay under the
        # 2 % minimum effect, so chance alone does not separate them
        rc, out, err = self.sweep("-r", "3", "-c", "sleep 0.3", "-n", "a", "-c", "sleep 0.3",
                                  "-n", "b")
        self.assertEqual(rc, 0, err)
        with open(self.sweeps()[0]) as f:
            doc = json.load(f)
        self.assertIsNone(doc["winner"])
        self.assertIn("no point is significantly better", doc["winner_undecided"])
        self.assertIn("no winner: no point is significantly better", out)
        self.assertNotIn("\u2605", out)

    def test_commands(self):
        doc = self.sweep_json("-r", "3", "-c", "sleep 0.05", "-c", "sleep 0.15", "-n", "short",
                              "-n", "long")
        self.assertEqual(doc["mode"], "commands")
        self.assertIsNone(doc["command"])
        self.assertEqual([p["name"] for p in doc["points"]], ["short", "long"])
        self.assertEqual(doc["points"][1]["command"], ["sleep", "0.15"])
        self.assertEqual(doc["winner"]["name"], "short")
        # compare of the sweep: every point against the first, by default and --reference
        p = subprocess.run([MLBENCH, "compare", "--store", self.store, "--json", "latest-sweep"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        cmp = json.loads(p.stdout)
        self.assertEqual(len(cmp["candidates"]), 1)
        total = [s for s in cmp["candidates"][0]["stages"] if s["name"] == "total"][0]
        self.assertGreater(total["candidate_median_ns"], total["baseline_median_ns"])
        p = subprocess.run([MLBENCH, "compare", "--store", self.store, "--reference", "long",
                            "sweep:" + doc["id"][:12]], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("baseline:  long", p.stdout)
        p = subprocess.run([MLBENCH, "compare", "--store", self.store, "--reference", "nope",
                            "latest-sweep"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("'short', 'long'", p.stderr)

    def test_constraints_and_objectives(self):
        prog = ("import sys, time, os, socket\n"
                "q = float(sys.argv[1])\n"
                "time.sleep(0.02)\n"
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                "p = os.environ['MLBENCH_MARKER_SOCKET']\n"
                "s.sendto(('C %d %d %d accuracy %g' % (time.monotonic_ns(), os.getpid(),"
                " os.getpid(), q)).encode(), p)\n")
        script = os.path.join(self.tmp.name, "acc.py")
        with open(script, "w") as f:
            f.write(prog)
        doc = self.sweep_json("-r", "2", "--objective", "max:counter:accuracy",
                              "--constraint", "counter:accuracy<=0.8", "-L", "q", "0.5,0.7,0.9",
                              "--", "python3", script, "{q}")
        byname = {p["name"]: p for p in doc["points"]}
        self.assertTrue(byname["q=0.7"]["constraints_met"])
        self.assertFalse(byname["q=0.9"]["constraints_met"])
        self.assertIn("0.9", byname["q=0.9"]["constraint_failures"][0])
        self.assertEqual(doc["winner"]["name"], "q=0.7")
        self.assertAlmostEqual(byname["q=0.5"]["objective_value"], 0.5)
        # An objective naming a counter no point sends: said after the first point, exit 2.
        rc, out, err = self.sweep("-r", "2", "--objective", "max:counter:tokens", "-L", "q",
                                  "0.5,0.7", "--", "python3", script, "{q}")
        self.assertEqual(rc, 2)
        self.assertIn("tokens", err)
        self.assertIn("accuracy", err)  # what it does send
        self.assertLess(err.count("run 1/2"), 2, err)  # stopped after the first point's run

    def test_bad_input(self):
        open(os.path.join(self.tmp.name, "p.yaml"), "w").close()
        cases = [
            (["-L", "b", "1,2", "--", "echo", "{c}"], "{c}"),
            (["-L", "b", "1,2", "--", "echo", "x"], "'b' is not used"),
            (["-L", "b", "", "--", "echo", "{b}"], "no values"),
            (["-L", "b", "1,,2", "--", "echo", "{b}"], "empty value"),
            (["-L", "b", "1,2", "-L", "b", "3", "--", "echo", "{b}"], "twice"),
            (["-P", "b", "9", "1", "--", "echo", "{b}"], "MIN is above MAX"),
            (["-P", "b", "1", "100000", "--", "echo", "{b}"], "more than 1000"),
            (["-L", "a", ",".join(map(str, range(40))), "-L", "b", ",".join(map(str, range(40))),
              "--", "echo", "{a}{b}"], "more than 1000 points"),
            (["--find-max", "batch=100..10", "--", "echo", "{batch}"], "above HI"),
            (["--find-max", "batch=1..10", "--", "echo", "x"], "no {batch}"),
            (["--find-max", "batch=1..10", "--memory-budget", "lots", "--", "echo", "{batch}"],
             "'lots'"),
            (["--objective", "fastest", "-L", "b", "1", "--", "echo", "{b}"], "'fastest'"),
            (["--constraint", "memory<=x", "-L", "b", "1", "--", "echo", "{b}"], "'x'"),
            (["-c", "echo a", "-L", "b", "1", "--", "echo", "{b}"], "not several"),
            (["-c", "echo a", "-n", "x", "-n", "y"], "2 -n names for 1"),
            (["-c", "echo a", "-c", "echo b", "-n", "x", "-n", "x"], "named 'x'"),
            (["-r", "0", "-L", "b", "1", "--", "echo", "{b}"], "--runs '0'"),
            (["--bogus", "-L", "b", "1", "--", "echo", "{b}"], "--bogus"),
            ([], "nothing to sweep"),
            (["-L", "b"], "needs NAME and VALUES"),
            (["-c", "echo a | cat"], "--shell"),
            (["-L", "a", "1", "--", os.path.join(self.tmp.name, "p.yaml")], "workflow files"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.sweep(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertNotIn("Traceback", err)
        # nothing ran: no result, no sweep document
        self.assertEqual(glob.glob(os.path.join(self.store, "runs", "*.json")), [])
        self.assertEqual(self.sweeps(), [])

    def test_literal_braces_and_shell(self):
        doc = self.sweep_json("-r", "1", "-L", "n", "1,2", "--", "sh", "-c",
                              "test '{{n}}' = '{''n}' && echo '{\"k\": {n}}' | grep -q '{\"k\"'")
        self.assertEqual([p["status"] for p in doc["points"]], ["ok", "ok"])
        self.assertEqual(doc["points"][0]["command"][2],
                         "test '{n}' = '{''n}' && echo '{\"k\": 1}' | grep -q '{\"k\"'")
        doc = self.sweep_json("-r", "1", "--shell", "-c", "echo a | cat", "-c", "true")
        self.assertEqual([p["status"] for p in doc["points"]], ["ok", "ok"])

    def test_failed_point(self):
        rc, out, err = self.sweep("-r", "2", "-L", "code", "0,3", "--", "sh", "-c", "exit {code}")
        self.assertEqual(rc, 1)
        with open(self.sweeps()[0]) as f:
            doc = json.load(f)
        byname = {p["name"]: p for p in doc["points"]}
        self.assertEqual(byname["code=0"]["status"], "ok")
        self.assertEqual(byname["code=3"]["status"], "failed")
        self.assertIn("exit status 3", byname["code=3"]["status_detail"])
        self.assertEqual(doc["winner"]["name"], "code=0")
        self.assertIn("failed", out)

    def test_interrupted(self):
        proc = subprocess.Popen([MLBENCH, "sweep", "--store", self.store, "-r", "50", "-L", "t",
                                 "0.1,0.11", "--", "sleep", "{t}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, err)
        [path] = self.sweeps()
        with open(path) as f:
            doc = json.load(f)
        self.assertEqual(doc["status"], "interrupted")
        for p in doc["points"]:
            self.assertIsNotNone(p["result_id"], p)
            r = self.result(p)
            self.assertEqual(r["sweep"]["id"], doc["id"])
            self.assertGreaterEqual(r["summary"]["runs_measured"], 1)

    def test_find_max_exactly(self):
        """memgrow touches N MiB and fails like Python's MemoryError above 300: found exactly,
        in doubling then bisection steps, each failure recognised as out of memory."""
        doc = self.sweep_json("--find-max", "mib=1..4096", "--", MEMGROW, "{mib}", "--limit",
                              "300")
        self.assertEqual(doc["mode"], "find-max")
        fm = doc["find_max"]
        self.assertEqual(fm["largest_fit"], 300)
        self.assertEqual(fm["first_failure"], 301)
        self.assertEqual(doc["winner"]["name"], "mib=300")
        values = [p["value"] for p in fm["probes"]]
        self.assertEqual(values[:10], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
        self.assertLessEqual(len(values), 25)
        for probe in fm["probes"]:
            point = doc["points"][probe["point"]]
            self.assertEqual(point["parameters"]["mib"], str(probe["value"]))
            self.assertEqual(probe["fits"], probe["value"] <= 300, probe)
            self.assertEqual(point["status"], "ok" if probe["fits"] else "out_of_memory")
            self.assertEqual(point["runs_measured"], 1)  # a probe is one run unless told
            if not probe["fits"]:
                self.assertIn("MemoryError", probe["reason"])
        # the resident memory grows with the value: the fitted line says about 1 MiB per MiB
        self.assertGreater(fm["memory_fit"]["r2"], 0.9)
        self.assertAlmostEqual(fm["memory_fit"]["slope_bytes"] / 2**20, 1.0, delta=0.25)

    def test_find_max_budget_and_pow2(self):
        doc = self.sweep_json("--find-max", "mib=1..256", "--pow2", "--memory-budget", "40MiB",
                              "--", MEMGROW, "{mib}")
        fm = doc["find_max"]
        self.assertEqual(fm["largest_fit"], 32)
        self.assertEqual(fm["first_failure"], 64)
        self.assertEqual(fm["memory_budget_bytes"], 40 * 2**20)
        over = [p for p in doc["points"] if p["status"] == "over_budget"]
        self.assertEqual([p["name"] for p in over], ["mib=64"])
        self.assertIn("over --memory-budget", over[0]["status_detail"])
        for p in fm["probes"]:
            self.assertEqual(p["value"] & (p["value"] - 1), 0)
        # where the line meets the budget: about 40 (the process itself takes a little)
        self.assertTrue(30 <= fm["memory_fit"]["predicted_max"] <= 41, fm["memory_fit"])

    def test_find_max_workload(self):
        """mlbench-workload imgclf --max-memory: the largest batch whose buffers fit, exactly."""
        doc = self.sweep_json(
            "--find-max", "batch=32..4096", "--probe-args",
            "--dataset synthetic --image-size 16 --train-images 64 --val-images 64 --epochs 1 "
            "--quiet --max-memory 8MiB", "--", WORKLOAD, "imgclf", "--batch", "{batch}")
        fm = doc["find_max"]
        largest = fm["largest_fit"]
        self.assertIsNotNone(largest)
        self.assertGreater(largest, 256)
        self.assertEqual(fm["first_failure"], largest + 1)
        for probe in fm["probes"]:
            if not probe["fits"]:
                self.assertIn("mlbench-workload", probe["reason"])
            else:
                self.assertEqual(probe["throughput"]["name"], "images")
                self.assertGreater(probe["throughput"]["rate_per_s"], 0)
        # the probe's command carries the extra words
        self.assertIn("--max-memory", doc["points"][0]["command"])
        p = subprocess.run([WORKLOAD, "imgclf", "--batch", str(largest + 1), "--dataset",
                            "synthetic", "--image-size", "16", "--train-images", "64",
                            "--val-images", "64", "--epochs", "1", "--quiet", "--max-memory",
                            "8MiB"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 3)

    def test_imgclf_batches(self):
        """A sweep of imgclf batch sizes 32..256 on 2 cores: every point trains, the table shows
        the throughput of each (images per second in train) and the bottleneck stage."""
        rc, out, err = self.sweep(
            "-r", "2", "-P", "batch", "32", "256", "--pow2", "--", WORKLOAD, "imgclf",
            "--dataset", "synthetic", "--image-size", "16", "--train-images", "512",
            "--val-images", "256", "--epochs", "1", "--quiet", "--batch", "{batch}")
        self.assertEqual(rc, 0, err)
        for b in (32, 64, 128, 256):
            self.assertIn("batch=%d" % b, out)
        self.assertIn("images/s", out)
        self.assertIn("bottleneck", out)
        with open(self.sweeps()[0]) as f:
            doc = json.load(f)
        self.assertEqual(doc["parameters"][0]["values"], ["32", "64", "128", "256"])
        for p in doc["points"]:
            self.assertEqual(p["status"], "ok")
            rates = {c["name"]: c for c in p["figures"]["counters"]}
            self.assertGreater(rates["images"]["rate_per_s"], 0)
            self.assertIsNotNone(p["figures"]["bottleneck"])
            r = self.result(p)
            meta = {m["key"]: m["value"] for m in r["summary"]["metadata"]}
            self.assertEqual(meta.get("batch_size"), p["parameters"]["batch"])

    def test_oom_pattern(self):
        doc = self.sweep_json("-r", "1", "--oom-pattern", "ran dry", "-L", "n", "1,2", "--",
                              "sh", "-c", "[ {n} = 1 ] || { echo 'heap ran dry' >&2; exit 1; }")
        byname = {p["name"]: p for p in doc["points"]}
        self.assertEqual(byname["n=1"]["status"], "ok")
        self.assertEqual(byname["n=2"]["status"], "out_of_memory")
        self.assertIn("ran dry", byname["n=2"]["status_detail"])

    def test_interleaving_spreads_a_burner(self):
        """A burner process runs during a third of the sweep of two identical commands: with
        interleaving both points see it alike, so compare calls neither faster."""
        burner = os.path.join(self.tmp.name, "burn.py")
        with open(burner, "w") as f:
            f.write("import time, sys\nend = time.time() + float(sys.argv[1])\n"
                    "while time.time() < end:\n    sum(range(1000))\n")
        work = "python3 -c 'sum(range(3000000))'"
        proc = subprocess.Popen([MLBENCH, "sweep", "--store", self.store, "-r", "12", "--json",
                                 "-c", work, "-c", work, "-n", "a", "-n", "b"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        burners = [subprocess.Popen(["python3", burner, "3"]) for _ in range(2)]
        out, err = proc.communicate(timeout=300)
        for b in burners:
            b.wait()
        self.assertEqual(proc.returncode, 0, err)
        p = subprocess.run([MLBENCH, "compare", "--store", self.store, "--json", "--alpha",
                            "0.01", "latest-sweep"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        total = [s for s in json.loads(p.stdout)["candidates"][0]["stages"]
                 if s["name"] == "total"][0]
        verdict = total.get("statistical_verdict", total["verdict"])
        self.assertNotIn(verdict, ("faster", "slower"), total)


if __name__ == "__main__":
    unittest.main()

"""Load results in mlbench's views: compare, show, history and report on results that
`mlbench load` made against two small HTTP servers started here, one answering after 2 ms, the
other after 20 ms, so that the candidate is certainly slower.

Environment (set by ctest): MLBENCH (the binary). The module's load runs are made once (about
12 s in all) and shared by its cases."""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")


def server(delay_s):
    """A keep-alive HTTP/1.1 server answering every GET after delay_s, in one write."""
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            time.sleep(delay_s)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def mlbench(*args, check=True, timeout=60):
    p = subprocess.run([MLBENCH, *args], capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"mlbench {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


class LoadViews(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="mlbench-load-views-")
        cls.store = os.path.join(cls.dir, "store")
        cls.fast, cls.slow = server(0.002), server(0.020)
        cls.files = {}
        for name, srv, extra in (("fast", cls.fast, []), ("slow", cls.slow, []),
                                 ("server", cls.fast, ["--scenario", "server", "--qps", "40",
                                                       "-H", "Authorization: Bearer s3cret",
                                                       "--header=X-Trace: 7"])):
            path = os.path.join(cls.dir, name + ".json")
            # exit 1 (INVALID, e.g. a busy machine's late generator) still writes the result
            p = mlbench("load", "-q", "--store", cls.store, "--label", name, "--min-duration",
                        "3", "--min-queries", "10", "-o", path, *extra,
                        f"http://127.0.0.1:{srv.server_address[1]}/", check=False)
            assert p.returncode in (0, 1), p.stderr
            cls.files[name] = path

    @classmethod
    def tearDownClass(cls):
        cls.fast.shutdown()
        cls.slow.shutdown()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def load(self, name):
        with open(self.files[name]) as f:
            return json.load(f)

    def test_compare_json(self):
        doc = json.loads(mlbench("compare", "--json", self.files["fast"], self.files["slow"]).stdout)
        load = doc["candidates"][0]["load"]
        self.assertEqual(load["unmatched"], [])
        (m,) = load["scenarios"]
        self.assertEqual(m["scenario"], "single-stream")
        self.assertEqual(m["resampling"], "seconds")
        self.assertGreaterEqual(m["block_seconds"], 1)
        rows = {r["name"]: r for r in m["metrics"]}
        self.assertEqual(list(rows), ["p50", "p90", "p99", "throughput_qps"])
        self.assertTrue(rows["p90"]["metric"])  # single-stream's metric is p90
        fast, slow = self.load("fast")["load"]["scenarios"][0], self.load("slow")["load"]["scenarios"][0]
        for q in ("p50", "p90", "p99"):
            r = rows[q]
            self.assertAlmostEqual(r["baseline"], fast["latency_s"][q], places=12)
            self.assertAlmostEqual(r["candidate"], slow["latency_s"][q], places=12)
            if fast["valid"] and slow["valid"]:
                self.assertEqual(r["verdict"], "slower", r)
            else:
                self.assertEqual(r["verdict"], "unreliable", r)
                self.assertIn("INVALID", r["unreliable_reason"])
            self.assertLessEqual(r["ratio_ci_low"], r["candidate"] / r["baseline"])
            self.assertGreaterEqual(r["ratio_ci_high"], r["candidate"] / r["baseline"])
        # 2 ms against 20 ms: the p50 is several times larger
        self.assertGreater(rows["p50"]["ratio_ci_low"], 3)
        q = rows["throughput_qps"]
        self.assertAlmostEqual(q["baseline"], fast["throughput_qps"], places=6)
        self.assertLess(q["ratio_ci_high"], 0.5)
        self.assertIn(q["verdict"], ("slower", "unreliable"))

    def test_compare_text(self):
        out = mlbench("compare", self.files["fast"], self.files["slow"]).stdout
        self.assertIn("load (the scenario runs that count", out)
        self.assertIn("block bootstrap over the runs' seconds", out)
        line = next(l for l in out.splitlines() if l.strip().startswith("single-stream"))
        self.assertIn("p50", line)
        self.assertTrue("slower" in line or "unreliable" in line, line)

    def test_compare_unmatched_scenarios(self):
        doc = json.loads(mlbench("compare", "--json", self.files["fast"], self.files["server"]).stdout)
        load = doc["candidates"][0]["load"]
        self.assertEqual(load["scenarios"], [])
        self.assertEqual(sorted((u["side"], u["scenario"]) for u in load["unmatched"]),
                         [("baseline", "single-stream"), ("candidate", "server")])
        out = mlbench("compare", self.files["fast"], self.files["server"]).stdout
        self.assertIn("server run at 40 QPS: only in the candidate", out)

    def test_show(self):
        out = mlbench("show", self.files["slow"]).stdout
        doc = self.load("slow")
        run = doc["load"]["scenarios"][0]
        self.assertIn(f"result {doc['id']}", out)
        self.assertIn("single-stream, 1 connection(s)", out)
        line = next(l for l in out.splitlines() if l.strip().startswith("run ") and "VALID" in l)
        self.assertIn(f"{run['throughput_qps']:.1f}", line)
        # the generator's own stage table is not shown for a load result
        self.assertNotIn("stage                      median", out)
        by_label = mlbench("show", "--store", self.store, "slow").stdout
        self.assertIn(f"result {doc['id']}", by_label)

    def test_history(self):
        out = mlbench("history", "--store", self.store).stdout
        self.assertIn("load: scenario, metric percentile, throughput", out)
        for name in ("fast", "slow", "server"):
            doc = self.load(name)
            run = doc["load"]["scenarios"][0]
            row = next(l for l in out.splitlines() if l.startswith(doc["id"]))
            metric = "p%g" % run["percentile"]
            self.assertIn(f"{run['scenario']}", row)
            self.assertIn(metric, row)
            self.assertIn("%.4g QPS" % run["throughput_qps"], row)
        hist = json.loads(mlbench("history", "--store", self.store, "--json").stdout)
        by_id = {r["id"]: r for r in hist["results"]}
        fast = self.load("fast")
        (entry,) = by_id[fast["id"]]["load"]
        self.assertEqual(entry["key"], "single-stream")
        self.assertEqual(entry["metric"], "p90")
        self.assertAlmostEqual(entry["metric_s"], fast["load"]["scenarios"][0]["latency_s"]["p90"])
        self.assertEqual(by_id[self.load("server")["id"]]["load"][0]["key"], "server 40 QPS")

    def test_csv_tables(self):
        import csv, io
        doc = self.load("server")
        rows = list(csv.DictReader(io.StringIO(
            mlbench("report", self.files["server"], "--format", "csv", "--table", "load").stdout)))
        self.assertEqual(len(rows), len(doc["load"]["scenarios"]))
        run = doc["load"]["scenarios"][0]
        self.assertEqual(rows[0]["scenario"], "server")
        self.assertEqual(int(rows[0]["completed"]), run["completed"])
        self.assertAlmostEqual(float(rows[0]["p99_s"]), run["latency_s"]["p99"], places=9)
        self.assertEqual(rows[0]["valid"], "true" if run["valid"] else "false")
        secs = list(csv.DictReader(io.StringIO(mlbench(
            "report", self.files["server"], "--format", "csv", "--table", "load-seconds").stdout)))
        self.assertEqual(sum(int(r["completed"]) for r in secs),
                         sum(s["completed"] for s in run["seconds"]))
        # a result that is not a load result: a clear message, exit 2
        plain = os.path.join(self.dir, "plain.json")
        mlbench("run", "-q", "--store", self.store, "--runs", "1", "--warmup", "0", "-o", plain,
                "--", "true")
        p = mlbench("report", plain, "--format", "csv", "--table", "load", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("needs a load result", p.stderr)

    def test_report_single(self):
        """A report on a load result leads with the load's answer and reproduces mlbench load;
        the generator's own wall-time table and its stage analysis (no server process) are
        left out; a credential in a header is not written into the result."""
        doc = self.load("server")
        run = doc["load"]["scenarios"][0]
        self.assertIn("-H", doc["load"]["command"])
        self.assertIn("Authorization: REDACTED", doc["load"]["command"])
        self.assertIn("--header=X-Trace: 7", doc["load"]["command"])
        self.assertNotIn("s3cret", json.dumps(doc))
        md = mlbench("report", self.files["server"]).stdout
        summary = md.split("## Summary", 1)[1].split("## Load", 1)[0]
        verdict = "VALID" if doc["load"]["valid"] else "INVALID"
        self.assertIn(f"Verdict: {verdict}; bound: {doc['load']['bound']['kind']}", summary)
        self.assertIn("Server run at 40 QPS: p99 ", summary)
        self.assertIn(f"{run['throughput_qps']:.1f} QPS, {run['completed']} completed", summary)
        self.assertNotIn("bottleneck", summary)
        self.assertNotIn("## Results", md)
        self.assertNotIn("## Analysis", md)  # no server process was measured
        reproduce = md.split("## Reproduce", 1)[1]
        self.assertIn("mlbench load", reproduce)
        self.assertIn("'Authorization: REDACTED'", reproduce)
        self.assertNotIn("mlbench run", reproduce)
        html = mlbench("report", self.files["server"], "--format", "html").stdout
        for label in ("latency per second", "queries per second"):
            self.assertIn(f'aria-label="{label}"', html)
        self.assertIn("<polyline", html)
        self.assertNotIn("s3cret", html)

    def test_report_comparison(self):
        """The verdict of a comparison of load results is per scenario run, on its metric
        percentile and throughput, not the generator's wall time ("too few runs")."""
        md = mlbench("report", self.files["fast"], self.files["slow"]).stdout
        doc = json.loads(mlbench("compare", "--json", self.files["fast"], self.files["slow"]).stdout)
        rows = {r["name"]: r for r in doc["candidates"][0]["load"]["scenarios"][0]["metrics"]}
        answer = md.split("Verdict:", 1)[1].split("## Comparison", 1)[0]
        self.assertIn("slow against fast, single-stream: p90 " + rows["p90"]["verdict"], answer)
        self.assertIn("throughput " + rows["throughput_qps"]["verdict"], answer)
        self.assertIn("%+.1f %%" % rows["p90"]["change_pct"], answer)
        self.assertNotIn("too few runs", md)
        if rows["p90"]["unreliable_reason"]:  # said once, below the table
            self.assertIn("Why the single-stream run is unreliable", md)

    def test_history_trend(self):
        # a series of two load results: relabel a copy of the fast result's file into the store
        store = os.path.join(self.dir, "trend-store")
        for name in ("fast", "slow"):
            doc = self.load(name)
            doc["label"] = "svc"
            path = os.path.join(self.dir, f"trend-{name}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            mlbench("show", "--store", store, path)  # a file: read, not indexed
        os.makedirs(os.path.join(store, "runs"), exist_ok=True)
        for name in ("fast", "slow"):
            shutil.copy(os.path.join(self.dir, f"trend-{name}.json"),
                        os.path.join(store, "runs", self.load(name)["id"] + ".json"))
        out = mlbench("history", "--store", store).stdout
        self.assertIn("svc: 2 results", out)
        lat = next(l for l in out.splitlines() if l.strip().startswith("single-stream p90"))
        qps = next(l for l in out.splitlines() if l.strip().startswith("single-stream QPS"))
        self.assertIn(" .. ", lat)
        self.assertIn("QPS .. ", qps)


if __name__ == "__main__":
    unittest.main()

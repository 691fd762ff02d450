"""End-to-end tests of `mlbench monitor`: start the built binary on a free loopback port with a
test workload, scrape /metrics and /healthz, check the families, let promtool check the format
and a real Prometheus server scrape it (each skipped with the reason when not installed), and
check the service behaviour: bad input exits 2, SIGTERM stops cleanly and removes the pid file,
SIGHUP reopens the log, the monitor ends with its command's exit status.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree). Every wait is bounded; every process started here is
killed in tearDown."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"

# A workload that marks stages forever, like a training loop, and also sends two datagrams
# that are not marker events.
LOOP = r'''
import os, socket, time
from mlbench_marker import counter, instant, meta, stage
meta("model", 'tiny "net" \\ v1')
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(os.environ["MLBENCH_MARKER_SOCKET"])
s.send(b"X 1 2 3 bogus")
s.send(b"B notanumber 1 1 load")
parent = os.getppid()
i = 0
while os.getppid() == parent:  # ends if the monitor dies without stopping it
    with stage("load"):
        time.sleep(0.01)
    with stage("train"):
        with stage("step"):
            time.sleep(0.02)
        counter("images", 32)
        counter("loss", 1.0 / (i + 1))
    instant("tick")
    i += 1
'''


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_processes(procs):
    """Stops every process of procs, SIGTERM first: a monitor stops its command then (SIGKILL
    would orphan it); SIGKILL after 15 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)
        for f in (p.stdout, p.stderr):
            if f:
                f.close()


def parse_metrics(text):
    """{series: value} of an exposition, series written as in the text (name{labels})."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        out[series] = float(value)
    return out


class MonitorTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-monitor-")
        self.procs = []

    def tearDown(self):
        stop_processes(self.procs)
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def env(self):
        e = dict(os.environ)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        return e

    def start(self, *args, port=None, interval="100ms", env=None):
        """Starts mlbench monitor on a free port; returns (process, base URL)."""
        port = port or free_port()
        cmd = [MLBENCH, "monitor", "--listen", f"127.0.0.1:{port}", "--interval", interval, *args]
        e = self.env()
        e.update(env or {})
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        self.procs.append(p)
        return p, f"http://127.0.0.1:{port}"

    def get(self, url, timeout=5):
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers, r.read().decode()

    def wait_up(self, p, base, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.fail(f"monitor exited with {p.returncode}: {p.stderr.read()}")
            try:
                if self.get(base + "/healthz", timeout=2)[2] == "ok\n":
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.05)
        self.fail(f"monitor did not answer /healthz within {timeout} s")

    def scrape_until(self, base, predicate, timeout=20):
        """Scrapes /metrics until predicate(series dict) holds; returns (text, series)."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            _, _, text = self.get(base + "/metrics")
            series = parse_metrics(text)
            if predicate(series):
                return text, series
            time.sleep(0.1)
        self.fail(f"condition not met within {timeout} s; last scrape:\n{text}")

    def stop(self, p, sig=signal.SIGTERM, timeout=20):
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"monitor did not stop within {timeout} s of {sig.name}")
        return p.returncode, out, err

    def loop_workload(self):
        path = self.path("loop.py")
        with open(path, "w") as f:
            f.write(LOOP)
        return [sys.executable, path]

    # --- what is served ------------------------------------------------------------------

    def test_metrics_of_a_workload(self):
        p, base = self.start("--", *self.loop_workload())
        self.wait_up(p, base)
        text, m = self.scrape_until(base, lambda m: m.get(
            'mlbench_stage_duration_seconds_count{stage="train"}', 0) >= 3 and
            m.get("mlbench_markers_malformed_total", 0) >= 2)
        status, headers, _ = self.get(base + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn("text/plain; version=0.0.4", headers["Content-Type"])
        self.assertRegex(text, r'mlbench_build_info\{version="[^"]+",commit="[^"]+"\} 1\n')
        self.assertEqual(m["mlbench_up"], 1)
        self.assertGreater(m["mlbench_samples_total"], 0)
        self.assertIn("mlbench_sampler_errors_total", m)
        # resources: the workload's tree and the machine
        self.assertIn("# TYPE mlbench_process_cpu_seconds_total counter", text)
        self.assertIn("mlbench_process_cpu_seconds_total", m)
        self.assertGreater(m["mlbench_process_resident_bytes"], 1e6)
        self.assertGreaterEqual(m["mlbench_process_tree_processes"], 1)
        self.assertIn("# TYPE mlbench_system_cpu_busy_ratio gauge", text)
        # stages: histogram and open spans
        self.assertIn("# TYPE mlbench_stage_duration_seconds histogram", text)
        for stage in ("load", "train", "step"):
            self.assertEqual(m[f'mlbench_stage_duration_seconds_bucket{{stage="{stage}",le="+Inf"}}'],
                             m[f'mlbench_stage_duration_seconds_count{{stage="{stage}"}}'])
            self.assertIn(f'mlbench_stage_active{{stage="{stage}"}}', m)
        count = m['mlbench_stage_duration_seconds_count{stage="step"}']
        mean = m['mlbench_stage_duration_seconds_sum{stage="step"}'] / count
        self.assertGreater(mean, 0.018)
        self.assertLess(mean, 0.2)
        self.assertEqual(m['mlbench_stage_duration_seconds_bucket{stage="step",le="0.01"}'], 0)
        # counters, instants, metadata, marker accounting
        self.assertEqual(m['mlbench_marker_value{name="images"}'], 32)
        self.assertEqual(m['mlbench_marker_sum_total{name="images"}'],
                         32 * m['mlbench_marker_samples_total{name="images"}'])
        self.assertNotIn('mlbench_marker_sum_total{name="loss"}', m)
        self.assertGreater(m['mlbench_marker_instants_total{name="tick"}'], 0)
        self.assertIn('mlbench_metadata_info{key="model",value="tiny \\"net\\" \\\\ v1"}', m)
        self.assertGreater(m["mlbench_markers_received_total"], 10)
        self.assertEqual(m["mlbench_markers_malformed_total"], 2)
        self.assertEqual(m["mlbench_markers_unbalanced_total"], 0)
        self.assertEqual(m['mlbench_markers_dropped_total{reason="stage_limit"}'], 0)
        # one HELP and one TYPE per family
        types = re.findall(r"^# TYPE (\S+) ", text, re.M)
        self.assertEqual(len(types), len(set(types)))
        self.assertEqual(len(re.findall(r"^# HELP ", text, re.M)), len(types))
        # the other endpoints
        status, headers, body = self.get(base + "/healthz")
        self.assertEqual((status, body), (200, "ok\n"))
        with self.assertRaises(urllib.error.HTTPError) as cm:
            self.get(base + "/nope")
        self.assertEqual(cm.exception.code, 404)
        rc, _, err = self.stop(p)
        self.assertEqual(rc, 0, err)

    def test_promtool_accepts_the_exposition(self):
        if not os.access(PROMTOOL, os.X_OK):
            self.skipTest("promtool not installed (Debian package prometheus): format not checked by it")
        p, base = self.start("--", *self.loop_workload())
        self.wait_up(p, base)
        text, _ = self.scrape_until(base, lambda m: m.get(
            'mlbench_stage_duration_seconds_count{stage="step"}', 0) >= 1)
        check = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr + "\n" + text)

    def test_prometheus_scrapes_it(self):
        if not os.access(PROMETHEUS, os.X_OK):
            self.skipTest(f"{PROMETHEUS} not installed (Debian package prometheus): no real scrape")
        p, base = self.start("--", *self.loop_workload())
        self.wait_up(p, base)
        prom_port = free_port()
        config = self.path("prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mlbench
    static_configs:
      - targets: ['{base[len("http://"):]}']
""")
        prom = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.path('data')}",
             f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(prom)
        api = f"http://127.0.0.1:{prom_port}/api/v1/query?query="
        deadline = time.monotonic() + 60
        found = {}
        while time.monotonic() < deadline and len(found) < 2:
            if prom.poll() is not None:
                self.fail(f"prometheus exited with {prom.returncode}: {prom.stderr.read()}")
            for q in ("mlbench_build_info", 'mlbench_stage_duration_seconds_count{stage="step"}'):
                try:
                    _, _, body = self.get(api + urllib.parse.quote(q), timeout=5)
                except (urllib.error.URLError, ConnectionError, OSError):
                    continue
                result = json.loads(body)["data"]["result"]
                if result:
                    found[q] = result[0]
            time.sleep(0.5)
        self.assertIn("mlbench_build_info", found, "Prometheus never stored mlbench_build_info")
        info = found["mlbench_build_info"]
        self.assertEqual(info["value"][1], "1")
        self.assertEqual(info["metric"]["job"], "mlbench")
        self.assertIn("version", info["metric"])
        step = found['mlbench_stage_duration_seconds_count{stage="step"}']
        self.assertGreater(float(step["value"][1]), 0)

    def test_gpu_series(self):
        """GPU series through the fake NVML library: one series per GPU under one family, the
        workload's GPU memory, what could not be read left out, and promtool's verdict."""
        if not os.environ.get("FAKE_NVML"):
            self.skipTest("FAKE_NVML not set (run through ctest): no fake GPU")
        script = self.path("nvml.script")
        with open(script, "w") as f:
            f.write("""devices 2
util 0 95/60
util 1 10/5
mem_used 0 20000000000
mem_used 1 1000000000
power 0 500000
power 1 ERR_NOT_SUPPORTED
sm_clock 0 1980
temp 0 61
throttle 0 0
procs 0 CHILD:20000000000
procs 1 -
""")
        p, base = self.start("--", STAGE_PROG, "hang",
                             env={"MLBENCH_NVML_LIBRARY": os.environ["FAKE_NVML"],
                                  "FAKE_NVML_SCRIPT": script})
        self.wait_up(p, base)
        text, m = self.scrape_until(base, lambda m: m.get(
            'mlbench_gpu_process_memory_bytes{gpu="0"}', 0) > 0)
        self.assertEqual(m['mlbench_gpu_utilization_ratio{gpu="0"}'], 0.95)
        self.assertEqual(m['mlbench_gpu_utilization_ratio{gpu="1"}'], 0.1)
        self.assertEqual(m['mlbench_gpu_process_memory_bytes{gpu="0"}'], 2e10)
        self.assertEqual(m['mlbench_gpu_process_memory_bytes{gpu="1"}'], 0)
        self.assertEqual(m['mlbench_gpu_power_watts{gpu="0"}'], 500)
        self.assertNotIn('mlbench_gpu_power_watts{gpu="1"}', m)  # not supported: absent
        self.assertEqual(m['mlbench_gpu_sm_clock_hertz{gpu="0"}'], 1.98e9)
        self.assertEqual(text.count("# TYPE mlbench_gpu_utilization_ratio gauge"), 1)
        if os.access(PROMTOOL, os.X_OK):
            check = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                                   capture_output=True, text=True, timeout=60)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        rc, _, err = self.stop(p)
        self.assertEqual(rc, 0, err)

    # --- bad input -------------------------------------------------------------------------

    def run_monitor(self, *args, timeout=30):
        return subprocess.run([MLBENCH, "monitor", *args], capture_output=True, text=True,
                              timeout=timeout, env=self.env())

    def test_bad_listen_address(self):
        for addr, fragment in (("127.0.0.1:99999", "port '99999'"), ("nonsense", "'nonsense'"),
                               ("::1:80", "brackets"), ("[::1]80", "'[::1]80'")):
            r = self.run_monitor("--listen", addr)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(fragment, r.stderr)

    def test_port_in_use(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            r = self.run_monitor("--listen", f"127.0.0.1:{port}", "--", STAGE_PROG, "seq")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"127.0.0.1:{port}", r.stderr)
        self.assertIn("in use", r.stderr)

    def test_bad_interval_and_files(self):
        for args, fragment in ((["--interval", "0"], "--interval '0'"),
                               (["--interval", "5ms"], "--interval '5ms'"),
                               (["--interval", "11s"], "--interval '11s'"),
                               (["--pidfile", "/nonexistent-dir/m.pid"], "/nonexistent-dir/m.pid"),
                               (["--log", "/nonexistent-dir/m.log"], "/nonexistent-dir/m.log"),
                               (["--bogus"], "--bogus")):
            r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", *args)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stderr}")
            self.assertIn(fragment, r.stderr)

    def test_pidfile_of_a_running_process(self):
        pidfile = self.path("m.pid")
        with open(pidfile, "w") as f:
            f.write(f"{os.getppid()}\n")  # a process that is certainly running
        r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--pidfile", pidfile)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"names process {os.getppid()}", r.stderr)
        with open(pidfile) as f:
            self.assertEqual(f.read(), f"{os.getppid()}\n")  # left alone

    def test_pidfile_that_is_not_ours(self):
        """issue 12: --pidfile deleted an existing file that held no pid, and a device node
        (--pidfile /dev/null removed /dev/null): anything but a pid file is refused, intact."""
        text = self.path("important.txt")
        with open(text, "w") as f:
            f.write("my notes\n")
        empty = self.path("empty.pid")
        open(empty, "w").close()
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        link = self.path("link.pid")
        os.symlink(text, link)
        for path, fragment in [(text, "holds no process id"), (empty, "holds no process id"),
                               (fifo, "not a regular file (a FIFO or socket)"),
                               (link, "not a regular file (a symbolic link)"),
                               (self.tmp.name, "not a regular file (a directory)")]:
            with self.subTest(path=path):
                r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--pidfile", path)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(fragment, r.stderr)
                self.assertTrue(os.path.lexists(path))
        with open(text) as f:
            self.assertEqual(f.read(), "my notes\n")
        self.assertTrue(os.path.islink(link))
        self.assertFalse([n for n in os.listdir(self.tmp.name) if ".tmp." in n], "no temporary left")

    # --- as a service ----------------------------------------------------------------------

    def wait_file(self, path, contains="", timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    text = f.read()
                if contains in text and text.endswith("\n"):
                    return text
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        self.fail(f"{path} did not get {contains!r} within {timeout} s")

    def test_sigterm_stops_cleanly(self):
        pidfile, log = self.path("m.pid"), self.path("m.log")
        # a stale pid file (a process that has exited) is replaced
        dead = subprocess.Popen(["true"])
        dead.wait()
        with open(pidfile, "w") as f:
            f.write(f"{dead.pid}\n")
        p, base = self.start("--pidfile", pidfile, "--log", log)
        self.wait_up(p, base)
        self.assertEqual(self.wait_file(pidfile, f"{p.pid}\n"), f"{p.pid}\n")
        self.scrape_until(base, lambda m: m.get("mlbench_samples_total", 0) >= 2)
        rc, _, err = self.stop(p)
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.exists(pidfile))
        text = self.wait_file(log, "stop: SIGTERM")
        self.assertIn("start: ", text)
        self.assertNotIn("error", text)
        self.assertEqual([f for f in os.listdir(self.tmp.name) if ".tmp." in f], [])

    def test_sigterm_stops_the_command(self):
        pidfile = self.path("m.pid")
        p, base = self.start("--pidfile", pidfile, "--grace", "5s", "--", STAGE_PROG, "hang")
        self.wait_up(p, base)
        self.scrape_until(base, lambda m: m.get('mlbench_stage_active{stage="forever"}') == 1)
        children = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
        self.assertEqual(len(children), 1)
        rc, _, err = self.stop(p, signal.SIGINT)
        self.assertEqual(rc, 0, err)
        self.assertIn("stop: SIGINT", err)
        self.assertFalse(os.path.exists(pidfile))
        self.assertFalse(os.path.exists(f"/proc/{children[0]}"), "the command was left running")

    def test_sighup_reopens_the_log(self):
        log = self.path("m.log")
        p, base = self.start("--log", log, "--", *self.loop_workload())
        self.wait_up(p, base)
        self.wait_file(log, "start: ")
        os.rename(log, log + ".1")
        p.send_signal(signal.SIGHUP)
        text = self.wait_file(log, "reopened")
        self.assertNotIn("start: ", text)
        self.assertIsNone(p.poll(), "SIGHUP must not stop the monitor or its command")
        self.scrape_until(base, lambda m: m.get("mlbench_up") == 1)
        rc, _, err = self.stop(p)
        self.assertEqual(rc, 0, err)
        self.assertIn("stop: SIGTERM", self.wait_file(log, "stop: "))
        with open(log + ".1") as f:
            self.assertNotIn("stop: ", f.read())

    def test_ends_with_the_command(self):
        r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--", STAGE_PROG, "seq")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the command exited with status 0", r.stderr)
        r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--", STAGE_PROG, "fail")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("stage_prog: dataset missing", r.stderr)  # its output goes through
        r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--", STAGE_PROG, "kill")
        self.assertEqual(r.returncode, 128 + signal.SIGKILL, r.stderr)
        r = self.run_monitor("--listen", f"127.0.0.1:{free_port()}", "--", "no-such-command-xyz")
        self.assertEqual(r.returncode, 127, r.stderr)
        self.assertIn("command not found: no-such-command-xyz", r.stderr)


if __name__ == "__main__":
    unittest.main()

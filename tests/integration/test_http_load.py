"""Load test of the HTTP endpoint of `mlbench monitor`: while hundreds of local connections that
never finish their request are held (a partial request line trickled one byte a second, or
nothing at all), a normal scraper must still get /metrics and /healthz, each within 2 s, for
10 s. The slow clients run in their own process (no shared GIL with the scraper) and reconnect,
once a second, whatever the server closed, so the pressure stays on.

Two cases: fewer slow clients than the monitor's connection limit (all of them held), and more
than it (the monitor runs with 512 file descriptors, so the oldest of them must be closed to
make room).

Environment (set by ctest): MLBENCH (the binary). Every wait is bounded; every process started
here is killed in tearDown."""
import json
import os
import resource
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

from test_monitor import free_port, stop_processes

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")

SCRAPE_SECONDS = 10
SCRAPE_TIMEOUT_S = 2.0

# The slow clients: N sockets, a third of them silent, the rest sending a request line and an
# unfinished header, then one byte a second. Once a second, sockets the server closed are
# opened again. Prints "ready OPEN" after its first two seconds, then a JSON summary at the end.
SLOW_CLIENTS = r'''
import errno, json, selectors, socket, sys, time
port, n, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
addr = ("127.0.0.1", port)
PREFIX = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
sel = selectors.DefaultSelector()
slots = [None] * n          # [socket, connected]
stats = {"opened": 0, "closed_by_server": 0, "held_min": n, "held_max": 0}

def slow(i):
    return i % 3 != 0

def drop(i):
    s = slots[i][0]
    sel.unregister(s)
    s.close()
    slots[i] = None

def open_slot(i):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex(addr)
    slots[i] = [s, False]
    sel.register(s, selectors.EVENT_WRITE, i)
    stats["opened"] += 1

def send(i, data):
    try:
        slots[i][0].send(data)
    except OSError:
        stats["closed_by_server"] += 1
        drop(i)

start = time.monotonic()
next_tick = start
ready = False
while time.monotonic() - start < seconds:
    now = time.monotonic()
    if now >= next_tick:
        next_tick = now + 1.0
        for i in range(n):
            if slots[i] is None:
                open_slot(i)
            elif slots[i][1] and slow(i):
                send(i, b"a")
        held = sum(1 for s in slots if s is not None and s[1])
        if now - start >= 2.0:
            stats["held_min"] = min(stats["held_min"], held)
            stats["held_max"] = max(stats["held_max"], held)
            if not ready:
                print("ready", held, flush=True)
                ready = True
    for key, events in sel.select(timeout=max(0.0, next_tick - time.monotonic())):
        i = key.data
        if slots[i] is None:
            continue
        s = slots[i][0]
        if not slots[i][1]:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                drop(i)          # refused: opened again at the next tick
                continue
            slots[i][1] = True
            sel.modify(s, selectors.EVENT_READ, i)
            if slow(i):
                send(i, PREFIX)
            continue
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            stats["closed_by_server"] += 1
            drop(i)
print(json.dumps(stats), flush=True)
'''


def raise_nofile(want):
    """Raises this process's soft RLIMIT_NOFILE to want (not above the hard limit); returns
    the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


class HttpLoadTest(unittest.TestCase):
    def setUp(self):
        self.procs = []

    def tearDown(self):
        stop_processes(self.procs)

    def start_monitor(self, nofile=None):
        port = free_port()
        cmd = [MLBENCH, "monitor", "--listen", f"127.0.0.1:{port}", "--interval", "250ms"]

        def limit():
            if nofile:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=limit)
        self.procs.append(p)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if p.poll() is not None:
                self.fail(f"monitor exited with {p.returncode}: {p.stderr.read()}")
            try:
                if self.get(base + "/healthz")[1] == "ok\n":
                    return port, base
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        self.fail("monitor did not answer /healthz within 15 s")

    def get(self, url):
        with urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT_S) as r:
            return r.status, r.read().decode()

    def scrape_while_held(self, n, nofile=None):
        """Starts a monitor, holds n slow clients against it and scrapes for SCRAPE_SECONDS.
        Returns (the slow clients' summary, the worst scrape latency in seconds)."""
        if raise_nofile(n + 64) < n + 64:
            self.skipTest(f"RLIMIT_NOFILE hard limit below {n + 64}: cannot open {n} clients")
        port, base = self.start_monitor(nofile)
        clients = subprocess.Popen(
            [sys.executable, "-c", SLOW_CLIENTS, str(port), str(n), str(SCRAPE_SECONDS + 3)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(clients)
        line = clients.stdout.readline()
        if not line.startswith("ready"):
            self.fail(f"slow clients failed: {clients.stderr.read()}")
        held_at_start = int(line.split()[1])

        latencies, failures = [], []
        end = time.monotonic() + SCRAPE_SECONDS
        while time.monotonic() < end:
            for path in ("/metrics", "/healthz"):
                t0 = time.monotonic()
                try:
                    status, body = self.get(base + path)
                    ok = status == 200 and (path != "/metrics" or "mlbench_up 1" in body)
                    if not ok:
                        failures.append(f"{path}: status {status}")
                except (urllib.error.URLError, OSError) as e:
                    failures.append(f"{path}: {e!r} after {time.monotonic() - t0:.2f} s")
                latencies.append(time.monotonic() - t0)
            time.sleep(0.2)
        out, err = clients.communicate(timeout=30)
        summary = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"error": err}
        summary["held_at_start"] = held_at_start
        worst = max(latencies)
        print(f"\n{n} slow clients: {len(latencies)} scrapes, worst {worst * 1000:.0f} ms, "
              f"median {sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms; clients {summary}",
              file=sys.stderr)
        self.assertEqual(failures, [], f"scrapes failed with {n} slow clients {summary}")
        self.assertLess(worst, SCRAPE_TIMEOUT_S)
        self.assertGreaterEqual(len(latencies), 2 * SCRAPE_SECONDS)
        return summary, worst

    def test_slow_clients_below_the_limit(self):
        # 300: more than the 256 connections of old, fewer than the limit now (all held).
        summary, _ = self.scrape_while_held(300)
        self.assertGreaterEqual(summary["held_at_start"], 290, summary)

    def test_more_slow_clients_than_connections(self):
        # 512 descriptors give fewer connections than 600 clients: the oldest are closed.
        summary, _ = self.scrape_while_held(600, nofile=512)
        self.assertGreater(summary["closed_by_server"], 0, summary)
        self.assertGreater(summary["held_min"], 200, summary)


if __name__ == "__main__":
    unittest.main()

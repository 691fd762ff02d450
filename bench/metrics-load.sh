#!/bin/sh
# Load and endurance of `mlbench monitor` (docs/monitoring.md):
#  1. scrape load: wrk hammers /metrics on loopback for 30 s while the monitor samples every
#     100 ms and receives the stage markers of a Python training-like loop; reports requests/s,
#     latency percentiles (p99) and errors (socket errors, non-2xx answers).
#  2. memory over a time-compressed long run: sampling every 10 ms (100x the default rate) for
#     MEM_SECONDS while a workload churns through stage, counter and metadata names (3x the
#     bound on distinct names), threads (a new thread per batch) and events, and a client
#     scrapes every 50 ms. VmRSS of the monitor is read every 5 s; it must stay flat.
# Usage: bench/metrics-load.sh   (env: BUILD=build, WRK_SECONDS=30, CONNECTIONS=8,
#                                 MEM_SECONDS=120)
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
WRK_SECONDS=${WRK_SECONDS:-30}
CONNECTIONS=${CONNECTIONS:-8}
MEM_SECONDS=${MEM_SECONDS:-120}
MLBENCH=$BUILD/mlbench
[ -x "$MLBENCH" ] || { echo "metrics-load.sh: build first (make build)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "metrics-load.sh: wrk not installed (scripts/install-deps.sh --bench)" >&2; exit 2; }

tmp=$(mktemp -d)
monitor_pid=""
cleanup() {
    if [ -n "$monitor_pid" ] && kill -0 "$monitor_pid" 2>/dev/null; then
        kill -TERM "$monitor_pid" 2>/dev/null || true
        wait "$monitor_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() { # URL: up to 15 s
    python3 - "$1" <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 15
while time.monotonic() < deadline:
    try:
        if urllib.request.urlopen(sys.argv[1], timeout=1).read() == b"ok\n":
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.05)
sys.exit("metrics-load.sh: the monitor did not come up")
PY
}

# A training-like loop: 6 stages (two nested), 3 counters, metadata; ends with its parent.
cat > "$tmp/train.py" <<'PY'
import os, time
from mlbench_marker import counter, meta, stage
meta("model", "bench"); meta("batch_size", 64)
parent, i = os.getppid(), 0
while os.getppid() == parent:
    with stage("load"):
        time.sleep(0.002)
    with stage("augment"):
        time.sleep(0.001)
    with stage("train"):
        for part in ("forward", "backward", "optimizer"):
            with stage(part):
                time.sleep(0.001)
        counter("images", 64); counter("loss", 1.0 / (i + 1)); counter("lr", 0.01)
    i += 1
PY

# Churn: names beyond every bound, a new thread per batch, as many events as Python sends.
cat > "$tmp/churn.py" <<'PY'
import os, threading
from mlbench_marker import begin, counter, end, instant, meta
parent, i = os.getppid(), 0
def batch(base):
    for k in range(200):
        n = f"stage_{(base + k) % 3000}"
        begin(n); begin("inner"); end("inner"); end(n)
        counter(f"counter_{(base + k) % 3000}", k)
        instant(f"instant_{(base + k) % 3000}")
    meta(f"key_{base % 3000}", f"value {base}")
    begin("left_open")  # never ended: open spans of threads that are gone pile up
while os.getppid() == parent:
    t = threading.Thread(target=batch, args=(i,)); t.start(); t.join()
    i += 200
PY

export PYTHONPATH="$PWD/python"
machine=$(lscpu | sed -n 's/^Model name: *//p')
echo "machine: $machine, $(nproc) CPUs, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M') UTC"
echo "mlbench: $("$MLBENCH" version)"
echo

# --- 1. scrape load ----------------------------------------------------------------------
port=$(free_port)
"$MLBENCH" monitor --listen "127.0.0.1:$port" --interval 100ms --log "$tmp/monitor.log" \
    -- python3 "$tmp/train.py" &
monitor_pid=$!
wait_ready "http://127.0.0.1:$port/healthz"
sleep 2
size=$(python3 -c "import urllib.request,sys; print(len(urllib.request.urlopen(sys.argv[1]).read()))" \
    "http://127.0.0.1:$port/metrics")
wrk -t2 -c"$CONNECTIONS" -d"${WRK_SECONDS}s" --latency "http://127.0.0.1:$port/metrics" > "$tmp/wrk.txt"
python3 - "$tmp/wrk.txt" "$size" "$CONNECTIONS" "$WRK_SECONDS" <<'PY'
import re, sys
text, size, conns, secs = open(sys.argv[1]).read(), int(sys.argv[2]), sys.argv[3], sys.argv[4]
pct = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M))
rps = re.search(r"Requests/sec:\s+(\S+)", text).group(1)
total = re.search(r"(\d+) requests in", text).group(1)
sock = re.search(r"Socket errors: (.*)", text)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"scrape load: wrk, 2 threads, {conns} connections, {secs} s, /metrics of {size} bytes")
print("| requests | requests/s | p50 | p90 | p99 | socket errors | non-2xx |")
print("|---|---|---|---|---|---|---|")
print(f"| {total} | {rps} | {pct.get('50')} | {pct.get('90')} | {pct.get('99')} | "
      f"{sock.group(1) if sock else 'none'} | {non2xx.group(1) if non2xx else 0} |")
PY
kill -TERM "$monitor_pid"
wait "$monitor_pid" || { echo "metrics-load.sh: the monitor did not stop cleanly" >&2; exit 1; }
monitor_pid=""
echo

# --- 2. memory over a long, time-compressed run -------------------------------------------
port=$(free_port)
"$MLBENCH" monitor --listen "127.0.0.1:$port" --interval 10ms -- python3 "$tmp/churn.py" &
monitor_pid=$!
wait_ready "http://127.0.0.1:$port/healthz"
python3 - "$monitor_pid" "http://127.0.0.1:$port/metrics" "$MEM_SECONDS" <<'PY'
import re, sys, threading, time, urllib.request
pid, url, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
def value(text, series):
    m = re.search(r"^" + re.escape(series) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else float("nan")
stop, scrapes, last = False, [0], [""]
def scraper():
    while not stop:
        try:
            last[0] = urllib.request.urlopen(url, timeout=5).read().decode()
            scrapes[0] += 1
        except OSError:
            pass
        time.sleep(0.05)
th = threading.Thread(target=scraper); th.start()
points, t0 = [], time.monotonic()
try:
    while time.monotonic() - t0 < seconds:
        time.sleep(5)
        points.append((time.monotonic() - t0, rss_kib()))
finally:
    stop = True
    th.join()
text = last[0]
rows = value(text, "mlbench_samples_total")
events = value(text, "mlbench_markers_received_total")
dropped = sum(float(v) for v in re.findall(r"^mlbench_markers_dropped_total\{[^}]*\} (\S+)$", text, re.M))
print(f"memory: sampling every 10 ms for {seconds} s = {rows:.0f} sample rows "
      f"({rows / 3600:.1f} h at the default 1 s); {events:.0f} marker events, "
      f"{dropped:.0f} turned away by the bounds; {scrapes[0]} scrapes; exposition {len(text)} bytes")
print("| t (s) | VmRSS (KiB) |")
print("|---|---|")
for t, kib in points:
    print(f"| {t:.0f} | {kib} |")
warm = [kib for t, kib in points if t >= 20] or [kib for _, kib in points]
print(f"after 20 s: min {min(warm)} KiB, max {max(warm)} KiB, growth {max(warm) - warm[0]} KiB "
      f"({100 * (max(warm) - warm[0]) / warm[0]:.1f} %)")
PY
kill -TERM "$monitor_pid"
wait "$monitor_pid" || { echo "metrics-load.sh: the monitor did not stop cleanly" >&2; exit 1; }
monitor_pid=""

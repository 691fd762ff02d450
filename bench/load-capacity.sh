#!/bin/sh
# The load generator's capacity: `mlbench load --scenario offline` against wrk, both driving
# bench/trivial-http (a fixed 200 answer, libmicrohttpd's epoll pool) on this machine, with the
# same connections, threads and duration; requests/s and each tool's CPU per request.
#
# For each connection count, REPS repetitions, the two tools alternating (the one that goes
# first swaps every repetition, so that drift and order hit both alike); medians over the
# repetitions and the ratio mlbench / wrk. CPU: each tool's whole process as perf stat's
# task-clock (wrk and mlbench alike), and mlbench's own generator threads (client.cpu_s of its
# result). With 2 or more CPUs the server runs on CPU 0 and the generator on the others
# (taskset), so that they do not take each other's time; with one CPU both share it.
# Usage: bench/load-capacity.sh   (env: BUILD=build, REPS=5, CONNS="16 64", DURATION=5,
#        THREADS=1 (generator threads), SERVER_THREADS=1)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
CONNS=${CONNS:-"16 64"}
DURATION=${DURATION:-5}
THREADS=${THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-1}
MLBENCH=$BUILD/mlbench
SERVER=$BUILD/bench/trivial-http
command -v wrk >/dev/null || { echo "load-capacity.sh: wrk missing: scripts/install-deps.sh --bench" >&2; exit 2; }
command -v perf >/dev/null || { echo "load-capacity.sh: perf missing (linux-perf)" >&2; exit 2; }
for bin in "$MLBENCH" "$SERVER"; do
    [ -x "$bin" ] || { echo "load-capacity.sh: $bin not found: build first" >&2; exit 2; }
done

ncpu=$(nproc)
pin_apart

make_tmp
start_trivial_http --threads "$SERVER_THREADS"

# CPU milliseconds of the command perf stat ran, from its -x, output in file $1.
cpu_ms() { awk -F, '$3 == "task-clock" { print $1 }' "$1"; }

run_wrk() { # connections rep
    # shellcheck disable=SC2086
    $pin_gen perf stat -x, -e task-clock -o "$tmp/wrk-cpu" -- \
        wrk -c "$1" -t "$THREADS" -d "$DURATION" "$url" >"$tmp/wrk.out"
    rps=$(sed -n 's/^Requests\/sec: *//p' "$tmp/wrk.out")
    reqs=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$tmp/wrk.out")
    echo "$rps $(awk -v c="$(cpu_ms "$tmp/wrk-cpu")" -v n="$reqs" 'BEGIN { printf "%.3f", 1e3 * c / n }')" \
        >>"$tmp/wrk.$1"
}

run_mlbench() { # connections rep
    # shellcheck disable=SC2086
    $pin_gen perf stat -x, -e task-clock -o "$tmp/m-cpu" -- \
        "$MLBENCH" load --quiet --store "$tmp/store" --scenario offline --connections "$1" \
        --threads "$THREADS" --min-duration "${DURATION}s" -o "$tmp/m.json" "$url" >/dev/null
    python3 - "$tmp/m.json" "$(cpu_ms "$tmp/m-cpu")" >>"$tmp/m.$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["load"]["scenarios"][0]
n = s["completed"]
print(f"{s['throughput_qps']:.1f} {1e3 * float(sys.argv[2]) / n:.3f} "
      f"{1e6 * s['client']['cpu_s'] / n:.3f} {s['failed']}")
PY
}

for c in $CONNS; do
    : >"$tmp/wrk.$c"
    : >"$tmp/m.$c"
done
rep=1
while [ "$rep" -le "$REPS" ]; do
    for c in $CONNS; do
        if [ $((rep % 2)) -eq 1 ]; then
            run_wrk "$c"
            run_mlbench "$c"
        else
            run_mlbench "$c"
            run_wrk "$c"
        fi
    done
    rep=$((rep + 1))
done

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<HEAD
| machine | ${model:-unknown}, $ncpu CPUs, $(uname -sr) |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} (not used here) |
| wrk | $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2) |
| server | bench/trivial-http, $SERVER_THREADS epoll thread(s); $pinning |
| runs | ${DURATION} s each, $THREADS generator thread(s), $REPS repetitions alternating |

| connections | wrk requests/s | mlbench requests/s | mlbench / wrk | wrk CPU per request | mlbench CPU per request (process) | mlbench generator threads per request (client.cpu_s) | mlbench failed |
|---:|---:|---:|---:|---:|---:|---:|---:|
HEAD
for c in $CONNS; do
    w=$(cut -d' ' -f1 "$tmp/wrk.$c" | median)
    wc=$(cut -d' ' -f2 "$tmp/wrk.$c" | median)
    m=$(cut -d' ' -f1 "$tmp/m.$c" | median)
    mc=$(cut -d' ' -f2 "$tmp/m.$c" | median)
    mt=$(cut -d' ' -f3 "$tmp/m.$c" | median)
    mf=$(cut -d' ' -f4 "$tmp/m.$c" | sort -n | tail -n 1)
    echo "| $c | $w | $m | $(ratio "$m" "$w") | $wc µs | $mc µs | $mt µs | $mf |"
done
echo
for c in $CONNS; do
    echo "connections $c, each repetition: wrk $(cut -d' ' -f1 "$tmp/wrk.$c" | tr '\n' ' ')/" \
         "mlbench $(cut -d' ' -f1 "$tmp/m.$c" | tr '\n' ' ')"
done
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."

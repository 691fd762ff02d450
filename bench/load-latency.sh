#!/bin/sh
# Latency agreement of `mlbench load` with wrk: bench/trivial-http answering every request after
# a fixed DELAY_US (a thread per connection that sleeps), CONNS connections, the offline
# scenario (every connection busy, as wrk keeps them), REPS repetitions with the two tools
# alternating (the first swaps every repetition). Compared: wrk's p50 (`wrk --latency`: from a
# request's write to its response) against mlbench's response_s.p50 (the same interval) and
# latency_s.p50 (from the query's due time; in offline the due time is when a connection is
# free, so the two differ only by the generator's own lag). Medians over the repetitions and
# the ratios mlbench / wrk. Pinned as bench/load-capacity.sh (server CPU 0, generator the rest).
# Usage: bench/load-latency.sh   (env: BUILD=build, REPS=5, CONNS=4, DURATION=5, DELAY_US=2000)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
CONNS=${CONNS:-4}
DURATION=${DURATION:-5}
DELAY_US=${DELAY_US:-2000}
MLBENCH=$BUILD/mlbench
SERVER=$BUILD/bench/trivial-http
command -v wrk >/dev/null || { echo "load-latency.sh: wrk missing: scripts/install-deps.sh --bench" >&2; exit 2; }
for bin in "$MLBENCH" "$SERVER"; do
    [ -x "$bin" ] || { echo "load-latency.sh: $bin not found: build first" >&2; exit 2; }
done

ncpu=$(nproc)
pin_apart

make_tmp
start_trivial_http --delay-us "$DELAY_US"

# wrk's "50%   2.10ms" line in microseconds.
wrk_p50_us() {
    awk '$1 == "50%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
        f = (u == "us") ? 1 : (u == "ms") ? 1e3 : (u == "s") ? 1e6 : (u == "m") ? 6e7 : -1
        printf "%.1f\n", v * f }' "$1"
}

run_wrk() {
    # shellcheck disable=SC2086
    $pin_gen wrk --latency -c "$CONNS" -t 1 -d "$DURATION" "$url" >"$tmp/wrk.out"
    echo "$(wrk_p50_us "$tmp/wrk.out") $(sed -n 's/^Requests\/sec: *//p' "$tmp/wrk.out")" >>"$tmp/wrk"
}

run_mlbench() {
    # shellcheck disable=SC2086
    $pin_gen "$MLBENCH" load --quiet --store "$tmp/store" --scenario offline \
        --connections "$CONNS" --threads 1 --min-duration "${DURATION}s" -o "$tmp/m.json" \
        "$url" >/dev/null
    python3 - "$tmp/m.json" >>"$tmp/m" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["load"]["scenarios"][0]
print(f"{1e6 * s['response_s']['p50']:.1f} {1e6 * s['latency_s']['p50']:.1f} "
      f"{s['throughput_qps']:.1f}")
PY
}

: >"$tmp/wrk"
: >"$tmp/m"
rep=1
while [ "$rep" -le "$REPS" ]; do
    if [ $((rep % 2)) -eq 1 ]; then
        run_wrk
        run_mlbench
    else
        run_mlbench
        run_wrk
    fi
    rep=$((rep + 1))
done

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
w=$(cut -d' ' -f1 "$tmp/wrk" | median)
wq=$(cut -d' ' -f2 "$tmp/wrk" | median)
mr=$(cut -d' ' -f1 "$tmp/m" | median)
ml=$(cut -d' ' -f2 "$tmp/m" | median)
mq=$(cut -d' ' -f3 "$tmp/m" | median)
cat <<EOF
| machine | ${model:-unknown}, $ncpu CPUs, $(uname -sr) |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} (not used here) |
| wrk | $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2) |
| server | bench/trivial-http --delay-us $DELAY_US (a thread per connection); $pinning |
| runs | ${DURATION} s each, $CONNS connections, 1 generator thread, $REPS repetitions alternating |

| tool | p50 (µs) | ratio to wrk | requests/s |
|---|---:|---:|---:|
| wrk --latency | $w | 1.00 | $wq |
| mlbench response_s.p50 | $mr | $(awk -v a="$mr" -v b="$w" 'BEGIN { printf "%.4f", a / b }') | $mq |
| mlbench latency_s.p50 | $ml | $(awk -v a="$ml" -v b="$w" 'BEGIN { printf "%.4f", a / b }') | |

Each repetition (p50 µs): wrk $(cut -d' ' -f1 "$tmp/wrk" | tr '\n' ' ')/ mlbench response $(cut -d' ' -f1 "$tmp/m" | tr '\n' ' ')/ mlbench latency $(cut -d' ' -f2 "$tmp/m" | tr '\n' ' ')
Load average after: $(cut -d' ' -f1-3 /proc/loadavg).
EOF

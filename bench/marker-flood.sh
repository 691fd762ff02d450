#!/bin/sh
# Does marking slow a workload that marks very often, on a busy machine? marker-flood's 2
# threads each do 200 ns of integer work (calibrated here, undisturbed) then one stage event:
# 10 M events/s when nothing else runs. A burner keeps every CPU busy throughout. Each round runs
# the loop with markers off (outside mlbench), on through rings and, shorter, on through
# datagrams; the table gives the medians of the slowest thread's time and the ratios, and checks
# that every event sent was received or counted as dropped.
# Usage: bench/marker-flood.sh   (env: BUILD=build, REPS=5, SECONDS_RUN=5, BURNERS=number of CPUs)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
REPS=${REPS:-5}
SECONDS_RUN=${SECONDS_RUN:-5}
FLOOD=$BUILD/bench/marker-flood
MLBENCH=$BUILD/mlbench
for f in "$FLOOD" "$MLBENCH"; do
    if [ ! -x "$f" ]; then
        echo "marker-flood.sh: $f not found: build it first (cmake --build $BUILD)" >&2
        exit 2
    fi
done

make_tmp
threads=2
work=$("$FLOOD" --calibrate 200)
events=$((SECONDS_RUN * 5000000))   # per thread: 5 M events/s each
dgram_events=$((events / 10))       # datagrams block: a tenth of the loop, compared alike

ncpu=$(nproc)
nburn=${BURNERS:-$ncpu}
i=0
burners=""
while [ "$i" -lt "$nburn" ]; do
    awk 'BEGIN { while (1) x++ }' &
    burners="$burners $!"
    i=$((i + 1))
done
stop_burners() { kill $burners 2>/dev/null || true; cleanup_tmp; }
trap stop_burners EXIT INT TERM

off() { # events -> seconds
    env -u MLBENCH_MARKER_SOCKET -u MLBENCH_MARKER_RING "$FLOOD" "$threads" "$1" "$work" |
        awk '$1 == "flood_seconds" { print $2 }'
}
on() { # transport events -> seconds; the result in $tmp/on.json, the output in $tmp/on.out
    MLBENCH_MARKER_TRANSPORT=$1 "$MLBENCH" run -r 1 -q --show-output --store "$tmp/store" \
        -o "$tmp/on.json" -- "$FLOOD" "$threads" "$2" "$work" > "$tmp/on.out" 2>/dev/null
    awk '$1 == "flood_seconds" { print $2 }' "$tmp/on.out"
}
# "received dropped_by_rings dropped_beyond_the_log_bound sent" of the last run on: the stage
# events it printed it sent, and its counter flood_sent (one event more, which may itself be
# beyond the log's bound).
accounting() {
    python3 - "$tmp/on.json" "$(awk '$1 == "flood_sent" { print $2 }' "$tmp/on.out")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["runs"][0]["markers"]
print(m["events"], m["ring_dropped"], m["dropped"], sys.argv[2])
PY
}

: > "$tmp/off"; : > "$tmp/ring"; : > "$tmp/doff"; : > "$tmp/dgram"; : > "$tmp/acct"
k=0
while [ "$k" -lt "$REPS" ]; do
    off "$events" >> "$tmp/off"
    on ring "$events" >> "$tmp/ring"
    accounting >> "$tmp/acct"
    off "$dgram_events" >> "$tmp/doff"
    on datagram "$dgram_events" >> "$tmp/dgram"
    k=$((k + 1))
done

m_off=$(median < "$tmp/off"); m_ring=$(median < "$tmp/ring")
m_doff=$(median < "$tmp/doff"); m_dgram=$(median < "$tmp/dgram")
exact=$(awk '{ if ($1 + $2 + $3 != $4 + 1) bad++ } END { print bad ? "NO (" bad " runs)" : "yes" }' "$tmp/acct")
drops=$(awk '{ printf "%s%s", sep, $2; sep = ", " }' "$tmp/acct")
beyond=$(awk '{ printf "%s%s", sep, $3; sep = ", " }' "$tmp/acct")
model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<TABLE
| machine | ${model:-unknown}, $ncpu CPUs, $nburn CPU burners running |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| loop | $threads threads x $events events, $work work steps (200 ns undisturbed) an event |

| markers (median of $REPS) | slowest thread | ratio to off |
|---|---:|---:|
| off | $m_off s | 1.00 |
| rings | $m_ring s | $(ratio "$m_ring" "$m_off") |
| off, a tenth of the loop | $m_doff s | 1.00 |
| datagrams, a tenth of the loop | $m_dgram s | $(ratio "$m_dgram" "$m_doff") |

Every event received or counted (received + ring drops + beyond the 5 M a run keeps = sent): $exact.
Dropped by the rings, per run: $drops. Beyond the 5 M events a run keeps, per run: $beyond.
TABLE
echo
echo "received, ring drops, beyond the bound, stage events sent; per run:"
cat "$tmp/acct"

#!/bin/sh
# Measures what one marker event costs a workload (C and Python clients; markers on through rings
# and through datagrams, side by side in one run; markers off) and prints a markdown table of
# medians of 5 repetitions, with the machine it ran on. Markers on are measured under
# `mlbench run` when $BUILD/mlbench exists, otherwise with the benchmark's own receiver
# (--self-receive); the table says which.
# Usage: bench/marker-cost.sh   (env: BUILD=build, PYTHON=python3, REPS=5)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
REPS=${REPS:-5}
COST=$BUILD/bench/marker-cost
MLBENCH=$BUILD/mlbench

if [ ! -x "$COST" ]; then
    echo "marker-cost.sh: $COST not found: build it first" \
         "(cmake --build $BUILD --target marker-cost)" >&2
    exit 2
fi


# Runs "$@" REPS times (markers off) and prints the values of the line starting with $key.
repeat_off() {
    key=$1
    shift
    i=0
    while [ "$i" -lt "$REPS" ]; do
        env -u MLBENCH_MARKER_SOCKET "$@" | awk -v k="$key" '$1 == k { print $2 }'
        i=$((i + 1))
    done
}

# Markers on, on transport $2 (ring or datagram): under mlbench when it is built and its output
# carries the values; otherwise REPS runs with the benchmark's own receiver. Sets $values and
# $receiver.
measure_on() {
    key=$1
    transport=$2
    shift 2
    values=""
    if [ -x "$MLBENCH" ]; then
        store=$(mktemp -d)
        values=$(MLBENCH_MARKER_TRANSPORT=$transport "$MLBENCH" run -r "$REPS" --show-output \
                 --store "$store" -- "$@" 2>&1 | awk -v k="$key" '$1 == k { print $2 }') || true
        rm -rf "$store"
        receiver="mlbench run"
    fi
    if [ "$(printf '%s\n' "$values" | grep -c .)" -lt "$REPS" ]; then
        if [ -x "$MLBENCH" ]; then
            echo "marker-cost.sh: too few $key values from mlbench run: using --self-receive" >&2
        fi
        self_key=$key
        case $key in
            py_*) self_key=$(echo "$key" | sed "s/^py_/py_${transport}_/") ;;
            c_*) if [ "$transport" = ring ]; then # the C receiver of its own reads datagrams
                     values=""; receiver="none (rings need mlbench)"; return; fi ;;
        esac
        values=$(i=0; while [ "$i" -lt "$REPS" ]; do
            env -u MLBENCH_MARKER_SOCKET "$@" --self-receive |
                awk -v k="$self_key" '$1 == k { print $2 }'
            i=$((i + 1)); done)
        receiver="own (--self-receive)"
    fi
}

measure_on c_enabled_ns_per_event ring "$COST"
c_ring=$(printf '%s\n' "$values" | median); c_ring_rx=$receiver
measure_on c_enabled_ns_per_event datagram "$COST"
c_dgram=$(printf '%s\n' "$values" | median); c_dgram_rx=$receiver
c_off=$(repeat_off c_disabled_ns_per_call "$COST" | median)
measure_on py_stage_ns_per_event ring "$PYTHON" bench/marker_cost.py
py_ring=$(printf '%s\n' "$values" | median); py_ring_rx=$receiver
measure_on py_stage_ns_per_event datagram "$PYTHON" bench/marker_cost.py
py_dgram=$(printf '%s\n' "$values" | median); py_dgram_rx=$receiver
py_off=$(repeat_off py_disabled_ns_per_call "$PYTHON" bench/marker_cost.py | median)

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<TABLE
| machine | ${model:-unknown}, $(nproc) CPUs, clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown) |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| Python | $("$PYTHON" -c 'import sys; print(sys.version.split()[0])') ($PYTHON) |

| measurement (median of $REPS) | value | target | ratio datagram/ring | receiver |
|---|---:|---:|---:|---|
| C, rings: ns per event (50 000 begin/end pairs, median chunk) | $c_ring | <= 50 | | $c_ring_rx |
| C, datagrams: ns per event (same) | $c_dgram | | $(ratio "$c_dgram" "$c_ring") | $c_dgram_rx |
| C, markers off: ns per call (10^7 calls) | $c_off | <= 2 | | none |
| Python, rings: ns per event of \`with stage():\` (100 000 blocks) | $py_ring | <= 800 | | $py_ring_rx |
| Python, datagrams: ns per event of \`with stage():\` (same) | $py_dgram | | $(ratio "$py_dgram" "$py_ring") | $py_dgram_rx |
| Python, markers off: ns per call (10^6 calls) | $py_off | - | | none |
TABLE

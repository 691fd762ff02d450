#!/bin/sh
# Measures what one marker event costs a workload (C and Python clients, markers on and off)
# and prints a markdown table of medians of 5 repetitions, with the machine it ran on.
# Markers on are measured under `mlbench run` when $BUILD/mlbench exists, otherwise with the
# benchmark's own receiver (--self-receive); the table says which.
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

# Markers on: under mlbench when it is built and its output carries the values; otherwise
# REPS runs with the benchmark's own receiver. Sets $values and $receiver.
measure_on() {
    key=$1
    shift
    values=""
    if [ -x "$MLBENCH" ]; then
        store=$(mktemp -d)
        values=$("$MLBENCH" run -r "$REPS" --show-output --store "$store" -- "$@" 2>&1 |
                 awk -v k="$key" '$1 == k { print $2 }') || true
        rm -rf "$store"
        receiver="mlbench run"
    fi
    if [ "$(printf '%s\n' "$values" | grep -c .)" -lt "$REPS" ]; then
        if [ -x "$MLBENCH" ]; then
            echo "marker-cost.sh: too few $key values from mlbench run: using --self-receive" >&2
        fi
        values=$(i=0; while [ "$i" -lt "$REPS" ]; do
            env -u MLBENCH_MARKER_SOCKET "$@" --self-receive |
                awk -v k="$key" '$1 == k { print $2 }'
            i=$((i + 1)); done)
        receiver="own (--self-receive)"
    fi
}

measure_on c_enabled_ns_per_event "$COST"
c_on=$(printf '%s\n' "$values" | median); c_on_rx=$receiver
c_off=$(repeat_off c_disabled_ns_per_call "$COST" | median)
measure_on py_enabled_ns_per_event "$PYTHON" bench/marker_cost.py
py_on=$(printf '%s\n' "$values" | median); py_on_rx=$receiver
py_off=$(repeat_off py_disabled_ns_per_call "$PYTHON" bench/marker_cost.py | median)

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<TABLE
| machine | ${model:-unknown}, $(nproc) CPUs |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| Python | $("$PYTHON" -c 'import sys; print(sys.version.split()[0])') ($PYTHON) |

| measurement (median of $REPS) | value | target | receiver |
|---|---:|---:|---|
| C, markers on: ns per event (100 000 begin/end pairs) | $c_on | <= 2000 | $c_on_rx |
| C, markers off: ns per call (10^7 calls) | $c_off | <= 5 | none |
| Python, markers on: ns per event (100 000 begin/end pairs) | $py_on | <= 6000 | $py_on_rx |
| Python, markers off: ns per call (10^6 calls) | $py_off | - | none |
TABLE

#!/bin/sh
# System calls and CPU time per request of `mlbench load`'s generator: the offline scenario on
# CONNS connections against bench/trivial-http for DURATION s, for each binary of MLBENCH (a
# list, space-separated: e.g. an older build beside this one).
#  (a) system calls, counted by strace -c -f: counts, not timings, the same on a busy machine
#      as on a quiet one. They include what the rest of mlbench does meanwhile (its sampler,
#      the store), a few hundred calls in all, hence runs of thousands of requests;
#  (b) without strace, the generator threads' CPU time per request (client.cpu_s / requests of
#      the result) and requests/s: REPS rounds, each running every binary once (the order
#      rotating round by round); medians over the rounds.
# The server runs on CPU 0 and the generator on the others (taskset) when there are 2 or more.
# Usage: bench/load-syscalls.sh   (env: BUILD=build, MLBENCH="$BUILD/mlbench", CONNS=16,
#        DURATION=3, REPS=5)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
MLBENCH=${MLBENCH:-$BUILD/mlbench}
CONNS=${CONNS:-16}
DURATION=${DURATION:-3}
REPS=${REPS:-5}
SERVER=$BUILD/bench/trivial-http
command -v strace >/dev/null || { echo "load-syscalls.sh: strace missing (apt-get install strace)" >&2; exit 2; }
for bin in $MLBENCH "$SERVER"; do
    [ -x "$bin" ] || { echo "load-syscalls.sh: $bin not found: build first" >&2; exit 2; }
done

make_tmp
ncpu=$(nproc)
pin_apart
start_trivial_http

echo "| mlbench | requests | epoll_ctl per request | timerfd_settime per request | epoll_wait per request | all calls per request |"
echo "|---|---:|---:|---:|---:|---:|"
for bin in $MLBENCH; do
    # shellcheck disable=SC2086
    $pin_gen strace -f -c -o "$tmp/strace.out" "$bin" load --quiet --store "$tmp/store" --scenario offline \
        --connections "$CONNS" --threads 1 --min-duration "${DURATION}s" -o "$tmp/m.json" \
        "$url" >/dev/null
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["load"]["scenarios"][0]["requests"])' "$tmp/m.json")
    # strace -c's table: "% time seconds usecs/call calls errors syscall"
    calls() { awk -v s="$1" '$NF == s { print $4 }' "$tmp/strace.out" | head -n 1; }
    total=$(awk '$NF == "total" { print $4 }' "$tmp/strace.out")
    per() { awk -v a="${1:-0}" -v n="$n" 'BEGIN { printf "%.3f", a / n }'; }
    echo "| $bin | $n | $(per "$(calls epoll_ctl)") | $(per "$(calls timerfd_settime)") | $(per "$(calls epoll_wait)") | $(per "$total") |"
done

# (b): CPU per request without strace, rounds rotating the order
k=0
for bin in $MLBENCH; do : >"$tmp/cpu.$k"; k=$((k + 1)); done
nbin=$k
rep=0
while [ "$rep" -lt "$REPS" ]; do
    j=0
    while [ "$j" -lt "$nbin" ]; do
        k=$(((j + rep) % nbin))
        bin=$(echo $MLBENCH | tr ' ' '\n' | sed -n "$((k + 1))p")
        # shellcheck disable=SC2086
        $pin_gen "$bin" load --quiet --store "$tmp/store" --scenario offline --connections "$CONNS" \
            --threads 1 --min-duration "${DURATION}s" -o "$tmp/m.json" "$url" >/dev/null
        python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["load"]["scenarios"][0]; print("%.3f %.0f" % (1e6*s["client"]["cpu_s"]/s["requests"], s["throughput_qps"]))' "$tmp/m.json" >>"$tmp/cpu.$k"
        j=$((j + 1))
    done
    rep=$((rep + 1))
done
echo
echo "| mlbench | generator CPU per request (µs, median of $REPS) | requests/s (median) | each round (µs) |"
echo "|---|---:|---:|---|"
k=0
for bin in $MLBENCH; do
    echo "| $bin | $(cut -d' ' -f1 "$tmp/cpu.$k" | median) | $(cut -d' ' -f2 "$tmp/cpu.$k" | median) | $(cut -d' ' -f1 "$tmp/cpu.$k" | tr '\n' ' ')|"
    k=$((k + 1))
done
echo
echo "Machine: $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1), $(nproc) CPUs, $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC'); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)} (not used); $CONNS connections, ${DURATION} s per run; server on CPU 0, generator on the others when 2 or more CPUs."

#!/bin/sh
# What resource sampling costs a workload: a fixed CPU-bound job (2 threads, all the cores of a
# 2-core machine, so the sampler competes with it) in a tree of 50 processes, timed by
# `mlbench run` with sampling every 10 s (a first and a last sample only: the baseline), every
# 100 ms, every 10 ms, and adaptive (no --interval: 10 ms at first, growing to 100 ms after 2 s). The settings alternate within each round so that drifts of a shared
# machine hit all alike. Reports the median wall time of each setting, its slowdown against the
# baseline, and the sampler's own CPU use as mlbench measures it (sampling.cpu_ratio).
# Usage: bench/sampler-cost.sh   (env: BUILD=build, ROUNDS=5, PROCS=50, ITER=300000000)
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-5}
PROCS=${PROCS:-50}
ITER=${ITER:-300000000}
MLBENCH=$BUILD/mlbench
BURN=$BUILD/bench/tree-burn
[ -x "$MLBENCH" ] && [ -x "$BURN" ] || { echo "sampler-cost.sh: build first (make build)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for round in $(seq "$ROUNDS"); do
    for interval in 10s 100ms 10ms adaptive; do
        opt="--interval $interval"
        [ "$interval" = adaptive ] && opt=""
        # shellcheck disable=SC2086 # $opt is empty or two words
        "$MLBENCH" run --quiet --store "$tmp/store" -r 1 $opt \
            -o "$tmp/$interval-$round.json" -- "$BURN" "$PROCS" 2 "$ITER"
    done
done

python3 - "$tmp" "$ROUNDS" "$PROCS" <<'PY'
import json, os, statistics, subprocess, sys, datetime
tmp, rounds, procs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(interval):
    out = []
    for r in range(1, rounds + 1):
        j = json.load(open(os.path.join(tmp, f"{interval}-{r}.json")))
        run = j["runs"][0]
        out.append((run["wall_ns"] / 1e9, j["sampling"]["cpu_ratio"], len(run["samples"]["t_ns"]),
                    max(v for s in run["samples"]["series"] if s["metric"] == "process_count"
                        for v in s["values"] if v is not None)))
    return out
cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout.strip()
print(f"machine: {cpu}, {os.cpu_count()} CPUs; {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; "
      f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
print(f"workload: {procs} processes, 2 threads of fixed work; {rounds} rounds alternating\n")
print("| interval | median wall | slowdown vs 10 s | sampler CPU (share of one core) | samples per run | processes seen |")
print("|---|---|---|---|---|---|")
base = statistics.median(w for w, *_ in load("10s"))
for interval in ("10s", "100ms", "10ms", "adaptive"):
    d = load(interval)
    wall = statistics.median(x[0] for x in d)
    print(f"| {interval} | {wall:.3f} s | {100 * (wall / base - 1):+.2f} % | "
          f"{100 * statistics.median(x[1] for x in d):.2f} % | {statistics.median(x[2] for x in d):.0f} | "
          f"{max(x[3] for x in d):.0f} |")
PY

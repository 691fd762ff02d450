#!/bin/sh
# Per-run overhead and accuracy of `mlbench run` against hyperfine, side by side on the same
# machine in one go: `true` and `sleep 0.05`, 50 runs each, no shell (hyperfine -N), alternating
# the two tools for ROUNDS rounds so that drifts of a shared machine hit both alike.
# Prints a markdown table: reported median and spread of each tool, and the wall time each tool
# needed for the 50 runs (its own cost per run).
# Usage: bench/overhead.sh   (env: BUILD=build, ROUNDS=3, RUNS=50)
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-50}
MLBENCH=$BUILD/mlbench
command -v hyperfine >/dev/null || { echo "overhead.sh: hyperfine missing: scripts/install-deps.sh --bench" >&2; exit 2; }
[ -x "$MLBENCH" ] || { echo "overhead.sh: $MLBENCH missing: make build" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }

for round in $(seq "$ROUNDS"); do
    for cmd in "true" "sleep 0.05"; do
        tag=$(echo "$cmd" | tr ' .' '__')
        t0=$(now)
        # shellcheck disable=SC2086 # the command's words are meant to split
        hyperfine -N --warmup 3 --runs "$RUNS" --style none --export-json "$tmp/h-$tag-$round.json" "$cmd" >/dev/null 2>&1
        t1=$(now)
        # shellcheck disable=SC2086
        "$MLBENCH" run --quiet --store "$tmp/store" -w 3 -r "$RUNS" -o "$tmp/m-$tag-$round.json" -- $cmd
        t2=$(now)
        echo "$tag $round $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)" >> "$tmp/walls"
    done
done

python3 - "$tmp" "$ROUNDS" "$RUNS" <<'PY'
import json, statistics, sys, os, platform, subprocess, datetime
tmp, rounds, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
walls = {}
for line in open(os.path.join(tmp, "walls")):
    tag, rnd, h, m = line.split()
    walls.setdefault(tag, []).append((float(h), float(m)))

def hyper(tag, r):
    res = json.load(open(os.path.join(tmp, f"h-{tag}-{r}.json")))["results"][0]
    times = res["times"]
    med = statistics.median(times)
    return med, statistics.median([abs(t - med) for t in times]), statistics.stdev(times)

def ours(tag, r):
    w = json.load(open(os.path.join(tmp, f"m-{tag}-{r}.json")))["summary"]["wall_ns"]
    return w["median"] / 1e9, w["mad"] / 1e9, w["stddev"] / 1e9

cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout.strip()
print(f"machine: {cpu}, {os.cpu_count()} CPUs; {platform.system()} {platform.release()}; "
      f"hyperfine {subprocess.run(['hyperfine', '--version'], capture_output=True, text=True).stdout.split()[1]}; "
      f"{datetime.date.today()}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
print(f"{runs} runs per tool per round, {rounds} rounds alternating; medians over rounds\n")
print("| command | tool | reported median | MAD | stddev | tool wall time for the runs |")
print("|---|---|---|---|---|---|")
for tag, name in (("true", "true"), ("sleep_0_05", "sleep 0.05")):
    h = [hyper(tag, r) for r in range(1, rounds + 1)]
    m = [ours(tag, r) for r in range(1, rounds + 1)]
    hw = statistics.median(w[0] for w in walls[tag])
    mw = statistics.median(w[1] for w in walls[tag])
    for tool, vals, wall in (("hyperfine -N", h, hw), ("mlbench run", m, mw)):
        med = statistics.median(v[0] for v in vals)
        mad = statistics.median(v[1] for v in vals)
        sd = statistics.median(v[2] for v in vals)
        print(f"| `{name}` | {tool} | {med*1e3:.3f} ms | {mad*1e3:.3f} ms | {sd*1e3:.3f} ms | {wall:.2f} s |")
    hm = statistics.median(v[0] for v in h)
    mm = statistics.median(v[0] for v in m)
    print(f"| `{name}` | ratio mlbench/hyperfine | {mm/hm:.4f} | | | {mw/hw:.3f} |")
PY

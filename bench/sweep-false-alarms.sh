#!/bin/sh
# False alarms of back-to-back runs against interleaved ones: the same command measured as an
# A/A pair (it is compared with itself, so every "faster" or "slower" verdict is false), TRIALS
# times each way, the two ways alternating trial by trial so they see the same machine:
#   back to back: mlbench run -r RUNS -- CMD; mlbench run -r RUNS -- CMD; mlbench compare
#   interleaved:  mlbench sweep -r RUNS -c CMD -c CMD; mlbench compare latest-sweep
# A shared machine's other load is mimicked by a burner that keeps BURNERS processes busy for
# ON seconds, then idle for OFF seconds, over and over (BURNERS=0: none, the machine as it is).
# Counts the trials whose verdict (statistical_verdict where the comparison also said
# unreliable) is faster or slower.
# Usage: bench/sweep-false-alarms.sh  (env: BUILD=build TRIALS=20 RUNS=10 BURNERS=1 ON=1.5 OFF=1.5)
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
TRIALS=${TRIALS:-20}
RUNS=${RUNS:-10}
BURNERS=${BURNERS:-1}
ON=${ON:-1.5}
OFF=${OFF:-1.5}
MLBENCH=$BUILD/mlbench
[ -x "$MLBENCH" ] || { echo "sweep-false-alarms.sh: build first (make build)" >&2; exit 2; }
CMD="python3 -c 'sum(range(1500000))'"

tmp=$(mktemp -d)
burner_pids=""
cleanup() { [ -z "$burner_pids" ] || kill $burner_pids 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq "$BURNERS"); do
    python3 -c "
import time
while True:
    end = time.time() + $ON
    while time.time() < end:
        sum(range(10000))
    time.sleep($OFF)
" &
    burner_pids="$burner_pids $!"
done

verdict() { # the total's verdict of a comparison document on stdin
    python3 -c '
import json, sys
d = json.load(sys.stdin)
t = [s for s in d["candidates"][0]["stages"] if s["name"] == "total"][0]
print(t.get("statistical_verdict") or t["verdict"])'
}

for trial in $(seq "$TRIALS"); do
    s="$tmp/b$trial"
    "$MLBENCH" run -q --store "$s" -r "$RUNS" -o "$s-a.json" --shell -- "$CMD"
    "$MLBENCH" run -q --store "$s" -r "$RUNS" -o "$s-b.json" --shell -- "$CMD"
    "$MLBENCH" compare --json "$s-a.json" "$s-b.json" | verdict >> "$tmp/back-to-back"
    s="$tmp/i$trial"
    "$MLBENCH" sweep -q --store "$s" -r "$RUNS" -c "$CMD" -c "$CMD" -n a -n b
    "$MLBENCH" compare --json --store "$s" latest-sweep | verdict >> "$tmp/interleaved"
done

python3 - "$tmp" "$TRIALS" "$RUNS" "$BURNERS" "$ON" "$OFF" <<'PY'
import collections, datetime, os, subprocess, sys
tmp, trials, runs, burners, on, off = sys.argv[1:]
print(f"# sweep-false-alarms.sh, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, "
      f"{os.cpu_count()} CPUs, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}")
print(f"# A/A pairs of python3 -c 'sum(range(1500000))', {runs} runs a side, {trials} trials "
      f"each way; burner: {burners} process(es), {on} s busy / {off} s idle")
print("| way | faster | slower | false alarms | no significant change |")
print("|---|---|---|---|---|")
for way in ("back-to-back", "interleaved"):
    v = collections.Counter(open(os.path.join(tmp, way)).read().splitlines())
    alarms = v["faster"] + v["slower"]
    print(f"| {way} | {v['faster']} | {v['slower']} | {alarms}/{trials} | "
          f"{v['no significant change']} |")
PY

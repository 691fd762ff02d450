#!/bin/sh
# make-corpus.sh: measures the documents of the golden corpus (tests/golden/README.md) into a
# new store: results of every kind (runs with stages, counters and span latencies, a failed
# run, a workflow, a multi-rank job, a fake-GPU run, recorded timings, load results against
# the reference server) and sweeps (a matrix, commands, find-max). Timings differ at every
# call, so the corpus is measured once and kept; the views of it are what the test checks.
#
# Usage: tests/golden/make-corpus.sh BUILD_DIR STORE_DIR    (from the source tree's root)
set -eu
BUILD=$(cd "$1" && pwd)
STORE=$2
mkdir -p "$STORE"
STORE=$(cd "$STORE" && pwd)
M="$BUILD/mlbench"
W="$BUILD/mlbench-workload"
export PYTHONPATH="$PWD/python"
export MLBENCH_STORE="$STORE"
run() { "$M" run -q "$@"; }

# Runs with stages: the C and Python example pipelines (counters, accuracy, loss), two
# versions of the Python one for comparisons and history.
run -r 3 -w 1 -l pipeline-c -- "$BUILD/examples/example-pipeline"
run -r 4 -l pipeline-py -- /usr/bin/python3 examples/pipeline.py --epochs 2
run -r 4 -l pipeline-py -- /usr/bin/python3 examples/pipeline.py --epochs 4
run -r 4 -l pipeline-py -- /usr/bin/python3 examples/pipeline.py --epochs 2
# Spans: a stage repeated often enough for latency percentiles.
run -r 3 -l spans -- /usr/bin/python3 -c '
import time, mlbench_marker as m
for i in range(40):
    with m.stage("step"):
        with m.stage("data"):
            time.sleep(0.001)
        time.sleep(0.002 + 0.0005 * (i % 5))
    m.counter("items", 32)
m.meta("batch_size", 32)
'
# A command that fails, and one that times out.
run -r 2 -l failing -- sh -c 'echo "bad input" >&2; exit 3' || true
run -r 1 --timeout 1s -l timeout -- sleep 5 || true
# A workflow file.
run -r 3 -l workflow -- examples/workflow/workflow.yaml
# A multi-rank job.
if command -v mpirun >/dev/null; then
    root=; [ "$(id -u)" = 0 ] && root=--allow-run-as-root
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
        run -r 2 -l ranks --ranks -- mpirun $root --oversubscribe -n 2 /usr/bin/python3 -c '
import time, mlbench_marker as m
for i in range(5):
    with m.stage("compute"):
        time.sleep(0.01)
    with m.stage("allreduce"):
        time.sleep(0.005)
'
fi
# A GPU, the fake NVML replaying a script (tests/fakes/fake_nvml.c).
if [ -f "$BUILD/tests/fakes/libfake_nvml.so" ]; then
    cat > "$STORE/nvml.script" <<'SCRIPT'
name 0 NVIDIA H200
cc 0 9 0
gpm 0 1
sm_clock_max 0 1980
mem_total 0 150000000000
mem_used 0 20000000000
procs 0 CHILD:20000000000
power 0 500000
util 0 90/10
gpm_sm 0 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 0
gpm_tensor 0 40
SCRIPT
    MLBENCH_NVML_LIBRARY="$BUILD/tests/fakes/libfake_nvml.so" FAKE_NVML_SCRIPT="$STORE/nvml.script" \
        run -r 2 -w 0 -l gpu --interval 100ms -- "$BUILD/tests/integration/stage_prog" stages train 1500 eval 1500
    rm -f "$STORE/nvml.script"
fi
# Recorded timings (mlbench record).
printf '%s' '{"schema": "mlbench.timings/1", "name": "sort", "number": 1000, "label": "record", "rounds_ns": [1234100, 1235100, 1236100, 1231100, 1240100, 1233100, 1234600, 1238100]}' |
    "$M" record -q
# Sweeps: a matrix, several commands, find-max.
"$M" sweep -q -r 3 -L n 1,2 -L m 1,3 --seed 5 -- sh -c 'sleep 0.0{n}; sleep 0.0{m}'
"$M" sweep -q -r 3 -l cmds --seed 5 -c 'sleep 0.01' -c 'sleep 0.02'
"$M" sweep -q -r 2 --find-max batch=1..64 -- sh -c 'test {batch} -le 20 || { echo "CUDA out of memory" >&2; exit 1; }; sleep 0.01'
# Load: the reference server, two scenarios.
"$W" serve --random-weights --listen 127.0.0.1:0 --threads 1 > "$STORE/serve.out" 2>&1 &
pid=$!
i=0
until grep -q listening "$STORE/serve.out" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$STORE/serve.out")
"$M" load -q -l load-ss --min-duration 2s --min-queries 50 --kserve cnn "$url"
"$M" load -q -l load-server --scenario server --qps 40 --seed 7 --min-duration 2s --min-queries 50 \
    --kserve cnn "$url"
kill $pid; wait $pid || true
rm -f "$STORE/serve.out" "$STORE/results.db"*
# A hostile document: the spans result with control characters in its strings and values of
# the wrong type or out of range where numbers belong (what an edited or forged file holds).
/usr/bin/python3 - "$STORE" <<'PY'
import glob, json, os, sys
store = sys.argv[1]
src = next(d for d in (json.load(open(f)) for f in sorted(glob.glob(store + "/runs/*.json")))
           if d.get("label") == "spans")
d = json.loads(json.dumps(src))
d["id"] = d["id"][:-6] + "bad000"
d["label"] = "hostile\x1b[31m red \u202e evil"
st = d["summary"]["stages"]
st[0]["name"] = "step\x1b]0;title\x07" + "x" * 300
st[0]["median_ns"] = "12"
st[-1]["ci_low_ns"] = None
st[-1]["depth"] = 1e300
d["runs"][0]["status"] = 42
d["runs"][-1]["wall_ns"] = -5
d["summary"]["counters"] = [{"name": "\x9b2J", "values": "no"}, 7]
if d.get("analysis"):
    d["analysis"]["bottleneck"] = ["not", "a", "string"]
    for f in d["analysis"].get("findings", []):
        f["saving_ns"] = -1e308
d["warnings"].append({"code": "x\ny", "message": 5})
d["environment"]["hostname"] = "host\r\nname"
with open(os.path.join(store, "runs", d["id"] + ".json"), "w") as f:
    json.dump(d, f, indent=1)
PY

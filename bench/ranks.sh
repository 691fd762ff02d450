#!/bin/sh
# ranks.sh: imgclf data-parallel over Open MPI ranks on one host, side by side in one run:
#   A  1 rank,  1 thread   (mpirun -n 1 ... --ranks)
#   B  2 ranks, 1 thread each
#   C  1 process, 2 threads (no MPI: the same cores shared by threads instead of ranks)
# interleaved over ROUNDS rounds (A B C, A B C, ...), each run measured by `mlbench run -r 1`.
# Prints per configuration the medians of train images/s (global), allreduce share of the step
# and bus bandwidth, then the ratios: efficiency B/A / 2, and B/C. Results: bench/RESULTS.md.
# Usage: bench/ranks.sh [ROUNDS] [TRAIN_IMAGES]   (after a build in build/, with openmpi-bin)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-5}
images=${2:-12000}
mlbench=$PWD/build/mlbench
workload=$PWD/build/mlbench-workload
command -v mpirun >/dev/null || { echo "ranks.sh: mpirun not found (apt-get install openmpi-bin)" >&2; exit 2; }
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
make_tmp
args="imgclf --train-images $images --epochs 1 --batch 64 --quiet"
"$workload" imgclf --prepare-only >/dev/null

run() { # NAME COMMAND...: one measured run, its result appended to $tmp/NAME.list
    name=$1
    shift
    "$mlbench" run -q -r 1 --store "$tmp/store" -l "$name" -o "$tmp/last.json" -- "$@"
    cp "$tmp/last.json" "$tmp/$name.$(ls "$tmp" | grep -c "^$name\.")"
}

i=0
while [ "$i" -lt "$rounds" ]; do
    run A mpirun $root -n 1 "$workload" $args --ranks --threads 1
    run B mpirun $root --oversubscribe -n 2 "$workload" $args --ranks --threads 1
    run C "$workload" $args --threads 2
    i=$((i + 1))
done

python3 - "$tmp" <<'PY'
import glob, json, os, statistics, sys
tmp = sys.argv[1]
def counters(path):
    run = json.load(open(path))["runs"][0]
    return {c["name"]: c["last"] for c in run["counters"]}
res = {}
for name in "ABC":
    cs = [counters(p) for p in sorted(glob.glob(os.path.join(tmp, name + ".*")))]
    med = lambda k: statistics.median(c[k] for c in cs) if all(k in c for c in cs) else float("nan")
    res[name] = {k: med(k) for k in ("train_images_per_s", "allreduce_share", "allreduce_busbw_GBps",
                                      "barrier_share", "accuracy")}
    r = res[name]
    print(f"{name}: train {r['train_images_per_s']:.0f} images/s, allreduce {100 * r['allreduce_share']:.1f} %"
          f" of the step, barrier {100 * r['barrier_share']:.1f} %, busbw {r['allreduce_busbw_GBps']:.2f} GB/s,"
          f" accuracy {r['accuracy']:.4f} (medians of {len(cs)} runs)")
    for k in ("train_images_per_s", "barrier_share"):
        if all(k in c for c in cs):
            print(f"   {k} per run: " + " ".join(f"{c[k]:.4g}" for c in cs))
a, b, c = (res[k]["train_images_per_s"] for k in "ABC")
print(f"efficiency B/A/2 = {b / a / 2:.2f}   speedup B/A = {b / a:.2f}   ranks against threads B/C = {b / c:.2f}")
PY

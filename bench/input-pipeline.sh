#!/bin/sh
# Input pipeline throughput of imgclf (read + decode + random crop with padding + flip +
# normalise to float + batch) against Pillow + NumPy doing the same on the same files
# (bench/input_peer.py), and the scaling of our loader from 1 to 2 threads.
# Datasets: Fashion-MNIST (28x28 grey) and the synthetic set at 224x224 RGB (decode-bound).
# ROUNDS rounds alternate the configurations; medians of images/s and the ratios are printed as
# a markdown table with the machine it ran on. Files are read from the page cache (each set is
# read once before timing).
# Usage: bench/input-pipeline.sh
#   (env: BUILD=build, PYTHON=/usr/bin/python3 (needs python3-pil, python3-numpy), ROUNDS=5,
#    SYNTH_IMAGES=3000)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-5}
SYNTH_IMAGES=${SYNTH_IMAGES:-3000}
WL=$BUILD/mlbench-workload
[ -x "$WL" ] || { echo "input-pipeline.sh: $WL not found: build first" >&2; exit 2; }
"$PYTHON" -c 'import PIL, numpy' 2>/dev/null ||
    { echo "input-pipeline.sh: $PYTHON lacks Pillow/NumPy (python3-pil python3-numpy)" >&2; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
synth="--dataset synthetic --image-size 224 --train-images $SYNTH_IMAGES --val-images 10 --data-dir $dir/synth"
"$WL" imgclf $synth --prepare-only >&2
"$WL" imgclf --prepare-only >&2
fm_dir=$("$WL" imgclf --prepare-only | sed -n 's/.* in \(\/.*\) (already prepared)$/\1/p')
[ -n "$fm_dir" ] || { echo "input-pipeline.sh: cannot find the Fashion-MNIST directory" >&2; exit 1; }

ours() { # dataset args..., loader threads -> images/s
    threads=$1
    shift
    "$WL" imgclf "$@" --epochs 1 --input-only --loader-threads "$threads" --prefetch 4 |
        sed -n 's/.* images in .* s, \([0-9]*\) images\/s.*/\1/p'
}
peer() { # dir pad -> images/s
    "$PYTHON" bench/input_peer.py "$1" "$2" | sed -n 's/.*"images_per_s": \([0-9.]*\).*/\1/p'
}

for set in fm synth; do
    if [ $set = fm ]; then args=""; data=$fm_dir; pad=2; else args=$synth; data=$dir/synth; pad=14; fi
    ours 1 $args >/dev/null # warm the page cache
    : >"$dir/$set.1"; : >"$dir/$set.2"; : >"$dir/$set.pil"
    i=0
    while [ $i -lt "$ROUNDS" ]; do
        ours 1 $args >>"$dir/$set.1"
        ours 2 $args >>"$dir/$set.2"
        peer "$data" $pad >>"$dir/$set.pil"
        i=$((i + 1))
    done
done

echo "## input pipeline: read + decode + crop/flip + normalise, images/s (median of $ROUNDS)"
echo
echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; command: bench/input-pipeline.sh"
echo
echo "| images | ours, 1 loader thread | ours, 2 loader threads | scaling 1 -> 2 | Pillow + NumPy, 1 process | ours / Pillow per core |"
echo "|---|---:|---:|---:|---:|---:|"
for set in fm synth; do
    o1=$(median <"$dir/$set.1"); o2=$(median <"$dir/$set.2"); p=$(median <"$dir/$set.pil")
    name=$([ $set = fm ] && echo "Fashion-MNIST 28x28x1" || echo "synthetic 224x224x3")
    echo "| $name | $o1 | $o2 | $(echo "$o2 $o1" | awk '{printf "%.2fx", $1/$2}') | $(printf %.0f "$p") | $(echo "$o1 $p" | awk '{printf "%.2fx", $1/$2}') |"
done

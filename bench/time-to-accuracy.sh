#!/bin/sh
# Fashion-MNIST time to 90 % test accuracy (the DAWNBench metric) of `mlbench-workload imgclf`
# against PyTorch CPU on the same CNN, optimiser, schedule, augmentation, batch, epochs and
# thread count (bench/fmnist_peer.py). Ours runs the whole pipeline from the JPEG files
# (--loader-threads 0: reading and decoding in the training thread); PyTorch has the dataset
# resident in memory as tensors. Each configuration runs ROUNDS times, alternating; medians.
# UNTIL=1: ours runs `--until-accuracy 0.9 --max-epochs EPOCHS` instead of `--epochs EPOCHS`:
# the same schedule and so the same trajectory and time to 90 %, but it stops there (the "final
# accuracy" column is then the accuracy at the stop).
# Usage: bench/time-to-accuracy.sh
#   (env: BUILD=build, PYTHON=/usr/bin/python3 (needs python3-torch), ROUNDS=1, THREADS=$(nproc),
#    CONFIGS="32:3 256:5" (batch:epochs), UNTIL=0)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-1}
THREADS=${THREADS:-$(nproc)}
CONFIGS=${CONFIGS:-"32:3 256:5"}
UNTIL=${UNTIL:-0}
WL=$BUILD/mlbench-workload
[ -x "$WL" ] || { echo "time-to-accuracy.sh: $WL not found: build first" >&2; exit 2; }
"$PYTHON" -c 'import torch' 2>/dev/null ||
    { echo "time-to-accuracy.sh: $PYTHON has no torch (python3-torch)" >&2; exit 2; }
"$WL" imgclf --prepare-only >&2

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
for cfg in $CONFIGS; do
    b=${cfg%:*}; e=${cfg#*:}
    i=0
    while [ $i -lt "$ROUNDS" ]; do
        if [ "$UNTIL" = 1 ]; then length="--until-accuracy 0.9 --max-epochs $e"
        else length="--epochs $e"; fi
        # shellcheck disable=SC2086 # $length is two options and their values
        "$WL" imgclf --batch "$b" $length --threads "$THREADS" --quiet |
            sed -n 's/.*train \([0-9]*\) images\/s.*val accuracy \([0-9.]*\); \(90 % reached after \([0-9.]*\) s\)\{0,1\}.*/\4 \2 \1/p' |
            awk '{ if (NF == 2) print "-", $1, $2; else print }' >>"$dir/ours.$b"
        "$PYTHON" bench/fmnist_peer.py "$b" "$e" "$THREADS" |
            "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(round(r["time_to_90_s"], 1) if r["time_to_90_s"] else "-", r["accuracy"], round(r["train_images_per_s"]))' >>"$dir/torch.$b"
        i=$((i + 1))
    done
done

# Median of column $2 of file $1, leaving out "-" (target not reached).
column_median() { awk -v c="$2" '$c != "-" {print $c}' "$1" | median; }
echo "## Fashion-MNIST time to 90 % test accuracy, same CNN, $THREADS threads (median of $ROUNDS)"
echo
echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, $("$PYTHON" -c 'import torch; print("torch", torch.__version__)'); command: bench/time-to-accuracy.sh"
echo
echo "| batch | epochs | ours: time to 90 % (s) | PyTorch: time to 90 % (s) | ratio | ours final acc | PyTorch final acc | ours train images/s | PyTorch train images/s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for cfg in $CONFIGS; do
    b=${cfg%:*}; e=${cfg#*:}
    ot=$(column_median "$dir/ours.$b" 1); tt=$(column_median "$dir/torch.$b" 1)
    ratio=$(echo "$ot $tt" | awk '$1 != "n/a" && $2 != "n/a" {printf "%.2fx", $2/$1} $1 == "n/a" || $2 == "n/a" {print "n/a"}')
    echo "| $b | $e | $ot | $tt | $ratio | $(column_median "$dir/ours.$b" 2) | $(column_median "$dir/torch.$b" 2) | $(column_median "$dir/ours.$b" 3) | $(column_median "$dir/torch.$b" 3) |"
done

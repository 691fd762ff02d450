#!/bin/sh
# bf16 mixed precision on the CPU: the small CNN's training throughput in fp32 and bf16
# (bench/cnn-throughput, workloads/imgclf/cnn_cpu.c) beside PyTorch's autocast to bf16 (and its
# fp32) on the same model and shape (bench/cnn_peer.py), the GFLOP/s against one core's
# vdpbf16ps ceiling (bench/bf16-peak), and the accuracy each precision trains Fashion-MNIST to
# at the same seed and epochs (mlbench-workload imgclf).
#
# Throughput: for each batch, ROUNDS rounds alternating ours fp32, ours bf16, torch fp32, torch
# bf16 (NCHW, as the usual autocast example) and torch bf16 channels-last (PyTorch's fastest
# here), each run the median of 5 timed repetitions after warm-up; medians over the rounds. The
# machine is shared and noisy: alternating spreads the noise over all sides.
# Accuracy: EPOCHS epochs of the 60 000 training images at batch 32 and 128, fp32 then bf16,
# the same seed (the same initial weights, order and augmentation); test accuracy on the 10 000
# test images.
# Usage: bench/cnn-bf16.sh   (env: BUILD=build, PYTHON=/usr/bin/python3 (with torch), ROUNDS=5,
#        SHAPE=28x28x1, BATCHES="128 256", THREADS=2, EPOCHS=3, ACCURACY=1 (0: skip it))
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-5}
SHAPE=${SHAPE:-28x28x1}
BATCHES=${BATCHES:-"128 256"}
THREADS=${THREADS:-2}
EPOCHS=${EPOCHS:-3}
ACCURACY=${ACCURACY:-1}
OURS=$BUILD/bench/cnn-throughput
PEAK=$BUILD/bench/bf16-peak
WL=$BUILD/mlbench-workload

for bin in "$OURS" "$PEAK" "$WL"; do
    [ -x "$bin" ] || { echo "cnn-bf16.sh: $bin not found: build first" >&2; exit 2; }
done
"$PYTHON" -c 'import torch' 2>/dev/null ||
    { echo "cnn-bf16.sh: $PYTHON cannot import torch (python3-torch)" >&2; exit 2; }
if ! "$PEAK" >/dev/null; then
    echo "cnn-bf16.sh: this CPU cannot run the bf16 kernels (above)" >&2
    exit 2
fi

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
peak=$("$PEAK")
peak_bf16=$(echo "$peak" | field bf16_gflops)
peak_fp32=$(echo "$peak" | field fp32_gflops)
cat <<HEAD
| machine | ${model:-unknown}, $(nproc) CPUs |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| PyTorch | $("$PYTHON" -c 'import torch; print(torch.__version__)') ($PYTHON) |
| one core's ceiling | bf16 (vdpbf16ps) $peak_bf16 GFLOP/s, fp32 (FMA) $peak_fp32 GFLOP/s |
| load average before | $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) |

Training throughput, $SHAPE, $THREADS threads, images/s (medians of $ROUNDS alternating rounds):

| batch | ours fp32 | ours bf16 | bf16 / fp32 | ours bf16 GFLOP/s (of $THREADS cores' ceiling) | torch fp32 | torch bf16 | torch bf16 channels-last | ours bf16 / torch's best bf16 |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
HEAD

h=${SHAPE%%x*}
rest=${SHAPE#*x}
w=${rest%%x*}
c=${rest#*x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for batch in $BATCHES; do
    steps=$((1280 / batch))
    [ "$steps" -ge 3 ] || steps=3
    args="--height $h --width $w --channels $c --batch $batch --threads $THREADS --steps $steps"
    for f in o32 o16 t32 t16 t16cl; do : >"$tmp/$f"; done
    round=0
    while [ "$round" -lt "$ROUNDS" ]; do
        # shellcheck disable=SC2086 # args is a word list
        "$OURS" $args --precision fp32 >>"$tmp/o32"
        # shellcheck disable=SC2086
        "$OURS" $args --precision bf16 >>"$tmp/o16"
        # shellcheck disable=SC2086
        "$PYTHON" bench/cnn_peer.py $args --precision fp32 >>"$tmp/t32"
        # shellcheck disable=SC2086
        "$PYTHON" bench/cnn_peer.py $args --precision bf16 >>"$tmp/t16"
        # shellcheck disable=SC2086
        "$PYTHON" bench/cnn_peer.py $args --precision bf16 --channels-last >>"$tmp/t16cl"
        round=$((round + 1))
    done
    o32=$(field images_per_s <"$tmp/o32" | median)
    o16=$(field images_per_s <"$tmp/o16" | median)
    t32=$(field images_per_s <"$tmp/t32" | median)
    t16=$(field images_per_s <"$tmp/t16" | median)
    t16cl=$(field images_per_s <"$tmp/t16cl" | median)
    gf=$(field gflops <"$tmp/o16" | median)
    best=$(printf '%s\n%s\n' "$t16" "$t16cl" | sort -g | tail -n 1)
    share=$(awk -v g="$gf" -v p="$peak_bf16" -v t="$THREADS" 'BEGIN { printf "%.0f %%", 100 * g / (p * t) }')
    echo "| $batch | $o32 | $o16 | $(ratio "$o16" "$o32") | $gf ($share) | $t32 | $t16 | $t16cl |" \
         "$(ratio "$o16" "$best") |"
done
echo
echo "GFLOP/s count the GEMMs' multiply-adds only (cnn_flops_train); the ceiling is one core's" \
     "pure vdpbf16ps loop times $THREADS. Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."

[ "$ACCURACY" = 1 ] || exit 0
"$WL" imgclf --prepare-only >/dev/null
cat <<HEAD

Fashion-MNIST, $EPOCHS epochs, $THREADS threads, seed 1: test accuracy and training images/s:

| batch | fp32 accuracy | bf16 accuracy | bf16 - fp32 (points) | fp32 images/s | bf16 images/s |
|---:|---:|---:|---:|---:|---:|
HEAD
for batch in 32 128; do
    for p in fp32 bf16; do
        "$WL" imgclf --epochs "$EPOCHS" --batch "$batch" --threads "$THREADS" --quiet \
            --precision "$p" >"$tmp/acc.$p"
    done
    a32=$(sed -n 's/.*val accuracy \([0-9.]*\).*/\1/p' "$tmp/acc.fp32")
    a16=$(sed -n 's/.*val accuracy \([0-9.]*\).*/\1/p' "$tmp/acc.bf16")
    i32=$(sed -n 's/.*train \([0-9]*\) images\/s.*/\1/p' "$tmp/acc.fp32")
    i16=$(sed -n 's/.*train \([0-9]*\) images\/s.*/\1/p' "$tmp/acc.bf16")
    d=$(awk -v a="$a16" -v b="$a32" 'BEGIN { printf "%+.2f", 100 * (a - b) }')
    echo "| $batch | $a32 | $a16 | $d | $i32 | $i16 |"
done

#!/bin/sh
# Training throughput of the small CNN: our CPU backend (cnn-throughput, workloads/imgclf/
# cnn_cpu.c) beside PyTorch (bench/cnn_peer.py), same model, same random data shape, same
# thread count. For each shape (28x28x1, 32x32x3), batch (32, 256) and thread count (1, 2) it
# alternates ours, torch, ours, torch ... for ROUNDS rounds (the machine is shared and noisy:
# alternating spreads the noise over both), each run being the median of 5 timed repetitions
# after warm-up; prints a markdown table of the medians over the rounds, their ratio, and the
# achieved GFLOP/s (GEMM FLOPs, cnn_flops_train), with the machine it ran on. "ratio of bests"
# (the fastest run of each side) is less sensitive to other load on the machine, which hurts
# PyTorch's OpenMP threads (they spin at barriers) more than our pool.
# Usage: bench/cnn-vs-torch.sh   (env: BUILD=build, PYTHON=/usr/bin/python3 (with torch),
#        ROUNDS=3, SHAPES="28x28x1 32x32x3", BATCHES="32 256", THREADS="1 2")
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-3}
SHAPES=${SHAPES:-"28x28x1 32x32x3"}
BATCHES=${BATCHES:-"32 256"}
THREADS=${THREADS:-"1 2"}
OURS=$BUILD/bench/cnn-throughput

if [ ! -x "$OURS" ]; then
    echo "cnn-vs-torch.sh: $OURS not found: build it first" \
         "(cmake --build $BUILD --target cnn-throughput)" >&2
    exit 2
fi
if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
    echo "cnn-vs-torch.sh: $PYTHON cannot import torch: set PYTHON to a Python with PyTorch" >&2
    exit 2
fi

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<HEAD
| machine | ${model:-unknown}, $(nproc) CPUs |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| PyTorch | $("$PYTHON" -c 'import torch; print(torch.__version__)') ($PYTHON) |
| load average before | $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) |

| shape | batch | threads | ours images/s | torch images/s | ratio | ratio of bests | ours GFLOP/s | torch GFLOP/s |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
HEAD

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for shape in $SHAPES; do
    h=${shape%%x*}
    rest=${shape#*x}
    w=${rest%%x*}
    c=${rest#*x}
    for batch in $BATCHES; do
        # about 0.3 s or more per timed repetition for either side
        steps=$((640 / batch))
        [ "$steps" -ge 3 ] || steps=3
        for threads in $THREADS; do
            args="--height $h --width $w --channels $c --batch $batch --threads $threads --steps $steps"
            : >"$tmp/ours"
            : >"$tmp/torch"
            round=0
            while [ "$round" -lt "$ROUNDS" ]; do
                # shellcheck disable=SC2086 # args is a word list
                "$OURS" $args >>"$tmp/ours"
                # shellcheck disable=SC2086
                "$PYTHON" bench/cnn_peer.py $args >>"$tmp/torch"
                round=$((round + 1))
            done
            ours=$(field images_per_s <"$tmp/ours" | median)
            torch=$(field images_per_s <"$tmp/torch" | median)
            ours_best=$(field images_per_s <"$tmp/ours" | sort -g | tail -n 1)
            torch_best=$(field images_per_s <"$tmp/torch" | sort -g | tail -n 1)
            ours_gf=$(field gflops <"$tmp/ours" | median)
            torch_gf=$(field gflops <"$tmp/torch" | median)
            echo "| ${h}x${w}x${c} | $batch | $threads | $ours | $torch | $(ratio "$ours" "$torch")" \
                 "| $(ratio "$ours_best" "$torch_best") | $ours_gf | $torch_gf |"
        done
    done
done
echo
echo "Medians of $ROUNDS alternating rounds; each run: warm-up, then the median of 5 timed" \
     "repetitions. Load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)."

#!/bin/sh
# Compares the logreg workload's training with scikit-learn's LogisticRegression(solver="lbfgs",
# max_iter=500) on the same data (docs/logreg.md): the workload writes its data once
# (--save-data), then ROUNDS rounds alternate the two trainings (who goes first alternates too)
# on THREADS threads, and a markdown table gives the medians of the training times, their
# ratio, both test accuracies, iterations and final losses, with the machine it ran on.
# The workload regenerates the same data from the seed on each run (the generator is
# deterministic, whatever the thread count); only its `train` stage is compared.
# Usage: bench/logreg-vs-sklearn.sh
#   (env: BUILD=build, PYTHON=/usr/bin/python3 (needs scikit-learn), ROUNDS=3,
#    THREADS=$(nproc), SAMPLES=100000, FEATURES=500, INFORMATIVE=250, SEED=0)
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-$(nproc)}
SAMPLES=${SAMPLES:-100000}
FEATURES=${FEATURES:-500}
INFORMATIVE=${INFORMATIVE:-250}
SEED=${SEED:-0}
WL=$BUILD/mlbench-workload

if [ ! -x "$WL" ]; then
    echo "logreg-vs-sklearn.sh: $WL not found: build it first" \
         "(cmake --build $BUILD --target mlbench-workload)" >&2
    exit 2
fi
if ! "$PYTHON" -c 'import sklearn, threadpoolctl' 2>/dev/null; then
    echo "logreg-vs-sklearn.sh: $PYTHON has no scikit-learn/threadpoolctl: set PYTHON" \
         "(Debian: /usr/bin/python3 with python3-sklearn)" >&2
    exit 2
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
args="--samples $SAMPLES --features $FEATURES --informative $INFORMATIVE --seed $SEED"
args="$args --threads $THREADS --max-iter 500"
echo "logreg-vs-sklearn.sh: writing the data ($SAMPLES x $FEATURES) to $dir" >&2
# shellcheck disable=SC2086 # $args is a list of options
"$WL" logreg $args --generate-only --save-data "$dir/data" >&2


# One training of ours: appends "key value" lines to $dir/ours.
run_ours() {
    # shellcheck disable=SC2086
    if ! line=$("$WL" logreg $args | grep '^logreg: .* train '); then
        echo "logreg-vs-sklearn.sh: $WL logreg $args failed" >&2
        exit 1
    fi
    {
        printf '%s\n' "$line" | sed -n 's/.* train \([0-9.]*\) s (\([0-9]*\) iterations, \([0-9]*\) evaluations, \([0-9.]*\) ms each = \([0-9.]*\) GB\/s.*/train_s \1\
iterations \2\
evals \3\
eval_ms \4\
eval_gbps \5/p'
        # Absent when X_train is too small for the bandwidth to be measured.
        printf '%s\n' "$line" | sed -n 's/.* GB\/s = \([0-9]*\) % of \([0-9.]*\) GB\/s read bandwidth.*/bw_percent \1\
read_gbps \2/p'
        printf '%s\n' "$line" | sed -n 's/.*; loss \([0-9.]*\), test accuracy \([0-9.]*\), train accuracy \([0-9.]*\);.*/loss \1\
test_accuracy \2\
train_accuracy \3/p'
    } >>"$dir/ours"
    if ! grep -q '^train_s ' "$dir/ours" || ! grep -q '^test_accuracy ' "$dir/ours"; then
        echo "logreg-vs-sklearn.sh: cannot read the workload's summary line: $line" >&2
        exit 1
    fi
}

run_sklearn() {
    "$PYTHON" bench/logreg_peer.py "$dir/data" --threads "$THREADS" --max-iter 500 |
        sed 's/^sklearn_//' >>"$dir/sklearn"
}

: >"$dir/ours"
: >"$dir/sklearn"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
    echo "logreg-vs-sklearn.sh: round $((i + 1)) of $ROUNDS" >&2
    if [ $((i % 2)) -eq 0 ]; then
        run_ours
        run_sklearn
    else
        run_sklearn
        run_ours
    fi
    i=$((i + 1))
done

# med FILE KEY: the median of KEY's values in FILE; first FILE KEY: the first value.
med() { awk -v k="$2" '$1 == k { print $2 }' "$1" | median; }
first() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

ours_s=$(med "$dir/ours" train_s)
sk_s=$(med "$dir/sklearn" train_s)
ratio=$(awk -v a="$sk_s" -v b="$ours_s" 'BEGIN { printf "%.2f", a / b }')
ours_acc=$(med "$dir/ours" test_accuracy)
sk_acc=$(med "$dir/sklearn" test_accuracy)
acc_gap=$(awk -v a="$ours_acc" -v b="$sk_acc" 'BEGIN { d = (a - b) * 100; printf "%+.2f", d }')
speed_ok=$(awk -v r="$ratio" 'BEGIN { print (r >= 3 ? "met" : "NOT met") }')
acc_ok=$(awk -v d="$acc_gap" 'BEGIN { print (d <= 0.5 && d >= -0.5 ? "met" : "NOT met") }')

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<TABLE
| machine | ${model:-unknown}, $(nproc) CPUs |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| OPENBLAS_CORETYPE | ${OPENBLAS_CORETYPE:-(unset)} |
| threads | $THREADS each (scikit-learn's pools: $(first "$dir/sklearn" pools)) |
| data | $SAMPLES x $FEATURES ($INFORMATIVE informative), seed $SEED, 75/25 split |
| scikit-learn | $(first "$dir/sklearn" version) ($PYTHON), X converted to float64 before timing |

| median of $ROUNDS | ours | scikit-learn |
|---|---:|---:|
| train s | $ours_s | $sk_s |
| iterations | $(med "$dir/ours" iterations) | $(med "$dir/sklearn" iterations) |
| objective evaluations | $(med "$dir/ours" evals) | - |
| final loss (sum of log-losses + w'w / 2) | $(med "$dir/ours" loss) | $(med "$dir/sklearn" loss) |
| test accuracy | $ours_acc | $sk_acc |
| train accuracy | $(med "$dir/ours" train_accuracy) | $(med "$dir/sklearn" train_accuracy) |
| ms per evaluation (GB/s; % of read bandwidth) | $(med "$dir/ours" eval_ms) ($(med "$dir/ours" eval_gbps); $(med "$dir/ours" bw_percent) % of $(med "$dir/ours" read_gbps)) | - |

| target | value | |
|---|---:|---|
| speed-up (scikit-learn s / ours s) >= 3 | $ratio | $speed_ok |
| test accuracy within 0.5 point | $acc_gap points | $acc_ok |
TABLE

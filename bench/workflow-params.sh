#!/bin/sh
# workflow-params.sh: how loading a workflow file scales with its number of parameters
# (issue 12: the duplicate-key check compared every key with every earlier one). Generates
# files of N parameters and times `mlbench workflow-exec FILE` (which loads, validates and
# runs one `true` stage), ROUNDS times each; prints the median seconds per N.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
MLBENCH=${MLBENCH:-build/mlbench}
ROUNDS=${ROUNDS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 10000 40000 200000; do
    python3 -c "
import sys
n = int(sys.argv[1])
print('params:')
for i in range(n): print(f'  p{i}: {i}')
print('stages:\n  a: \"true\"')" "$n" > "$dir/wf.yaml"
    for r in $(seq "$ROUNDS"); do
        s=$(date +%s.%N)
        "$MLBENCH" workflow-exec "$dir/wf.yaml" > /dev/null
        e=$(date +%s.%N)
        echo "$e - $s" | bc -l
    done | median | awk -v n="$n" '{ printf "%7d params: %.3f s (median)\n", n, $1 }'
done

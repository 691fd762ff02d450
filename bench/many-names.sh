#!/bin/sh
# many-names.sh: what a workload with very many distinct names costs mlbench (issue 12:
# 20 000 top-level stages open at once took 13.7 s and 1.25 GB to aggregate; 40 000 counters
# 6.5 s). Runs `mlbench run -r 1` of stage_prog's `wide N` (N stages, each on a thread id of
# its own, all open at once) and `counters N`, ROUNDS times each; prints the median seconds
# and the median peak resident memory of mlbench (GNU time), and the result file's size.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
MLBENCH=${MLBENCH:-build/mlbench}
PROG=${STAGE_PROG:-build/tests/integration/stage_prog}
ROUNDS=${ROUNDS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for what in "wide 5000" "wide 20000" "counters 10000" "counters 40000"; do
    for r in $(seq "$ROUNDS"); do
        /usr/bin/time -f "%e %M" -o "$dir/time" \
            "$MLBENCH" run -q -r 1 -w 0 --store "$dir/store" -- "$PROG" $what > /dev/null
        cat "$dir/time"
    done > "$dir/times"
    s=$(cut -d' ' -f1 "$dir/times" | median)
    kb=$(cut -d' ' -f2 "$dir/times" | median)
    bytes=$(ls -l "$dir"/store/runs/*.json | tail -1 | awk '{ print $5 }')
    printf '%-16s %6.2f s  %7.0f MiB peak  result %6.1f MB (medians of %s)\n' \
        "$what" "$s" "$(echo "$kb / 1024" | bc -l)" "$(echo "$bytes / 1000000" | bc -l)" "$ROUNDS"
    rm -rf "$dir/store"
done

# lib.sh: what the benchmark scripts share (sourced after they cd to the repository root).

# Median of the numbers on standard input ("n/a" when there are none).
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) print "n/a"
        else if (NR % 2) print v[(NR + 1) / 2]
        else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# lib.sh: what the benchmark scripts share (sourced after they cd to the repository root).

# Median of the numbers on standard input ("n/a" when there are none).
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) print "n/a"
        else if (NR % 2) print v[(NR + 1) / 2]
        else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# a / b with 2 decimals ("n/a" unless b > 0).
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "n/a" }'
}

# The number after "KEY": in the JSON lines on standard input.
field() {
    sed -n "s/.*\"$1\": \\([-0-9.e+]*\\).*/\\1/p"
}

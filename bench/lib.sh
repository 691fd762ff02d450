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

# A temporary directory $tmp, removed on exit together with the server $server_pid when one
# was started (start_trivial_http).
make_tmp() {
    tmp=$(mktemp -d)
    server_pid=""
    trap cleanup_tmp EXIT INT TERM
}
cleanup_tmp() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    rm -rf "$tmp"
}

# Pins a server and a load generator apart: sets pin_server and pin_gen (taskset prefixes, the
# server on CPU 0 and the generator on the others; empty with one CPU) and pinning (what the
# results say about it). Uses ncpu.
pin_apart() {
    if [ "$ncpu" -ge 2 ]; then
        pin_server="taskset -c 0"
        pin_gen="taskset -c 1-$((ncpu - 1))"
        pinning="server on CPU 0, generator on CPUs 1-$((ncpu - 1)) (taskset)"
    else
        pin_server=""
        pin_gen=""
        pinning="one CPU: server and generator share it"
    fi
}

# Starts $SERVER (bench/trivial-http) with the options "$@" under $pin_server in the background,
# its output in $tmp/server.out; sets server_pid and url ("http://HOST:PORT/"). Exits 1 when it
# has not said it listens within 5 s. The caller's cleanup kills $server_pid.
start_trivial_http() {
    # shellcheck disable=SC2086 # pin_server is a word list
    $pin_server "$SERVER" --listen 127.0.0.1:0 "$@" >"$tmp/server.out" &
    server_pid=$!
    i=0
    while ! grep -q '^listening on ' "$tmp/server.out" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || { echo "$(basename "$0"): trivial-http did not start" >&2; exit 1; }
        sleep 0.05
    done
    url="$(sed -n 's/^listening on //p' "$tmp/server.out")/"
}

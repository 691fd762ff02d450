#!/bin/sh
# Measures what one NVTX event costs a program when libmlbench_nvtx.so turns it into a stage
# marker under `mlbench run --nvtx`, on rings and on datagrams: wall time, user CPU (NVTX, the
# library, the ring or formatting) and system CPU (the datagram) per event, beside the C marker
# client called directly in the same process (the floor), and against NVTX without a tool and
# with the library named outside mlbench (it declines). Prints a markdown table of medians,
# with the machine.
# Usage: bench/nvtx-cost.sh   (env: BUILD=build, REPS=15: runs under mlbench and without it)
set -eu

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-15}
COST=$BUILD/bench/nvtx-cost
MLBENCH=$BUILD/mlbench
LIB=$(pwd)/$BUILD/lib/nvtx/libmlbench_nvtx.so

for f in "$COST" "$MLBENCH" "$LIB"; do
    if [ ! -e "$f" ]; then
        echo "nvtx-cost.sh: $f not found: build first (cmake --build $BUILD); nvtx-cost is" \
             "built only when the NVTX headers of the CUDA toolkit are found" >&2
        exit 2
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The median of the values of key $1 in file $2 ("n/a" when there are none).
med() {
    awk -v k="$1" '$1 == k { print $2 }' "$2" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf (m < 10 ? "%.2f\n" : "%.0f\n"), m }'
}

# NVTX injected the way `mlbench run --nvtx` does it; through env(1) before that option exists.
if "$MLBENCH" run --help 2>&1 | grep -q -- '--nvtx'; then
    set -- --nvtx --
else
    set -- -- env "NVTX_INJECTION64_PATH=$LIB"
fi
# Under mlbench on both transports. 15 000 pairs a case: the 4 cases' 120 000 events fit in a
# default ring, so that none is dropped whatever the receiver does (dropping costs less).
for transport in ring datagram; do
    MLBENCH_MARKER_TRANSPORT=$transport MLBENCH_NVTX_LIBRARY=$LIB "$MLBENCH" run -r "$REPS" \
        --show-output --store "$tmp/store" "$@" "$COST" --pairs "${PAIRS:-15000}" \
        >"$tmp/$transport" 2>&1 || true
    if [ "$(awk '$1 == "nvtx_injected" && $2 == 1' "$tmp/$transport" | wc -l)" -ne "$REPS" ]; then
        echo "nvtx-cost.sh: NVTX was not injected in every run under mlbench; its output:" >&2
        cat "$tmp/$transport" >&2
        exit 1
    fi
    if grep -q "dropped because" "$tmp/$transport"; then
        echo "nvtx-cost.sh: events were dropped (ring full): the figures are not comparable" >&2
        exit 1
    fi
done

i=0
while [ "$i" -lt "$REPS" ]; do
    env -u NVTX_INJECTION64_PATH -u MLBENCH_MARKER_SOCKET "$COST" >>"$tmp/off"
    env -u MLBENCH_MARKER_SOCKET NVTX_INJECTION64_PATH="$LIB" "$COST" >>"$tmp/declined"
    i=$((i + 1))
done

# One table row: label, case, file, target.
row() {
    echo "| $1 | $(med "$2_ns_per_event" "$3") | $(med "$2_user_ns_per_event" "$3") |" \
         "$(med "$2_sys_ns_per_event" "$3") | $4 |"
}

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cat <<TABLE
| machine | ${model:-unknown}, $(nproc) CPUs, $(uname -sr) |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| runs | $REPS of nvtx-cost in each setting (medians) |

| ns per event | wall | user CPU | system CPU | target (wall) |
|---|---:|---:|---:|---:|
$(row "NVTX push/pop, \`mlbench run --nvtx\`, rings" nvtx_push_pop "$tmp/ring" "<= 60")
$(row "NVTX mark, \`mlbench run --nvtx\`, rings" nvtx_mark "$tmp/ring" "-")
$(row "NVTX domain push/pop (registered string), rings" nvtx_domain "$tmp/ring" "-")
$(row "C marker client (mlb_stage_begin/end), same runs, rings" marker "$tmp/ring" "<= 50")
$(row "NVTX push/pop, \`mlbench run --nvtx\`, datagrams" nvtx_push_pop "$tmp/datagram" "<= 1000")
$(row "NVTX mark, \`mlbench run --nvtx\`, datagrams" nvtx_mark "$tmp/datagram" "-")
$(row "NVTX domain push/pop (registered string), datagrams" nvtx_domain "$tmp/datagram" "-")
$(row "C marker client (mlb_stage_begin/end), same runs, datagrams" marker "$tmp/datagram" "-")
$(row "NVTX push/pop without a tool" nvtx_push_pop "$tmp/off" "-")
$(row "NVTX push/pop, library named outside mlbench (declined)" nvtx_push_pop "$tmp/declined" "-")
TABLE

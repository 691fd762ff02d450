#!/bin/sh
# Builds the libFuzzer targets (build-fuzz, clang, MLBENCH_FUZZ=ON) and runs each for SECONDS
# (default 30) on a copy of its seed corpus, so that the committed corpus never changes.
# Fails on any crash, leak, timeout or out-of-memory, naming the target and the reproducer;
# ends with a table: target, executions, execs/s, new coverage features, crashes.
# Usage: tests/fuzz/run.sh [SECONDS]   (TARGETS="markers http" limits the set; JOBS=2)
set -eu
cd "$(dirname "$0")/../.."
seconds="${1:-30}"
case "$seconds" in '' | *[!0-9]*) echo "run.sh: SECONDS '$seconds' is not a whole number" >&2; exit 2 ;; esac
build="${FUZZ_BUILD:-build-fuzz}"
jobs="${JOBS:-2}"
targets="${TARGETS:-markers workflow result prometheus http store_ref options v2 rank_link rings}"
werror="${WERROR:-ON}"

command -v clang >/dev/null 2>&1 || { echo "run.sh: clang not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
CC=clang cmake -S . -B "$build" -DMLBENCH_FUZZ=ON -DMLBENCH_CUDA=OFF -DMLBENCH_WERROR="$werror" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz-targets

work="$(mktemp -d "${TMPDIR:-/tmp}/mlbench-fuzz.XXXXXX")"
keep=0
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

# A .seeds file holds seeds with bytes a text file should not (NUL, not UTF-8), one per line:
# NAME, a space, the bytes with every byte outside printable ASCII as \0ooo (printf %b).
expand_seeds() {
    while IFS= read -r line; do
        case "$line" in '#'* | '') continue ;; esac
        printf '%b' "${line#* }" >"$2/${line%% *}"
    done <"$1"
}

dict_of() {
    case "$1" in
    markers | prometheus) echo tests/fuzz/markers.dict ;;
    result | v2) echo tests/fuzz/json.dict ;;
    workflow) echo tests/fuzz/yaml.dict ;;
    http) echo tests/fuzz/http.dict ;;
    rings) echo tests/fuzz/rings.dict ;;
    *) echo "" ;;
    esac
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=""
table="$work/table"
printf '%-12s %12s %10s %10s %8s\n' target executions execs/s new_ft crashes >"$table"
for t in $targets; do
    exe="$build/fuzz/fuzz_$t"
    [ -x "$exe" ] || { echo "run.sh: no target '$t' ($exe)" >&2; exit 2; }
    dir="$work/$t"
    mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/cwd"
    for f in tests/fuzz/corpus/"$t"/*; do
        case "$f" in
        *.seeds) expand_seeds "$f" "$dir/corpus" ;;
        *) cp "$f" "$dir/corpus/" ;;
        esac
    done
    dict="$(dict_of "$t")"
    log="$dir/log"
    echo "== fuzz_$t: ${seconds}s"
    rc=0
    # cwd: the targets' temporary files; -close_fd_mask=1: what the code under test prints on
    # stdout (stderr stays: the targets' own messages say what an abort() found).
    (cd "$dir/cwd" && "$OLDPWD/$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -detect_leaks=1 -close_fd_mask=1 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/" ${dict:+-dict="$OLDPWD/$dict"} "$dir/corpus") \
        >"$log" 2>&1 || rc=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    ft0="$(sed -n 's/^#[0-9]*[[:space:]]*INITED .* ft: \([0-9]*\).*/\1/p' "$log" | head -n 1)"
    ft1="$(sed -n 's/^#[0-9]*[[:space:]].* ft: \([0-9]*\).*/\1/p' "$log" | tail -n 1)"
    crashes="$(find "$dir/artifacts" -type f | wc -l)"
    printf '%-12s %12s %10s %10s %8s\n' "$t" "${runs:-?}" "${speed:-?}" \
        "$(( ${ft1:-0} - ${ft0:-0} ))" "$crashes" >>"$table"
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        keep=1
        failed="$failed $t"
        echo "run.sh: fuzz_$t FAILED (exit $rc): log $log" >&2
        grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|fuzz_[a-z_]*:|Test unit written' "$log" | head -n 20 >&2 || true
        for a in "$dir"/artifacts/*; do
            [ -f "$a" ] && echo "run.sh: reproducer: $a (run: $exe $a)" >&2
        done
    fi
done
echo
cat "$table"
if [ -n "$failed" ]; then
    echo "run.sh: failed:$failed (logs and reproducers kept in $work)" >&2
    exit 1
fi

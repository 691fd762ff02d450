#!/bin/sh
# Packs what the GPU machine needs to run mlbench's CUDA checks into one folder (default
# build-gpu/): the binaries of a build that found the CUDA toolkit (mlbench, mlbench-workload,
# libmlbench_wl_cuda.so, the test_cnn_cuda unit test) and the shared libraries they link that a bare CUDA machine may lack
# (jansson, SQLite, libyaml, libmicrohttpd, TurboJPEG, OpenBLAS...), from `ldd`. libc, the CUDA
# libraries and the driver are left to that machine. bench/gpu-check.sh runs from the folder.
# Usage: scripts/gpu-bundle.sh [BUILD [OUT]]   (defaults: build build-gpu)
set -eu
BUILD=${1:-build}
OUT=${2:-build-gpu}
for f in mlbench mlbench-workload libmlbench_wl_cuda.so tests/workloads/test_cnn_cuda bench/nvml-cost; do
    [ -e "$BUILD/$f" ] || { echo "gpu-bundle.sh: $BUILD/$f is missing: build with the CUDA toolkit first" >&2; exit 2; }
done
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$BUILD/mlbench" "$BUILD/mlbench-workload" "$BUILD/libmlbench_wl_cuda.so" \
    "$BUILD/tests/workloads/test_cnn_cuda" "$OUT/"
cp "$BUILD/bench/nvml-cost" "$OUT/" # NVML's cost per call (bench/gpu-check.sh, step 5)
ldd "$BUILD/mlbench" "$BUILD/mlbench-workload" "$BUILD/libmlbench_wl_cuda.so" \
    "$BUILD/tests/workloads/test_cnn_cuda" |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcu|/libnv' |
    while read -r lib; do cp -L "$lib" "$OUT/lib/"; done
echo "gpu-bundle.sh: $OUT: $(ls "$OUT" | tr '\n' ' ')+ $(ls "$OUT/lib" | wc -l) libraries ($(du -sh "$OUT" | cut -f1))"

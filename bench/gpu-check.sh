#!/bin/sh
# The GPU machine's checks, in one call (device time is scarce): correctness and TFLOP/s of the
# CUDA GEMM by precision, the same under `mlbench run` (NVML sampling, GPU verdicts), PyTorch's
# matrix product side by side on the same GPU, and the GPU cases of the test suite.
# Prepare here: cmake --build build && scripts/gpu-bundle.sh build build-gpu; then run on the
# GPU machine from the repository root with build-gpu carried: bench/gpu-check.sh build-gpu.
# Writes its files to $OUT (the device tool's output folder) or /tmp/gpu-check.
set -u
B=${1:-build-gpu}
R=${OUT:-/tmp/gpu-check}
mkdir -p "$R"
export LD_LIBRARY_PATH="$PWD/$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
echo "== machine: $(date -u +%Y-%m-%dT%H:%MZ), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv

echo "== 0 the CUDA CNN against the CPU one, step by step (tests/workloads/test_cnn_cuda.c)"
MLBENCH_CUDA_BACKEND="$PWD/$B/libmlbench_wl_cuda.so" "$B/test_cnn_cuda" 2>&1 | tee "$R/test_cnn_cuda.txt"

echo "== 0b imgclf on the GPU and the CPU, same seed and batches (synthetic 32x32x3: no Fashion-MNIST package there)"
syn="--dataset synthetic --image-size 32 --train-images 20000 --val-images 2000 --data-dir $R/syn --epochs 2 --batch 256 --loader-threads 4 --prefetch 4"
"$B/mlbench-workload" imgclf $syn --prepare-only
for dev in cuda cpu; do "$B/mlbench-workload" imgclf $syn --device $dev | tee -a "$R/imgclf.txt"; done
"$B/mlbench" run -r 3 -l imgclf-cuda --store "$R/store" -- "$B/mlbench-workload" imgclf $syn --device cuda | tee "$R/imgclf-run.txt"
rm -rf "$R/syn"

echo "== 1 gemm by precision (checked against a double reference first)"
"$B/mlbench-workload" gemm --device cuda --sizes 1024,4096,8192 --reps 20 | tee "$R/gemm.txt"

echo "== 1b MLP block (1024 -> 4096 -> 1024), batch 1 and 256, fp32/fp16/bf16, without and with a CUDA graph"
"$B/mlbench-workload" mlp --device cuda | tee "$R/mlp.txt"
"$B/mlbench-workload" mlp --device cuda --graph | tee "$R/mlp-graph.txt"

echo "== 1c logreg 100 000 x 500 (75 000 training rows): CPU and GPU side by side, then PyTorch's L-BFGS on the GPU on the same data"
"$B/mlbench-workload" logreg --save-data "$R/lr" --generate-only
for dev in cpu cuda cpu cuda; do "$B/mlbench-workload" logreg --device $dev | tee -a "$R/logreg.txt"; done
python3 bench/logreg_torch_peer.py "$R/lr" | tee "$R/logreg-torch.txt"
"$B/mlbench" run -r 3 -l logreg-cpu --store "$R/store" -- "$B/mlbench-workload" logreg --device cpu > /dev/null
"$B/mlbench" run -r 3 -l logreg-cuda --store "$R/store" -- "$B/mlbench-workload" logreg --device cuda > /dev/null
"$B/mlbench" compare --store "$R/store" logreg-cpu logreg-cuda | tee "$R/logreg-compare.txt"
rm -f "$R"/lr.*.npy

echo "== 2 the same under mlbench run (bf16, 8192): GPU sampling and verdict"
"$B/mlbench" run -r 3 --store "$R/store" -o "$R/gemm-run.json" -- \
    "$B/mlbench-workload" gemm --device cuda --precision bf16 --sizes 8192 --reps 200 |
    tee "$R/gemm-run.txt"

echo "== 3 PyTorch's matrix product on the same GPU (median of 20 after warm-up, synchronised)"
python3 - <<'PY' | tee "$R/torch-gemm.txt"
import statistics, time, torch
n = 8192
for name, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                       ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=dt) * 2 - 1
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); a @ b; e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    t = statistics.median(ts)
    print(f"  torch {name:5} {n:6}  {t * 1e3:10.3f} ms  {2 * n ** 3 / t / 1e12:9.2f} TFLOP/s")
PY

echo "== 5 NVML: the cost of each call the sampler makes (idle GPU, then busy), the GPM figures of step 2, the sampler's overhead at 10 s, 100 ms and 10 ms"
"$B/nvml-cost" 200 | tee "$R/nvml-cost-idle.txt"
"$B/mlbench-workload" gemm --device cuda --precision bf16 --sizes 8192 --reps 2000 > /dev/null &
sleep 2; "$B/nvml-cost" 200 | tee "$R/nvml-cost-busy.txt"; wait
python3 - "$R/gemm-run.json" <<'PY' | tee "$R/gpm.txt"
import json, sys
r = json.load(open(sys.argv[1]))
print("  gpus:", [{k: g.get(k) for k in ("name", "gpm", "sm_clock_max_hertz")} for g in r["environment"].get("gpus", [])])
for st in r["summary"]["stages"] + [{"name": "total", "resources": r["summary"]["resources"]}]:
    m = {x["metric"]: x["mean"] for x in st["resources"] if x["labels"] == 'gpu="0"'}
    print(f'  {st["name"]:12}', {k: m.get(k) for k in ("gpu_utilization_ratio", "gpu_sm_active_ratio", "gpu_tensor_active_ratio", "gpu_dram_active_ratio")})
print("  gpu_clock:", r["summary"].get("gpu_clock"))
for v in r["analysis"]["verdicts"]:
    print(f'  {v["stage"]:12} {v["rule"]}: {v["evidence"]}')
PY
for iv in 10s 100ms 10ms; do
    "$B/mlbench" run -q -r 5 --interval $iv -l "sampler-$iv" --store "$R/store" -- \
        "$B/mlbench-workload" gemm --device cuda --precision bf16 --sizes 8192 --reps 200
done
"$B/mlbench" compare --store "$R/store" sampler-10s sampler-100ms sampler-10ms | tee "$R/sampler-cost.txt"

echo "== 4 the test suite's GPU cases"
cd tests/integration && MLBENCH="$OLDPWD/$B/mlbench" WORKLOAD="$OLDPWD/$B/mlbench-workload" \
    python3 -m unittest -v test_workloads.DeviceWorkloadTest 2>&1 | tee "$R/tests.txt"

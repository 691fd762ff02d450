"""cnn_peer: PyTorch's training throughput for the reference small CNN, measured like
bench/cnn_throughput.c (the same model, bench/torch_model.py's small_cnn, any input shape and
thread count): --warmup steps, then 5 timed repetitions of --steps steps on one seeded random
batch; prints one JSON line with the median images_per_s, step_ms and achieved gflops (the
same GEMM FLOP count as cnn_flops_train in workloads/imgclf/cnn_cpu.c).

--precision bf16 runs the forward pass and the loss under torch.autocast("cpu",
dtype=torch.bfloat16), PyTorch's mixed precision: convolutions and linear layers in bf16 (oneDNN's
AVX512_BF16 kernels where the CPU has them), fp32 weights and optimiser. --channels-last keeps
the model and the batch in torch.channels_last (NHWC, the layout of ours), with which oneDNN uses
its blocked kernels: on the 2-CPU Zen 5 VM PyTorch 1.13's bf16 runs about 5x faster with it
(8 400 against 1 700 images/s at 28x28x1, batch 128, 2 threads), its fp32 slower.

Usage: /usr/bin/python3 bench/cnn_peer.py [--height 32] [--width 32] [--channels 3]
           [--classes 10] [--batch 32] [--threads 1] [--steps 20] [--warmup 3] [--seed 1]
           [--precision fp32|bf16] [--channels-last]
"""
import contextlib
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn

from torch_model import small_cnn

REPS = 5


def flops_train(h, w, c, classes):
    """GEMM FLOPs of one image's training step (2 per multiply-add), as cnn_flops_train."""
    p1 = h * w
    conv1 = 2 * p1 * 9 * c * 32
    forward = conv1 + 2 * (p1 // 4 * 9 * 32 * 64 + 64 * (p1 // 16) * 128 + 128 * classes)
    return 3 * forward - conv1


def prime_fp32(a):
    """Two fp32 training steps of a throwaway model of the same shape. PyTorch 1.13's bf16 path
    runs 3-4x faster in a process that has trained in fp32 first (measured on the 2-CPU Zen 5 VM,
    28x28x1, batch 128, 2 threads: 2 000-3 000 against 7 000-10 000 images/s, both layouts; the
    cause is inside oneDNN, not found): the peer gets its faster state."""
    torch.manual_seed(a.seed + 1)
    net = small_cnn(a.height, a.width, a.channels, a.classes)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(a.batch, a.channels, a.height, a.width)
    y = torch.randint(0, a.classes, (a.batch,))
    for _ in range(2):
        opt.zero_grad(set_to_none=True)
        nn.CrossEntropyLoss()(net(x), y).backward()
        opt.step()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in (("height", 32), ("width", 32), ("channels", 3), ("classes", 10),
                          ("batch", 32), ("threads", 1), ("steps", 20), ("warmup", 3),
                          ("seed", 1)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--channels-last", action="store_true")
    a = ap.parse_args()
    if a.height % 4 or a.width % 4:
        ap.error(f"--height {a.height} and --width {a.width} must be multiples of 4")
    torch.set_num_threads(a.threads)
    if a.precision == "bf16":
        prime_fp32(a)
    torch.manual_seed(a.seed)

    net = small_cnn(a.height, a.width, a.channels, a.classes)
    lossf = nn.CrossEntropyLoss()
    x = torch.randn(a.batch, a.channels, a.height, a.width)
    y = torch.randint(0, a.classes, (a.batch,))
    if a.channels_last:
        net = net.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    # the optimiser after the move, as PyTorch's channels-last recipe has it: made before it,
    # bf16 training ran 4x slower here (PyTorch 1.13)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def autocast():
        if a.precision == "bf16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = lossf(net(x), y)
        loss.backward()
        opt.step()
        return loss

    loss = None
    for _ in range(a.warmup):
        loss = step()
    reps = []
    for _ in range(REPS):
        t = time.perf_counter()
        for _ in range(a.steps):
            loss = step()
        reps.append(time.perf_counter() - t)
    reps.sort()
    step_s = statistics.median(reps) / a.steps
    flops = flops_train(a.height, a.width, a.channels, a.classes) * a.batch
    print(json.dumps({
        "bench": "cnn_train", "impl": "torch", "height": a.height, "width": a.width,
        "channels": a.channels, "classes": a.classes, "batch": a.batch, "threads": a.threads,
        "precision": a.precision, "channels_last": a.channels_last,
        "steps": a.steps, "warmup": a.warmup, "reps": REPS,
        "images_per_s": round(a.batch / step_s, 1), "step_ms": round(1e3 * step_s, 3),
        "gflops": round(flops / step_s * 1e-9, 2),
        "min_step_ms": round(1e3 * reps[0] / a.steps, 3),
        "max_step_ms": round(1e3 * reps[-1] / a.steps, 3),
        "last_loss": round(float(loss), 5) if loss is not None else None,
        "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()

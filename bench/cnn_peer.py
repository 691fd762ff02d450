"""cnn_peer: PyTorch's training throughput for the reference small CNN, measured like
bench/cnn_throughput.c (the same model, bench/torch_model.py's small_cnn, any input shape and
thread count): --warmup steps, then 5 timed repetitions of --steps steps on one seeded random
batch; prints one JSON line with the median images_per_s, step_ms and achieved gflops (the
same GEMM FLOP count as cnn_flops_train in workloads/imgclf/cnn_cpu.c).

Usage: /usr/bin/python3 bench/cnn_peer.py [--height 32] [--width 32] [--channels 3]
           [--classes 10] [--batch 32] [--threads 1] [--steps 20] [--warmup 3] [--seed 1]
"""
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in (("height", 32), ("width", 32), ("channels", 3), ("classes", 10),
                          ("batch", 32), ("threads", 1), ("steps", 20), ("warmup", 3),
                          ("seed", 1)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    if a.height % 4 or a.width % 4:
        ap.error(f"--height {a.height} and --width {a.width} must be multiples of 4")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    net = small_cnn(a.height, a.width, a.channels, a.classes)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    x = torch.randn(a.batch, a.channels, a.height, a.width)
    y = torch.randint(0, a.classes, (a.batch,))

    def step():
        opt.zero_grad(set_to_none=True)
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
        "steps": a.steps, "warmup": a.warmup, "reps": REPS,
        "images_per_s": round(a.batch / step_s, 1), "step_ms": round(1e3 * step_s, 3),
        "gflops": round(flops / step_s * 1e-9, 2),
        "min_step_ms": round(1e3 * reps[0] / a.steps, 3),
        "max_step_ms": round(1e3 * reps[-1] / a.steps, 3),
        "last_loss": round(float(loss), 5) if loss is not None else None,
        "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()

"""PyTorch's L-BFGS on the GPU on the data `mlbench-workload logreg --save-data PREFIX` wrote
(full batch, strong Wolfe, history 10, the same objective as logreg's, docs/logreg.md, scaled
by 1/n: mean log-loss + 0.5/n ||w||^2, i.e. scikit-learn's C = 1 scaled by 1/n), fp32.
Median of 3 timed fits after one warm-up, synchronised. Prints one JSON line.

Usage: logreg_torch_peer.py PREFIX"""
import json
import statistics
import sys
import time

import numpy as np
import torch

prefix = sys.argv[1]
dev = "cuda" if torch.cuda.is_available() else "cpu"
Xtr = torch.tensor(np.load(prefix + ".X_train.npy"), dtype=torch.float32, device=dev)
ytr = torch.tensor(np.load(prefix + ".y_train.npy"), dtype=torch.float32, device=dev)
Xte = torch.tensor(np.load(prefix + ".X_test.npy"), dtype=torch.float32, device=dev)
yte = np.load(prefix + ".y_test.npy")


def fit():
    w = torch.zeros(Xtr.shape[1], device=dev, requires_grad=True)
    b = torch.zeros(1, device=dev, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=500, tolerance_grad=1e-4, tolerance_change=0,
                            history_size=10, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        z = Xtr @ w + b
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z, ytr) + \
            0.5 / len(ytr) * (w * w).sum()
        loss.backward()
        return loss
    opt.step(closure)
    return w, b


fit()
if dev == "cuda":
    torch.cuda.synchronize()
times = []
for _ in range(3):
    t = time.perf_counter()
    w, b = fit()
    if dev == "cuda":
        torch.cuda.synchronize()
    times.append(time.perf_counter() - t)
acc = float(((Xte @ w + b > 0).cpu().numpy() == (yte > 0.5)).mean())
print(json.dumps({"bench": "logreg_torch_lbfgs", "device": dev, "seconds": statistics.median(times),
                  "min": min(times), "test_acc": acc, "n_train": int(Xtr.shape[0])}))

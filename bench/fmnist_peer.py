"""PyTorch peer of `mlbench-workload imgclf` on Fashion-MNIST (bench/time-to-accuracy.sh): the
same CNN (bench/torch_model.py), optimiser (SGD, momentum 0.9, lr 0.02 x batch/32 capped at 0.1, linear warm-up over
the first 5 % of the steps, cosine decay per step), augmentation (random crop from the image zero-padded by 2, horizontal flip) and
normalisation, with the whole dataset resident in memory as tensors (read from Debian's IDX
files: no JPEG decoding -- an advantage over our run from files). Evaluates the test set after
every epoch. Prints one JSON line: seconds to the target accuracy, final accuracy, images/s.

Usage: fmnist_peer.py BATCH EPOCHS THREADS [SEED]"""
import gzip
import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn

from torch_model import small_cnn

batch, epochs, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
torch.set_num_threads(threads)
torch.manual_seed(seed)
root = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(f"{root}/{name}", "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def normalise(a):
    return ((torch.from_numpy(a.astype(np.float32)) / 255 - 0.2860) / 0.3530).unsqueeze(1)


xtr, ytr = normalise(idx("train-images-idx3-ubyte.gz")), torch.from_numpy(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
xte, yte = normalise(idx("t10k-images-idx3-ubyte.gz")), torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))
net = small_cnn(28, 28, 1, 10)
lr0 = min(0.1, 0.02 * batch / 32)
opt = torch.optim.SGD(net.parameters(), lr=lr0, momentum=0.9)
lossf = nn.CrossEntropyLoss()
pad_value = (0 - 0.2860) / 0.3530  # black padding, normalised
padded = torch.nn.functional.pad(xtr, (2, 2, 2, 2), value=pad_value)
n = xtr.shape[0]
total_steps = epochs * ((n + batch - 1) // batch)
warmup = max(1, total_steps // 20)  # linear warm-up over the first 5 % of the steps
gen = torch.Generator().manual_seed(seed)

t0 = time.perf_counter()
train_s, step, reached, acc = 0.0, 0, None, 0.0
for epoch in range(epochs):
    perm = torch.randperm(n, generator=gen)
    for i in range(0, n, batch):
        idxs = perm[i:i + batch]
        k = len(idxs)
        ox = torch.randint(0, 5, (k,), generator=gen)
        oy = torch.randint(0, 5, (k,), generator=gen)
        flip = torch.rand(k, generator=gen) < 0.5
        xb = torch.stack([padded[j, :, oy[m]:oy[m] + 28, ox[m]:ox[m] + 28]
                          for m, j in enumerate(idxs.tolist())])
        xb[flip] = xb[flip].flip(3)
        for g in opt.param_groups:
            g["lr"] = 0.5 * lr0 * (1 + math.cos(math.pi * step / total_steps)) * min(1, (step + 1) / warmup)
        ts = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = lossf(net(xb), ytr[idxs])
        loss.backward()
        opt.step()
        train_s += time.perf_counter() - ts
        step += 1
    net.eval()
    with torch.no_grad():
        correct = sum(int((net(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum())
                      for i in range(0, len(yte), 1000))
    net.train()
    acc = correct / len(yte)
    if reached is None and acc >= 0.9:
        reached = time.perf_counter() - t0
print(json.dumps({"batch": batch, "epochs": epochs, "threads": threads,
                  "time_to_90_s": reached, "accuracy": acc,
                  "total_s": time.perf_counter() - t0,
                  "train_images_per_s": epochs * n / train_s}))

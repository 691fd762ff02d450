"""train.py: stage 3 of examples/workflow: fits a softmax regression on the training images by
mini-batch SGD; each epoch is a marker stage (nested under the workflow's `train` stage) with
its loss as a counter. Writes model.pickle."""

import argparse
import math
import pickle
import random

from common import CLASSES, marker, path

BATCH = 32
LEARNING_RATE = 0.05


def probabilities(w, b, x):
    z = [bk + sum(wj * xj for wj, xj in zip(wk, x)) for wk, bk in zip(w, b)]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    total = sum(e)
    return [v / total for v in e]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    with open(path(args.dir, "train.pickle"), "rb") as f:
        x, y = pickle.load(f)
    k, d = len(CLASSES), len(x[0])
    w = [[0.0] * d for _ in range(k)]
    b = [0.0] * k
    rng = random.Random(args.seed)
    order = list(range(len(x)))
    marker.meta("batch_size", BATCH)
    marker.meta("model", "softmax_regression")
    for epoch in range(1, args.epochs + 1):
        with marker.stage("epoch"):
            rng.shuffle(order)
            loss = 0.0
            for start in range(0, len(order), BATCH):
                batch = order[start:start + BATCH]
                gw = [[0.0] * d for _ in range(k)]
                gb = [0.0] * k
                for i in batch:
                    p = probabilities(w, b, x[i])
                    loss -= math.log(max(p[y[i]], 1e-30))
                    for c in range(k):
                        err = p[c] - (c == y[i])
                        gb[c] += err
                        gc = gw[c]
                        for j, xj in enumerate(x[i]):
                            gc[j] += err * xj
                step = LEARNING_RATE / len(batch)
                for c in range(k):
                    b[c] -= step * gb[c]
                    w[c] = [wj - step * gj for wj, gj in zip(w[c], gw[c])]
            marker.counter("images", len(x))
            marker.counter("loss", loss / len(x))
        print(f"train: epoch {epoch} loss {loss / len(x):.4f}")
    with open(path(args.dir, "model.pickle"), "wb") as f:
        pickle.dump((w, b), f)


if __name__ == "__main__":
    main()

"""preprocess.py: stage 2 of examples/workflow: reads the raw images, scales pixels to [0, 1],
standardises every pixel with the training split's mean and deviation, and splits off the last
fifth for evaluation (train.pickle, test.pickle)."""

import argparse
import math
import pickle

from common import SIDE, path


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    with open(path(args.dir, "images.u8"), "rb") as f:
        raw = f.read()
    with open(path(args.dir, "labels.u8"), "rb") as f:
        labels = f.read()
    n, d = len(labels), SIDE * SIDE
    x = [[raw[i * d + j] / 255.0 for j in range(d)] for i in range(n)]
    n_train = n - n // 5
    mean = [sum(r[j] for r in x[:n_train]) / n_train for j in range(d)]
    sd = [math.sqrt(sum((r[j] - mean[j]) ** 2 for r in x[:n_train]) / n_train) or 1.0
          for j in range(d)]
    x = [[(v - m) / s for v, m, s in zip(r, mean, sd)] for r in x]
    for name, part in (("train", slice(0, n_train)), ("test", slice(n_train, n))):
        with open(path(args.dir, f"{name}.pickle"), "wb") as f:
            pickle.dump((x[part], list(labels[part])), f)
    print(f"preprocess: {n_train} training and {n - n_train} test images")


if __name__ == "__main__":
    main()

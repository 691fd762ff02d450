"""load.py: stage 1 of examples/workflow: makes a small image data set and stores it the way
data sets are stored on disk: raw 8-bit pixels (images.u8) and one label byte per image
(labels.u8). Four classes of 8x8 grey images: a horizontal bar, a vertical bar, a diagonal, a
ring, each with noise and a random position. Deterministic for a given --seed."""

import argparse
import random

from common import CLASSES, SIDE, marker, path


def pixels(label, at):
    """The (row, column) pixels of a class's shape; `at` shifts the bars."""
    last = SIDE - 1
    if label == 0:
        return [(at, i) for i in range(SIDE)]
    if label == 1:
        return [(i, at) for i in range(SIDE)]
    if label == 2:
        return [(i, i) for i in range(SIDE)]
    ring = (1, last - 1)
    return [(r, c) for r in range(1, last) for c in range(1, last) if r in ring or c in ring]


def draw(rng, label):
    """One noisy image of class `label`, as SIDE * SIDE bytes, row by row."""
    img = [[rng.randrange(0, 110) for _ in range(SIDE)] for _ in range(SIDE)]
    for r, c in pixels(label, rng.randrange(1, SIDE - 1)):
        img[r][c] = min(255, img[r][c] + rng.randrange(30, 120))
    return bytes(v for row in img for v in row)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    labels = bytes(rng.randrange(len(CLASSES)) for _ in range(args.images))
    with open(path(args.out, "images.u8"), "wb") as f:
        for label in labels:
            f.write(draw(rng, label))
    with open(path(args.out, "labels.u8"), "wb") as f:
        f.write(labels)
    marker.meta("dataset", f"synthetic_{SIDE}x{SIDE}_{len(CLASSES)}_classes")
    print(f"load: {args.images} images in {args.out}")


if __name__ == "__main__":
    main()

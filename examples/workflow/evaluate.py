"""evaluate.py: stage 4 of examples/workflow: the accuracy of the trained model on the held-out
images, as a counter and in metrics.json."""

import argparse
import json
import pickle

from common import marker, path
from train import probabilities


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    with open(path(args.dir, "model.pickle"), "rb") as f:
        w, b = pickle.load(f)
    with open(path(args.dir, "test.pickle"), "rb") as f:
        x, y = pickle.load(f)
    correct = 0
    for xi, yi in zip(x, y):
        p = probabilities(w, b, xi)
        correct += max(range(len(p)), key=p.__getitem__) == yi
    accuracy = correct / len(x)
    marker.counter("eval_images", len(x))
    marker.counter("accuracy", accuracy)
    with open(path(args.dir, "metrics.json"), "w") as f:
        json.dump({"accuracy": accuracy, "test_images": len(x)}, f)
    print(f"evaluate: accuracy {accuracy:.4f} on {len(x)} images")


if __name__ == "__main__":
    main()

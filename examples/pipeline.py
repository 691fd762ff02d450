"""pipeline.py: a small, real ML workflow in pure Python, marked with mlbench_marker.

Four stages: `load` generates a synthetic 4-class data set (Gaussian clusters, 8 features on
different scales), writes it to a temporary CSV file and parses it back; `preprocess`
standardises the features with the training split's mean and deviation; `train` fits a softmax
regression by mini-batch SGD; `evaluate` measures accuracy on the held-out split. Deterministic
for a given --seed. Counters: `samples` (training samples) and `loss` per epoch,
`eval_samples` and `accuracy` at the end. The Python twin of pipeline.c, benchmarked by
`make run`.

Usage: python3 examples/pipeline.py [--epochs N] [--seed N]
"""

import math
import os
import random
import sys
import tempfile

try:
    import mlbench_marker as marker
except ImportError:  # run from a checkout without PYTHONPATH=python
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import mlbench_marker as marker

N_TRAIN = 10000
N_TEST = 2500
N_FEATURES = 8
N_CLASSES = 4
BATCH_SIZE = 16
LEARNING_RATE = 0.1
MAX_EPOCHS = 1000


def usage(out):
    print("usage: pipeline.py [--epochs N] [--seed N]\n"
          f"  --epochs N  training epochs, 1..{MAX_EPOCHS} (default 10)\n"
          "  --seed N    seed of the synthetic data and the shuffling (default 42)", file=out)


def parse_option(option, text, low, high):
    """The integer value of `option` in [low, high]; otherwise names the value and exits 2."""
    if text is None:
        print(f"pipeline.py: {option} needs a value", file=sys.stderr)
        usage(sys.stderr)
        sys.exit(2)
    if not (text.isascii() and text.isdigit() and low <= int(text) <= high):
        print(f"pipeline.py: invalid {option} value {text!r}: expected an integer from {low} "
              f"to {high}", file=sys.stderr)
        usage(sys.stderr)
        sys.exit(2)
    return int(text)


def parse_args(argv):
    epochs, seed = 10, 42
    i = 1
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--epochs":
            epochs = parse_option(arg, value, 1, MAX_EPOCHS)
            i += 2
        elif arg == "--seed":
            seed = parse_option(arg, value, 0, 2 ** 64 - 1)
            i += 2
        elif arg in ("--help", "-h"):
            usage(sys.stdout)
            sys.exit(0)
        else:
            print(f"pipeline.py: unknown argument {arg!r}", file=sys.stderr)
            usage(sys.stderr)
            sys.exit(2)
    return epochs, seed


def generate(rng, n, centres):
    """n samples (features, label) around the class centres; feature j scaled and shifted."""
    rows = []
    for _ in range(n):
        k = rng.randrange(N_CLASSES)
        x = [(centres[k][j] + rng.gauss(0.0, 1.0)) * (1 + j % 3) + 5.0 * (j % 4)
             for j in range(N_FEATURES)]
        rows.append((x, k))
    return rows


@marker.stage("load")
def load(seed):
    """Generates the data set, writes it to a temporary CSV file and parses it back."""
    rng = random.Random(seed)
    centres = [[1.5 * rng.gauss(0.0, 1.0) for _ in range(N_FEATURES)] for _ in range(N_CLASSES)]
    rows = generate(rng, N_TRAIN + N_TEST, centres)
    with tempfile.TemporaryFile("w+", encoding="ascii") as f:
        for x, k in rows:
            f.write(",".join(repr(v) for v in x) + f",{k}\n")
        f.seek(0)
        parsed = []
        for line in f:
            fields = line.split(",")
            parsed.append(([float(v) for v in fields[:-1]], int(fields[-1])))
    return parsed[:N_TRAIN], parsed[N_TRAIN:]


@marker.stage("preprocess")
def preprocess(train, test):
    """Standardises every feature with the training split's statistics."""
    n = len(train)
    mean = [sum(x[j] for x, _ in train) / n for j in range(N_FEATURES)]
    sd = [math.sqrt(sum((x[j] - mean[j]) ** 2 for x, _ in train) / n) or 1.0
          for j in range(N_FEATURES)]
    return ([([(v - m) / s for v, m, s in zip(x, mean, sd)], k) for x, k in train],
            [([(v - m) / s for v, m, s in zip(x, mean, sd)], k) for x, k in test])


def probabilities(w, b, x):
    """Softmax of the class scores of one sample."""
    z = [bk + sum(wk[j] * x[j] for j in range(N_FEATURES)) for wk, bk in zip(w, b)]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    total = sum(e)
    return [v / total for v in e]


@marker.stage("train")
def train_model(train, epochs, seed):
    """Softmax regression by mini-batch SGD on a shuffled order each epoch."""
    rng = random.Random(seed ^ 0x5EED)
    w = [[0.0] * N_FEATURES for _ in range(N_CLASSES)]
    b = [0.0] * N_CLASSES
    order = list(range(len(train)))
    for epoch in range(1, epochs + 1):
        rng.shuffle(order)
        loss = 0.0
        for start in range(0, len(order), BATCH_SIZE):
            batch = order[start:start + BATCH_SIZE]
            gw = [[0.0] * N_FEATURES for _ in range(N_CLASSES)]
            gb = [0.0] * N_CLASSES
            for i in batch:
                x, y = train[i]
                p = probabilities(w, b, x)
                loss -= math.log(max(p[y], 1e-30))
                for k in range(N_CLASSES):
                    err = p[k] - (k == y)
                    gb[k] += err
                    gk = gw[k]
                    for j in range(N_FEATURES):
                        gk[j] += err * x[j]
            step = LEARNING_RATE / len(batch)
            for k in range(N_CLASSES):
                b[k] -= step * gb[k]
                wk, gk = w[k], gw[k]
                for j in range(N_FEATURES):
                    wk[j] -= step * gk[j]
        loss /= len(train)
        marker.counter("samples", len(train))
        marker.counter("loss", loss)
        print(f"epoch {epoch} loss {loss:.4f}")
    return w, b


@marker.stage("evaluate")
def evaluate(model, test):
    """Accuracy on the held-out split."""
    w, b = model
    correct = 0
    for x, y in test:
        p = probabilities(w, b, x)
        correct += max(range(N_CLASSES), key=p.__getitem__) == y
    marker.counter("eval_samples", len(test))
    accuracy = correct / len(test)
    marker.counter("accuracy", accuracy)
    return accuracy


def main(argv):
    epochs, seed = parse_args(argv)
    marker.meta("model", "softmax_regression")
    marker.meta("device", "cpu")
    marker.meta("dataset", f"synthetic_gaussian_{N_CLASSES}x{N_FEATURES}")
    marker.meta("batch_size", BATCH_SIZE)
    marker.meta("train_samples", N_TRAIN)
    marker.meta("test_samples", N_TEST)
    marker.meta("epochs", epochs)
    marker.meta("seed", seed)
    train, test = load(seed)
    train, test = preprocess(train, test)
    model = train_model(train, epochs, seed)
    accuracy = evaluate(model, test)
    print(f"accuracy {accuracy:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

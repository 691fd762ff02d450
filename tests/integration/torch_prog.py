"""A small PyTorch training loop for test_torch.py (issue 13): a Dataset with CPU work per item,
a DataLoader with num_workers=2, torch.set_num_threads(2), a few steps of a small MLP.

    torch_prog.py [--markers] [--steps N]

With --markers it uses the Python marker client (stages data_wait and step, the DataLoader
passed to mlbench_marker.dataloader); without, it is a plain script that knows nothing of
mlbench."""
import argparse
import sys

import torch
from torch.utils.data import DataLoader, Dataset

THREADS = 2
WORKERS = 2
BATCH = 32


class Noisy(Dataset):
    """Items made on the fly: a few small matrix products per item keep a worker busy."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(64, 64, generator=g)
        for _ in range(4):
            x = torch.tanh(x @ x.T / 64)
        return x[0], int(i % 10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--markers", action="store_true")
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(THREADS)
    loader = DataLoader(Noisy(args.steps * BATCH), batch_size=BATCH, num_workers=WORKERS)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()

    if args.markers:
        import mlbench_marker as m
        m.meta("batch_size", BATCH)
        m.meta("device", "cpu")
        loader = m.dataloader(loader)
        begin, end = m.begin, m.end
    else:
        begin = end = lambda name: None

    it = iter(loader)
    for _ in range(args.steps):
        begin("data_wait")
        try:
            x, y = next(it)
        except StopIteration:
            end("data_wait")
            break
        end("data_wait")
        begin("step")
        for _ in range(8):  # enough compute per batch for the step to be sampled
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        end("step")
    print(f"loss {float(loss):.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""A training loop on the CPU whose DataLoader makes its batches on the training thread
(num_workers=0), for dataloader_bound (docs/FINDINGS.md). No profiler, no NVTX in sight.

    python dataloader_loop.py heavy   # __getitem__ computes about 1 ms per sample, in Python
    python dataloader_loop.py cheap   # __getitem__ returns a tensor made beforehand

Both run 12 batches of 4 samples through the same small model, and each step also does Python
work of its own (bookkeeping, as training loops do) of a quarter of a heavy sample's. A heavy
batch is Python work like the step's, so that their ratio does not depend on how loaded the
machine is: on the shared 2-core test machine a heavy loader took 39 % of the step time with
half this work per sample (torch's own ops in the step slow down more than Python under load),
and a cheap one 0.3 %.
"""
import sys

import torch
from torch.utils.data import DataLoader, Dataset

BATCHES = 12
BATCH = 4


def python_work(n, seed):
    acc = 0
    for k in range(n):
        acc = (acc + k * seed) % 1000003
    return acc


class HeavyDataset(Dataset):
    def __len__(self):
        return BATCHES * BATCH

    def __getitem__(self, i):
        acc = python_work(200000, i)
        return torch.full((256,), float(acc % 7)), torch.zeros(8)


class CheapDataset(Dataset):
    def __init__(self):
        self.x = torch.randn(BATCHES * BATCH, 256)
        self.y = torch.randn(BATCHES * BATCH, 8)

    def __len__(self):
        return BATCHES * BATCH

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def main(kind):
    torch.manual_seed(0)
    data = HeavyDataset() if kind == "heavy" else CheapDataset()
    loader = DataLoader(data, batch_size=BATCH, num_workers=0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    step = 0
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        step += python_work(50000, step) % 2  # the step's own work
    print("trained %d batches (%s)" % (BATCHES, kind))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "heavy")

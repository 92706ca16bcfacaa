"""A training loop on the CPU whose DataLoader makes its batches on the training thread
(num_workers=0), for dataloader_bound (docs/FINDINGS.md). No profiler, no NVTX in sight.

    python dataloader_loop.py heavy   # __getitem__ computes about 1 ms per sample, in Python
    python dataloader_loop.py cheap   # __getitem__ returns a tensor made beforehand

Both run 12 batches of 4 samples through the same model, whose step does a few milliseconds of
matrix products, so a heavy batch takes about as long as a step or more and a cheap one next to
nothing.
"""
import sys

import torch
from torch.utils.data import DataLoader, Dataset

BATCHES = 12
BATCH = 4


class HeavyDataset(Dataset):
    def __len__(self):
        return BATCHES * BATCH

    def __getitem__(self, i):
        acc = 0
        for k in range(40000):  # pure-Python work: about 1-2 ms per sample here
            acc = (acc + k * i) % 1000003
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
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 8))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    wide = torch.randn(384, 384)
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        for _ in range(8):  # the step's own compute: a few ms of matrix products
            loss = loss + (wide @ wide).mean() * 0
        loss.backward()
        opt.step()
    print("trained %d batches (%s)" % (BATCHES, kind))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "heavy")

"""An unmodified training loop of the kind a PyTorch user writes, small enough for a CPU test: a
two-layer MLP fed by a DataLoader with two worker processes, AdamW, a step LR scheduler and
gradient clipping. No profiler, no NVTX, no gprof-run in sight.

    python train_dataloader.py BATCHES       # one epoch of BATCHES batches of 32
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main(batches):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(batches * 32, 64), torch.randn(batches * 32, 8))
    loader = DataLoader(data, batch_size=32, shuffle=True, num_workers=2)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 8))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
    loss = None
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    print("trained %d batches, final loss %.4f" % (batches, float(loss)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)

"""A training loop that runs its own torch.profiler for part of the run and numbers its own steps
with prof.step(): a 2-layer TransformerEncoder fed by a DataLoader, AdamW, a step LR scheduler,
gradient clipping, a validation forward before the loop. On the CPU.

    python own_profiler_steps.py STEPS       # STEPS iterations, prof.step() after each

Its profiler's schedule is wait=1, warmup=1, active=3, repeat=1: its ProfilerStep#2 to #4 are
recorded by it (their ops go to its profiler only), #0, #1 and #5 on are not. It prints the
number of ProfilerStep#N rows its own table shows.
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.data import DataLoader, TensorDataset


def main(steps):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(steps * 8, 6, 16), torch.randn(steps * 8, 6, 16))
    loader = DataLoader(data, batch_size=8)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                             dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    with torch.no_grad():  # validation before training
        model(data.tensors[0][:8])
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1)) as prof:
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            prof.step()
    rows = [e.key for e in prof.key_averages() if e.key.startswith("ProfilerStep#")]
    print("own profiler steps:", " ".join(sorted(rows)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)

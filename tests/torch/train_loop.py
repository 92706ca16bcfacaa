"""An unmodified PyTorch training loop, as a user would write it: nn.Linear + GELU + AdamW on
random data, on the CPU. No profiler, no NVTX, no gprof-run in sight.

    python train_loop.py STEPS [--threads]     # --threads: the forward also runs on a worker thread

torch_reference.py imports run() to profile the same code with torch.profiler.
"""
import sys
import threading

import torch


def run(steps, worker_thread=False):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 16)
    y = torch.randn(8, 4)
    loss = None
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    if worker_thread:
        out = []
        t = threading.Thread(target=lambda: out.append(model(x).sum().item()))
        t.start()
        t.join()
    return float(loss)


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print("final loss %.6f" % run(steps, worker_thread="--threads" in sys.argv))

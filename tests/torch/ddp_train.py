"""A data-parallel training loop for torchrun on CPU (gloo): nn.Linear, SGD, gradients averaged
across ranks with all_reduce after backward (what DistributedDataParallel does, in plain
sight). Usage: torchrun --standalone --nproc-per-node N ddp_train.py [STEPS].
Prints "DDP_DONE <rank>"."""
import gc
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    for _ in range(steps):
        opt.zero_grad()
        model(x).sum().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
    dist.barrier()
    dist.destroy_process_group()
    # gloo's worker threads may still be winding down after destroy_process_group; exiting now
    # sometimes aborts the process ("terminate called without an active exception", seen here
    # without gprof-run in 3 runs of 8). Collecting and waiting a moment lets them finish.
    gc.collect()
    time.sleep(0.3)
    os.write(1, f"DDP_DONE {rank}\n".encode())  # one write: the ranks share stdout


if __name__ == "__main__":
    main()

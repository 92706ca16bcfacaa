"""A program that profiles itself with torch.profiler (schedule and prof.step(), as the tutorials
teach) and prints torch's own table: gprof-run must step aside for it and leave its output whole.
"""
import torch
from torch.profiler import ProfilerActivity, profile, schedule

import train_loop

with profile(activities=[ProfilerActivity.CPU],
             schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
    for _ in range(5):
        train_loop.run(1)
        prof.step()
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=200)
print(table)
print("own profiler done, rows with aten::addmm:", sum("aten::addmm" in l for l in table.splitlines()))

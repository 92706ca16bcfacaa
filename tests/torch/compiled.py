"""A torch.compile'd function called a few times (CPU, inductor): the compiled regions torch
shows are compared between gprof-run and torch.profiler.

    python compiled.py [--torch-profiler]    # the flag: run the calls under torch.profiler and
                                             # print its key_averages() as one JSON line
"""
import json
import sys

import torch


def f(x):
    return torch.nn.functional.gelu(x @ x).sum()


g = torch.compile(f)
x = torch.randn(16, 16)
if "--torch-profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            g(x)
    print(json.dumps({"rows": [{"name": e.key, "count": e.count} for e in prof.key_averages()]}))
else:
    for _ in range(3):
        g(x)
    print("compiled calls done")

"""torch.profiler's own answer for train_loop.run(), for the tests to compare gprof-run against.

    python torch_reference.py STEPS [--shapes] [--threads]

Prints one JSON object: {"rows": [{"name", "shapes", "count"}...]} from
prof.key_averages(group_by_input_shape=--shapes). CPU activity only (this machine has no GPU).
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import train_loop

shapes = "--shapes" in sys.argv
with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as prof:
    train_loop.run(int(sys.argv[1]), worker_thread="--threads" in sys.argv)
rows = [{"name": e.key, "shapes": str(e.input_shapes) if shapes else "", "count": e.count}
        for e in prof.key_averages(group_by_input_shape=shapes)]
print(json.dumps({"rows": rows}))

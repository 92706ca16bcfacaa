#!/usr/bin/env python3
"""A PyTorch program that starts torch.profiler while it runs under gprof-run (step 7).

A few CUDA ops before, inside and after one `torch.profiler.profile` block. gprof-run subscribed
to CUPTI first (at the program's cuInit); torch.profiler (Kineto) then asks CUPTI for the same
callbacks and activity buffers. The program must still finish normally; what gprof-run recorded
and what its closing line says is judged by torch_inside_check.py. Prints how many CUDA kernels
torch.profiler saw, then GPROF_EXAMPLE_DONE torch_inside. Exits 3 when torch or a GPU is missing.
"""

import sys
import time


def main():
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        print(f"torch_inside: torch not importable: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_inside: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    from torch.profiler import ProfilerActivity, profile

    start_ns = time.time_ns()
    x = torch.randn(1024, 1024, device="cuda")
    y = torch.relu(x @ x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            y = torch.relu(y @ x) * 0.5
        torch.cuda.synchronize()
    seen = 0
    for e in prof.events():
        kind = str(getattr(e, "device_type", ""))
        if kind.endswith("CUDA"):
            seen += 1
    after_stop_ns = time.time_ns()
    for _ in range(3):  # after the profiler stopped: gprof-run should see these again
        y = torch.relu(y @ x) * 0.5
    for _ in range(5):
        y.add_(1.0)  # one kernel each: 5 launches at least, judged by cupti_life_check.py
    torch.cuda.synchronize()
    print(f"torch_inside: start_ns={start_ns} after_stop_ns={after_stop_ns} after_launches=5 "
          f"end_ns={time.time_ns()}")
    print(f"torch_inside: torch.profiler saw {seen} CUDA events; result {float(y.sum()):.3g}")
    print("GPROF_EXAMPLE_DONE torch_inside")
    return 0


if __name__ == "__main__":
    sys.exit(main())

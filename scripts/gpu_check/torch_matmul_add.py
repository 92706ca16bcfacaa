#!/usr/bin/env python3
"""The seeds' matmul+add (docs/GPU_CHECK.md, step 9), standalone: the program both tools profile.

    def fn(x, w, b): return torch.add(torch.matmul(x, w), b)

with bf16 tensors of --size x --size on the GPU, each call inside record_function("matmul_add"),
as in the seed article's 01_matmul_add.py. In order:
  1. x, w, b are made (torch.randn), then --warmup calls and a device synchronize: cuBLAS
     heuristics, module loading and the caching allocator are paid here, outside what is compared;
  2. --iters calls, then a device synchronize (so every kernel of the compared calls has run);
  3. --after calls and a synchronize, outside what is compared: under `gprof-run --step
     'nvtx:matmul_add*'` each call begins a step, so the first of these ends the last compared
     step (without it the last step would run on to the program's exit).
Modes:
  plain  just the above (step 9 runs it under gprof-run, with a schedule whose window is step 2)
  torch  step 2 inside torch.profiler.profile(CPU + CUDA activities), prof.step() after each call
         as in the article; then prints torch's key_averages() rows as one JSON line:
         {"rows": [{"name", "device_type", "is_user_annotation", "count", "self_cpu_time_total",
         "cpu_time_total", "self_device_time_total", "device_time_total"}...],
         "self_cpu_total", "self_device_total", ...} (times in us; the two totals as the table's
         "Self CPU time total" / "Self CUDA time total" lines sum them, profiler_util._build_table)
With --profile-memory (torch mode) torch.profiler runs with profile_memory=True and each row also
has "self_device_memory_usage" and "device_memory_usage" (bytes allocated minus freed).
Prints GPROF_EXAMPLE_DONE torch_matmul_add_<mode> last. Exits 3 with one line on stderr when
torch or a GPU is missing. --device cpu runs the same on the CPU (only to test this script on a
machine without a GPU: no CUDA activity, no synchronize).
"""

import argparse
import json
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, required=True, help="matrix size (the seeds: 64, 4096)")
    p.add_argument("--mode", choices=("plain", "torch"), required=True)
    p.add_argument("--iters", type=int, default=5, help="compared calls (the seeds: 5)")
    p.add_argument("--warmup", type=int, default=2, help="calls before, not compared")
    p.add_argument("--after", type=int, default=1, help="calls after, not compared")
    p.add_argument("--profile-memory", action="store_true",
                   help="torch mode: profile_memory=True; rows gain the memory columns")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: test this script without a GPU")
    return p.parse_args(argv)


def _attr(evt, *names, default=0):
    """The first attribute of names that evt has (torch renamed cuda_* to device_* in 2.4)."""
    for n in names:
        if hasattr(evt, n):
            return getattr(evt, n)
    return default


def key_average_rows(prof, memory=False):
    """torch's key_averages() as plain dicts, and the two totals of its table's last lines."""
    from torch.autograd import DeviceType

    rows, self_cpu, self_device = [], 0.0, 0.0
    for evt in prof.key_averages():
        device_type = getattr(evt, "device_type", DeviceType.CPU)
        annotation = bool(getattr(evt, "is_user_annotation", False))
        legacy = bool(getattr(evt, "is_legacy", False))
        row = {
            "name": evt.key,
            "device_type": str(device_type).rsplit(".", 1)[-1],
            "is_user_annotation": annotation,
            "count": int(evt.count),
            "self_cpu_time_total": float(evt.self_cpu_time_total),
            "cpu_time_total": float(evt.cpu_time_total),
            "self_device_time_total": float(_attr(evt, "self_device_time_total",
                                                  "self_cuda_time_total")),
            "device_time_total": float(_attr(evt, "device_time_total", "cuda_time_total")),
        }
        if memory:  # bytes allocated minus freed (torch renamed cuda_* to device_* in 2.4)
            row["self_device_memory_usage"] = int(_attr(evt, "self_device_memory_usage",
                                                        "self_cuda_memory_usage"))
            row["device_memory_usage"] = int(_attr(evt, "device_memory_usage",
                                                   "cuda_memory_usage"))
        rows.append(row)
        self_cpu += row["self_cpu_time_total"]
        # As profiler_util._build_table: device rows (kernels, copies, memsets) but not the GPU
        # side of user annotations; legacy CPU events carry their kernel time themselves.
        if (device_type == DeviceType.CPU and legacy) or \
                (device_type != DeviceType.CPU and not annotation):
            self_device += row["self_device_time_total"]
    return rows, self_cpu, self_device


def main(argv):
    args = parse_args(argv)
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        print(f"torch_matmul_add: torch not importable: {e}", file=sys.stderr)
        return 3
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("torch_matmul_add: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    dtype = torch.bfloat16
    x = torch.randn(args.size, args.size, device=args.device, dtype=dtype)
    w = torch.randn(args.size, args.size, device=args.device, dtype=dtype)
    b = torch.randn(args.size, args.size, device=args.device, dtype=dtype)

    def fn(x, w, b):
        return torch.add(torch.matmul(x, w), b)

    def step():
        with torch.profiler.record_function("matmul_add"):
            return fn(x, w, b)

    for _ in range(args.warmup):
        step()
    sync()

    prof = None
    if args.mode == "plain":
        for _ in range(args.iters):
            step()
        sync()
    else:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities, profile_memory=args.profile_memory) as prof:
            for _ in range(args.iters):
                step()
                prof.step()
            sync()  # inside: the compared kernels finish while the profiler collects

    for _ in range(args.after):
        step()
    sync()

    if prof is not None:
        rows, self_cpu, self_device = key_average_rows(prof, args.profile_memory)
        print(json.dumps({
            "size": args.size, "iters": args.iters, "warmup": args.warmup,
            "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if cuda else "cpu",
            "self_cpu_total": self_cpu, "self_device_total": self_device, "rows": rows,
        }, sort_keys=True))
    print(f"GPROF_EXAMPLE_DONE torch_matmul_add_{args.mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

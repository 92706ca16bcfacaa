#!/usr/bin/env python3
"""The PyTorch workloads that scripts/gpu-check profiles (steps 6 and 8).

One script, run as separate processes in three modes so that every tool sees the same program:
  plain  no profiler (the baseline for wall-time overhead)
  gprof  run under `gprof-run`; each measured step is an NVTX range "ProfilerStep#N" pushed with
         torch.cuda.nvtx (how an otherwise unmodified program gets step markers)
  torch  torch.profiler (CPU + CUDA activities) with schedule(wait=0, warmup=--ref-warmup,
         active=--steps, repeat=1): it starts before --ref-warmup profiled warm-up steps, so
         whatever Kineto loses when its session starts (CUPTI 13.0: kernels around the start of
         its timestamp callback) falls in steps the schedule discards; each measured step is
         inside record_function("ProfilerStep#N"); the Kineto trace is exported to --trace

Workloads:
  train   a few Linear+GELU layers, bf16 autocast matmuls, AdamW, synthetic tensors
  launch  a launch-bound loop: one tiny kernel per iteration (the torch twin of launch_loop)

Warm-up steps run first, unannotated and unprofiled (they pay for cuBLAS heuristics, AdamW state,
the caching allocator). Measured step i is named ProfilerStep#i in every mode. Every measured step ends with a device synchronize so that each step's
kernels both launch and finish inside its range. Results (step times, totals) go to --result as
JSON. Needs torch with CUDA; exits 3 with a one-line message when torch or a GPU is missing.
"""

import argparse
import json
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("plain", "gprof", "torch"), required=True)
    p.add_argument("--workload", choices=("train", "launch"), default="train")
    p.add_argument("--steps", type=int, default=20, help="measured steps (train)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before measuring")
    p.add_argument("--ref-warmup", type=int, default=3,
                   help="torch mode: profiled warm-up steps of the schedule (discarded)")
    p.add_argument("--launches", type=int, default=20000, help="kernels (launch workload)")
    p.add_argument("--width", type=int, default=2048, help="Linear width (train)")
    p.add_argument("--batch", type=int, default=2048, help="rows per step (train)")
    p.add_argument("--layers", type=int, default=4, help="Linear+GELU layers (train)")
    p.add_argument("--trace", default="", help="Kineto trace path (torch mode)")
    p.add_argument("--result", required=True, help="JSON results file")
    return p.parse_args(argv)


class TrainLoop:
    """A few Linear+GELU layers with bf16 autocast and AdamW on fixed synthetic tensors."""

    def __init__(self, torch, args):
        self.torch = torch
        torch.manual_seed(0)
        layers = []
        for _ in range(args.layers):
            layers += [torch.nn.Linear(args.width, args.width), torch.nn.GELU()]
        self.model = torch.nn.Sequential(*layers).cuda()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.x = torch.randn(args.batch, args.width, device="cuda")
        self.y = torch.randn(args.batch, args.width, device="cuda")

    def step(self):
        torch = self.torch
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            out = self.model(self.x)
        loss = torch.nn.functional.mse_loss(out.float(), self.y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def run_train(torch, args, step_context, begin_measure, between_steps):
    """Returns (per-step seconds, measured seconds). begin_measure(warm_step) runs before the
    measured steps (torch mode: starts the profiler and runs its warm-up steps); between_steps()
    runs after every measured step but the last, outside its time (torch mode: prof.step())."""
    loop = TrainLoop(torch, args)
    for _ in range(args.warmup):
        loop.step()
    torch.cuda.synchronize()

    def warm_step():
        loop.step()
        torch.cuda.synchronize()

    begin_measure(warm_step)
    times = []
    t0 = time.perf_counter()
    for i in range(args.steps):
        s = time.perf_counter()
        with step_context(i):
            loop.step()
            torch.cuda.synchronize()
        times.append(time.perf_counter() - s)
        if i + 1 < args.steps:
            between_steps()
    return times, time.perf_counter() - t0


def run_launch(torch, args, step_context, begin_measure, _between_steps):
    """One measured "step" of args.launches tiny kernels; returns ([seconds], seconds)."""
    x = torch.zeros(1, device="cuda")
    for _ in range(max(args.warmup, 1) * 200):
        x.add_(1.0)
    torch.cuda.synchronize()

    def warm_step():
        for _ in range(200):
            x.add_(1.0)
        torch.cuda.synchronize()

    begin_measure(warm_step)
    t0 = time.perf_counter()
    with step_context(0):
        for _ in range(args.launches):
            x.add_(1.0)
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    return [elapsed], elapsed


def main(argv):
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        print(f"torch_loop: torch not importable: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_loop: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    torch.cuda.init()
    import contextlib

    prof = None
    if args.mode == "gprof":
        @contextlib.contextmanager
        def step_context(i):
            torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
            try:
                yield
            finally:
                torch.cuda.nvtx.range_pop()
    elif args.mode == "torch":
        from torch.profiler import ProfilerActivity, profile, record_function

        def step_context(i):
            return record_function(f"ProfilerStep#{i}")
    else:
        def step_context(_i):
            return contextlib.nullcontext()

    work = run_train if args.workload == "train" else run_launch
    between_steps = lambda: None  # noqa: E731
    if args.mode == "torch":
        from torch.profiler import schedule

        # Started after the unprofiled warm-up and before the measured steps' clock starts, so
        # the profiler's start-up cost is not in the step times. The schedule's warm-up steps
        # are profiled and discarded: Kineto's start-up losses land there, not in the measured
        # steps. The schedule's own ProfilerStep#<n> annotations (n counts from the profiler's
        # start) are switched off where torch allows it; where not, they are wider than this
        # script's ProfilerStep#i spans, and the checker takes the narrowest span.
        active = args.steps if args.workload == "train" else 1
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=0, warmup=max(args.ref_warmup, 1), active=active,
                                         repeat=1))
        if hasattr(prof, "record_steps"):
            prof.record_steps = False

        def begin_measure(warm_step):
            prof.start()
            for _ in range(max(args.ref_warmup, 1)):
                warm_step()
                prof.step()

        between_steps = prof.step
    else:
        def begin_measure(_warm_step):
            return None

    step_times, measured = work(torch, args, step_context, begin_measure, between_steps)
    export_s = 0.0
    if prof is not None:
        prof.stop()
        t = time.perf_counter()
        if args.trace:
            prof.export_chrome_trace(args.trace)
        export_s = time.perf_counter() - t
    result = {
        "mode": args.mode,
        "workload": args.workload,
        "steps": len(step_times),
        "launches": args.launches if args.workload == "launch" else None,
        "step_seconds": step_times,
        "measured_seconds": measured,
        "export_seconds": export_s,
        "script_seconds": time.perf_counter() - start,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
    }
    with open(args.result, "w", encoding="utf-8") as f:
        json.dump(result, f)
    print(f"GPROF_EXAMPLE_DONE torch_loop_{args.workload}_{args.mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

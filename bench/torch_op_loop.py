"""The per-op cost workload of figure 8: a loop of small CPU ops, timed in-process.

    python torch_op_loop.py MODE ITERS

MODE plain: no profiler here (run under gprof-run, this times gprof-run's op ranges);
torch / torch_shapes: torch.profiler (CPU activity; record_shapes for torch_shapes) around the
loop; noop_observer: a RecordFunction observer that records nothing (the shared library named by
$GPROF_BENCH_NOOP_OBSERVER, bench/torch_noop_observer.cpp); count: print the ops one iteration
runs (by torch.profiler, untimed) and exit.
Prints "LOOP_NS t": the best of 3 timed passes of ITERS iterations after a warm-up pass. The
profilers' work after the loop (torch's event processing at the end of `with profile`, gprof-run's
dump at exit) is outside the timed passes for both.

The loop is a mix rather than one op: a matmul + GELU forward with autograd, its backward, an
in-place optimizer-style update and a few tensor ops, so names, argument counts, nesting and the
autograd engine vary as in a training step.
"""
import os
import sys
import time

import torch

torch.set_num_threads(1)
MODE, ITERS = sys.argv[1], int(sys.argv[2])
w = torch.randn(8, 8, requires_grad=True)
x = torch.randn(4, 8)
buf = torch.zeros(8, 8)


def step():
    y = torch.nn.functional.gelu(x @ w).sum()
    y.backward()
    with torch.no_grad():
        buf.mul_(0.9).add_(w.grad, alpha=0.1)
        w.sub_(buf * 1e-3)
        w.grad.zero_()
    torch.cat([x, x]).relu().mean()


def timed(n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        step()
    return time.perf_counter_ns() - t0


if MODE == "count":
    from torch.profiler import ProfilerActivity, profile
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    print("OPS_PER_ITER %d" % sum(e.count for e in prof.key_averages()))
    sys.exit(0)

if MODE == "noop_observer":
    import ctypes
    ctypes.CDLL(os.environ["GPROF_BENCH_NOOP_OBSERVER"]).gprof_bench_noop_observer_on()
    MODE = "plain"

best = None
for _ in range(3):
    if MODE == "plain":
        timed(max(1, ITERS // 10))
        t = timed(ITERS)
    else:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=MODE == "torch_shapes"):
            timed(max(1, ITERS // 10))
            t = timed(ITERS)
    best = t if best is None else min(best, t)
print("LOOP_NS %d" % best)

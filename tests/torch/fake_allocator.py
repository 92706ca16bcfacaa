"""A torch program whose CUDA caching allocator is faked, for gprof-run --profile-memory on a
machine without a GPU (test_torch_e2e.py, test_memory_columns_from_the_caching_allocator).

Everything but the allocator is real: torch's ops and record_function regions (real NVTX ranges
through gprof-run's hook and library), torch's own torch.cuda._lazy_init() (only its driver
call, torch._C._cuda_init, is faked, so the hook's queued start runs as it does on a GPU), the
hook's thread tags and its .torchmem file, and the launcher's table. The fake allocator stands in
for torch.cuda.memory's _record_memory_history / _set_memory_metadata / _snapshot (the hook looks
them up at each call): EVENT() appends a trace entry as the allocator would, stamped with the
time now in microseconds (as torch's time_us) and the calling thread's metadata. Each event sits
a millisecond away from every region boundary, so the microsecond rounding cannot move it.

What the table must say (bytes as torch.profiler counts blocks: requests rounded up to 512 B):
  alloc_region:   +3 MiB itself; inner_region inside it: +1 MiB, frees the 3 MiB
                  -> alloc_region CUDA Mem 1 MiB, Self 3 MiB; inner_region -2 MiB, -2 MiB
  worker_region:  on a threading.Thread started after CUDA init (tagged): +5 MiB, Self 5 MiB
  untagged_region: an event without metadata (as from torch's autograd thread), while only
                  this region is open: given to it by time: +100 B -> 512 B
  after every region: +2000 B -> 2048 B, torch's "[memory]" row
With the argument `leak` it runs instead 6 training steps of a real model and optimizer (the
hook's ProfilerStep#N ranges come from optimizer.step()), each leaking a 2 MiB block before its
optimizer.step(): torch's blocks hold 2, 4, ..., 12 MiB at the ends of steps 0..5.
"""
import sys
import threading
import time

import torch

TRACE = []
_metadata = threading.local()


def _record_memory_history(*args, **kwargs):
    pass


def _set_memory_metadata(text):
    _metadata.text = text


def _snapshot(*args, **kwargs):
    return {"segments": [], "device_traces": [TRACE]}


torch.cuda.memory._record_memory_history = _record_memory_history
torch.cuda.memory._set_memory_metadata = _set_memory_metadata
torch.cuda.memory._snapshot = _snapshot
torch._C._cuda_init = lambda: None

MiB = 1 << 20


def EVENT(action, addr, size, tagged=True):
    time.sleep(0.001)
    TRACE.append({"action": action, "addr": addr, "size": size, "stream": 0,
                  "time_us": time.time_ns() // 1000, "frames": [],
                  "user_metadata": getattr(_metadata, "text", "") if tagged else ""})
    time.sleep(0.001)


def work():
    a = torch.ones(32, 32)
    return torch.mm(a, a)


torch.cuda._lazy_init()  # "CUDA initialization": the hook starts recording, tags this thread
if sys.argv[1:] == ["leak"]:
    model = torch.nn.Linear(8, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        opt.zero_grad()
        model(torch.ones(2, 8)).sum().backward()
        EVENT("alloc", 0x100000 * (step + 1), 2 * MiB)  # kept alive: a leak
        opt.step()
    print("FAKE_ALLOCATOR_DONE", len(TRACE))
    sys.exit(0)
work()
with torch.profiler.record_function("alloc_region"):
    work()
    EVENT("alloc", 0x10000, 3 * MiB)
    with torch.profiler.record_function("inner_region"):
        EVENT("alloc", 0x20000, MiB)
        EVENT("free_requested", 0x10000, 3 * MiB)


def worker():
    with torch.profiler.record_function("worker_region"):
        EVENT("alloc", 0x30000, 5 * MiB)


t = threading.Thread(target=worker)
t.start()
t.join()
with torch.profiler.record_function("untagged_region"):
    EVENT("alloc", 0x40000, 100, tagged=False)
time.sleep(0.002)
EVENT("alloc", 0x50000, 2000)
print("FAKE_ALLOCATOR_DONE", len(TRACE))

"""A training-loop look-alike annotated with PyPI's `nvtx` package (pip install nvtx).

Usage: python train.py [steps]   (default 5)

Per step N: ProfilerStep#N { forward, backward { allreduce }, optimizer.step }, using
nvtx.annotate (context manager and decorator) and push_range/pop_range. A data-loader thread
runs one load_batch range per step; a mark "checkpoint" ends the run. Busy-work keeps every
range's time above zero. No numpy, no GPU. Prints "GPROF_EXAMPLE_DONE train.py" last.
"""
import sys
import threading
import time

import nvtx


def busy(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


@nvtx.annotate("optimizer.step")
def optimizer_step():
    busy(0.0003)


def forward():
    with nvtx.annotate("forward"):
        busy(0.0005)


def backward():
    nvtx.push_range("backward")
    busy(0.0004)
    with nvtx.annotate("allreduce", domain="gprof.example"):
        busy(0.0002)
    nvtx.pop_range()


def data_loader(steps):
    for _ in range(steps):
        with nvtx.annotate("load_batch"):
            busy(0.0003)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    loader = threading.Thread(target=data_loader, args=(steps,), name="data-loader")
    loader.start()
    for step in range(steps):
        with nvtx.annotate(f"ProfilerStep#{step}"):
            forward()
            backward()
            optimizer_step()
    loader.join()
    nvtx.mark("checkpoint")
    print("GPROF_EXAMPLE_DONE train.py", flush=True)


if __name__ == "__main__":
    main()

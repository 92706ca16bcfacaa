"""The programs of bench/run-all figure 12 (the cost of --python-sampling).

    python3 python_sampling_loop.py loop ITERATIONS
        A CPU-bound pure-Python loop, a few frames deep (as a program's code is, so that each
        sample walks a realistic stack). Prints LOOP_NS <wall time of the loop>.
    python3 python_sampling_loop.py sample HOOK_DIR THREADS CALLS
        The sampler's own work per tick, without its thread: _Sampler.sample() called CALLS
        times on this thread while THREADS - 1 other threads wait at the same depth. Prints
        SAMPLE_NS <ns per call> FRAMES <frames walked per call>.
"""
import sys
import threading
import time


def leaf(i):
    return (i * i) % 7


def inner(n):
    s = 0
    for i in range(n):
        s += leaf(i)
    return s


def outer(iterations):
    s = 0
    for _ in range(iterations):
        s += inner(1000)
    return s


def deep(depth, then):
    return deep(depth - 1, then) if depth > 0 else then()


def sample_cost(hook_dir, threads, calls):
    sys.path.insert(0, hook_dir)
    import _gprof_run_sampler as sampler
    s = sampler._Sampler(1000, "/dev/null", 0)
    stop = threading.Event()
    waiting = threading.Barrier(threads)
    workers = [threading.Thread(target=deep, args=(10, lambda: (waiting.wait(), stop.wait())))
               for _ in range(threads - 1)]
    for w in workers:
        w.start()

    def measure():
        waiting.wait()
        s.sample(-1, time.time_ns())  # interns the frames once, as the first tick does
        start = time.perf_counter_ns()
        for _ in range(calls):
            s.sample(-1, time.time_ns())
        return time.perf_counter_ns() - start

    ns = deep(10, measure)
    stop.set()
    for w in workers:
        w.join()
    frames = sum(len(s.stacks[k]) for k in s.stack[-threads:])
    print("SAMPLE_NS", ns // calls, "FRAMES", frames)


def main():
    if sys.argv[1] == "loop":
        iterations = int(sys.argv[2])
        start = time.perf_counter_ns()
        outer(iterations)
        print("LOOP_NS", time.perf_counter_ns() - start)
    else:
        sample_cost(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))


if __name__ == "__main__":
    main()

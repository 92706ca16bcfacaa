"""The programs of bench/run-all figure 12 (the cost of --python-sampling).

    python3 python_sampling_loop.py loop ITERATIONS
        A CPU-bound pure-Python loop, a few frames deep (as a program's code is, so that each
        sample walks a realistic stack). Prints LOOP_NS <wall time of the loop>.
    python3 python_sampling_loop.py sample HOOK_DIR THREADS CALLS
        The sampler's own work per tick, without its thread: _Sampler.sample() called CALLS
        times on this thread while THREADS - 1 other threads wait at the same depth. Prints
        SAMPLE_NS <ns per call> FRAMES <frames walked per call>.
    python3 python_sampling_loop.py remote HOOK_DIR THREADS CALLS
        The out-of-process sampler's work per tick: Reader.threads() of
        _gprof_run_remote_reader.py called CALLS times on a child process (`wait THREADS`)
        whose THREADS threads wait at the same depth. Prints the same, in CPU time of the
        reading thread.
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


def wait_deep(threads):
    """The process `remote` reads: THREADS threads 10 levels deep, waiting for stdin to close."""
    ready = threading.Barrier(threads)
    done = threading.Event()
    for _ in range(threads - 1):
        threading.Thread(target=deep, args=(10, lambda: (ready.wait(), done.wait())),
                         daemon=True).start()

    def main_waits():
        ready.wait()
        print("READY", flush=True)
        sys.stdin.read()
        done.set()
    deep(10, main_waits)


def remote_cost(hook_dir, threads, calls):
    import subprocess
    sys.path.insert(0, hook_dir)
    import _gprof_run_remote_reader as remote
    child = subprocess.Popen([sys.executable, __file__, "wait", str(threads)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "READY"
        reader = remote.Reader(child.pid)
        got = reader.threads()  # reads the code objects once, as the first tick does
        start = time.thread_time_ns()  # CPU time: the sampler process runs beside the program
        for _ in range(calls):
            got = reader.threads()
        ns = time.thread_time_ns() - start
    finally:
        child.stdin.close()
        child.wait()
    print("SAMPLE_NS", ns // calls, "FRAMES", sum(len(t[2] or ()) for t in got))


def main():
    if sys.argv[1] == "wait":
        wait_deep(int(sys.argv[2]))
    elif sys.argv[1] == "remote":
        remote_cost(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1] == "loop":
        iterations = int(sys.argv[2])
        start, cpu = time.perf_counter_ns(), time.process_time_ns()
        outer(iterations)
        print("LOOP_NS", time.perf_counter_ns() - start, "LOOP_CPU_NS",
              time.process_time_ns() - cpu)
    else:
        sample_cost(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))


if __name__ == "__main__":
    main()

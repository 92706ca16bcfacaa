"""Running programs for scripts/gpu-check: plain or under gprof-run, real GPU or stand-in.

Every run gets a clean environment: no inherited GPROF_* keys and no CUDA/NVTX injection paths
(a plain run must not be profiled by accident). On a real GPU the stand-in is never used: its
library folder is removed from LD_LIBRARY_PATH. With --standin, LD_LIBRARY_PATH starts with
<build>/tests/cudasim/lib and GPROF_CUPTI_LIB names its libcupti.so.13.

Every run has a time limit, and no run may end past the whole check's deadline (--deadline-epoch
of main.py): a run that would start with less than MIN_RUN_S left is not started and reads as
timed out, so the report is always written inside the budget.
"""

import ctypes
import glob
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

MIN_RUN_S = 3.0      # a run is not started with less time than this left before the deadline
REPORT_RESERVE_S = 8.0  # kept back from the deadline for writing the report


@dataclass
class RunResult:
    argv: list
    returncode: int
    seconds: float
    stdout: str
    stderr: str
    timed_out: bool = False
    out_dir: str = ""        # gprof-run output directory that was found ("" if none)
    trace: str = ""          # the main process's trace.json inside it
    traces: list = field(default_factory=list)  # every trace in it
    dumps: list = field(default_factory=list)

    def ok(self):
        return self.returncode == 0 and not self.timed_out

    def tail(self, lines=12):
        text = (self.stdout + "\n" + self.stderr).strip().splitlines()
        return "\n".join(text[-lines:])


class Runner:
    def __init__(self, build_dir, standin, work_dir, timeout_s=120, deadline=None):
        self.build_dir = os.path.abspath(build_dir)
        self.deadline = deadline  # time.time() past which no run may go (None: no limit)
        self.standin = standin
        self.work_dir = work_dir
        self.timeout_s = timeout_s
        self.launcher = os.path.join(self.build_dir, "bin", "gprof-run")
        self.standin_lib = os.path.join(self.build_dir, "tests", "cudasim", "lib")
        self._counter = 0

    def bin(self, name):
        return os.path.join(self.build_dir, "bin", name)

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPROF_")
               and k not in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
        paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(":")
                 if p and "cudasim" not in p]
        if self.standin:
            # The stand-in's libcuda.so.1 has a folder of its own (tests/cudasim/CMakeLists.txt):
            # driver_launch links it.
            paths.insert(0, self.standin_lib + "-driver")
            paths.insert(0, self.standin_lib)
            env["GPROF_CUPTI_LIB"] = os.path.join(self.standin_lib, "libcupti.so.13")
        if paths:
            env["LD_LIBRARY_PATH"] = ":".join(paths)
        else:
            env.pop("LD_LIBRARY_PATH", None)
        env.update(extra or {})
        return env

    def time_left(self):
        """Seconds left before the deadline (less the report's reserve); None without one."""
        if self.deadline is None:
            return None
        return self.deadline - REPORT_RESERVE_S - time.time()

    def run(self, argv, extra_env=None, timeout_s=None):
        start = time.perf_counter()
        timeout = timeout_s or self.timeout_s
        left = self.time_left()
        if left is not None:
            if left < MIN_RUN_S:
                return RunResult(argv, -9, 0.0, "", "not run: the check's time budget is spent",
                                 timed_out=True)
            timeout = min(timeout, left)
        try:
            # Own process group: on a timeout the program that gprof-run started dies with it
            # (it must not keep the GPU busy for the checks after it).
            p = subprocess.Popen(argv, env=self.env(extra_env), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace",
                                 start_new_session=True)
        except OSError as e:
            return RunResult(argv, 127, time.perf_counter() - start, "", str(e))
        try:
            out, err = p.communicate(timeout=timeout)
            return RunResult(argv, p.returncode, time.perf_counter() - start, out, err)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                p.kill()
            out, err = p.communicate()
            return RunResult(argv, -9, time.perf_counter() - start, out or "",
                             (err or "") + f"\n(killed after {timeout:.0f} s)", timed_out=True)

    def profile(self, label, program_argv, extra_env=None, timeout_s=None, options=()):
        """Runs `gprof-run -q -o <fresh dir> [options] -- program...` and finds its trace.json."""
        self._counter += 1
        out_dir = os.path.join(self.work_dir, f"{self._counter:02d}-{label}")
        argv = [self.launcher, "-q", "-o", out_dir] + list(options) + ["--"] + list(program_argv)
        r = self.run(argv, extra_env, timeout_s)
        r.out_dir, r.trace, r.traces, r.dumps = find_outputs(out_dir)
        return r

    def check_trace(self, traces):
        """`gprof-run check TRACE...` -> RunResult."""
        traces = [traces] if isinstance(traces, str) else list(traces)
        return self.run([self.launcher, "check"] + traces, timeout_s=120)


def find_outputs(out_dir):
    """The directory gprof-run wrote (out_dir, or out_dir-N if it existed), its main trace and
    every trace and dump in it. The main process's trace is trace.json (docs/LAUNCHER.md); when
    the main process wrote no dump (e.g. a wrapper that only starts the CUDA program), the largest
    <program>.<pid>.trace.json stands in for it."""
    candidates = [out_dir] + sorted(glob.glob(out_dir + "-*"))
    for d in candidates:
        traces = sorted(glob.glob(os.path.join(d, "*trace.json")))
        if traces:
            main = os.path.join(d, "trace.json")
            if main not in traces:
                main = max(traces, key=os.path.getsize)
            dumps = sorted(glob.glob(os.path.join(d, "*.gpdump")))
            return d, main, traces, dumps
    return "", "", [], []


def probe_gpu():
    """(ok, text): whether cuInit succeeds here, and the devices or the reason it does not."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return False, f"libcuda.so.1 not loadable ({e})"
    rc = cuda.cuInit(0)
    if rc != 0:
        return False, f"cuInit failed with CUresult {rc}"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return False, "cuInit succeeded but no CUDA device is visible"
    names = []
    for i in range(count.value):
        dev = ctypes.c_int(0)
        buf = ctypes.create_string_buffer(256)
        if cuda.cuDeviceGet(ctypes.byref(dev), i) == 0 and \
                cuda.cuDeviceGetName(buf, 256, dev) == 0:
            names.append(buf.value.decode(errors="replace"))
    version = ctypes.c_int(0)
    cuda.cuDriverGetVersion(ctypes.byref(version))
    v = version.value
    return True, f"{count.value} device(s): {', '.join(names)}; driver CUDA {v // 1000}.{v % 1000 // 10}"

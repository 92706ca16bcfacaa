#!/usr/bin/env python3
"""Driver of scripts/gpu-check (steps 2-5; the bash entry point did step 1, build and ctest).

Standard library only; torch is used only by torch_loop.py, in its own processes. Writes one
Markdown report to --out and to stdout; exits 1 when any check failed, 0 otherwise.
"""

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import examples_check  # noqa: E402
import launch_overhead  # noqa: E402
import torch_compare  # noqa: E402
from report import FAIL, PASS, SKIP, WARN, Report  # noqa: E402
from runner import Runner, probe_gpu  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args(argv):
    p = argparse.ArgumentParser(description="gprof-run real-GPU check (driver)")
    p.add_argument("--build-dir", required=True)
    p.add_argument("--standin", action="store_true",
                   help="dry run on the CUDA/CUPTI stand-in (no GPU needed)")
    p.add_argument("--out", required=True, help="report file")
    p.add_argument("--work-dir", default="", help="where profiles go (default: a temp dir)")
    p.add_argument("--python", default=os.environ.get("GPU_CHECK_PYTHON", "python3"),
                   help="the Python with torch (default python3 or $GPU_CHECK_PYTHON)")
    p.add_argument("--steps", type=int, default=20, help="measured training steps")
    p.add_argument("--build-status", default="", help="key=value file from the bash entry point")
    return p.parse_args(argv)


def read_kv(path):
    out = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    out[k] = v
    return out


def command_line(argv, timeout=20):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def step1(report, status):
    """Build and `ctest -L gpu`, as done by the bash entry point."""
    s = report.section("1. Build (Release) and ctest -L gpu")
    s.seconds = float(status.get("build_seconds", 0) or 0) + float(status.get("ctest_seconds", 0)
                                                                  or 0)
    build = status.get("build", "missing")
    if build == "skipped":
        s.status(SKIP, f"build skipped (--skip-build); using {status.get('build_dir', '?')}")
    else:
        s.check(build == "ok", f"Release build ({status.get('build_seconds', '?')} s): {build}"
                + (f"; first error: `{status.get('build_error', '?')}`; log "
                   f"{status.get('build_log')}" if build != "ok" else ""))
    log = status.get("ctest_log", "")
    text = ""
    if log and os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    rc = status.get("ctest_rc", "")
    if rc == "":
        s.status(FAIL, "ctest -L gpu did not run")
        return s
    summary = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
    not_run = re.findall(r"^\s*\d+ - (\S+) \((Skipped|Disabled|Not Run)\)", text, re.M)
    failed = re.findall(r"^\s*\d+ - (\S+) \((Failed|Timeout|SEGFAULT|Subprocess aborted|"
                        r"Exception|Child aborted)[^)]*\)", text, re.M)
    if "No tests were found" in text:
        s.status(WARN, "ctest -L gpu: no gpu-labelled tests are registered")
    elif summary:
        total, nfail = int(summary.group(3)), int(summary.group(2))
        s.check(rc == "0" and nfail == 0, f"ctest -L gpu: {total} tests, {nfail} failed, "
                f"{len(not_run)} skipped" + (f" — failed: {', '.join(n for n, _ in failed[:8])}"
                                             if failed else ""))
        if not_run and not status.get("standin") == "1":
            s.status(WARN, f"{len(not_run)} gpu tests skipped on a machine with a GPU: "
                           + ", ".join(n for n, _ in not_run[:8]))
        elif not_run:
            s.status(PASS, f"{len(not_run)} gpu tests skipped cleanly without a GPU (stand-in "
                           "dry run)")
    else:
        s.check(rc == "0", f"ctest -L gpu exited {rc}; log {log}")
    return s


def header(report, args, gpu_text):
    commit = command_line(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    dirty = command_line(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"])
    nvcc = re.search(r"release ([\d.]+)", command_line(["nvcc", "--version"]) or
                     command_line(["/usr/local/cuda/bin/nvcc", "--version"]))
    smi = command_line(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                        "--format=csv,noheader"])
    report.header += [
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- host: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()})",
        f"- commit: {commit or '?'}{' (with uncommitted changes)' if dirty else ''}",
        f"- CUDA toolkit: {nvcc.group(1) if nvcc else '?'}; GPU: {gpu_text}"
        + (f"; nvidia-smi: {smi}" if smi else ""),
        f"- mode: {'STAND-IN dry run (tests/cudasim; no real GPU — figures are not GPU figures)' if args.standin else 'real GPU'}",
        f"- build: {os.path.abspath(args.build_dir)}; profiles in {args.work_dir}",
    ]


def timed(report, title, fn):
    s = report.section(title)
    t = time.perf_counter()
    try:
        fn(s)
    except Exception as e:  # noqa: BLE001 - a crash in one phase is a failed check, not a hang
        s.status(FAIL, f"the check itself crashed: {type(e).__name__}: {e}")
    s.seconds = time.perf_counter() - t
    return s


def main(argv):
    args = parse_args(argv)
    if not args.work_dir:
        args.work_dir = tempfile.mkdtemp(prefix="gprof-gpu-check-")
    os.makedirs(args.work_dir, exist_ok=True)
    status = read_kv(args.build_status)
    report = Report("gprof-run GPU check" + (" (stand-in dry run)" if args.standin else ""))

    gpu_ok, gpu_text = probe_gpu()
    if args.standin:
        gpu_text = f"none used (stand-in); local probe: {gpu_text}"
    header(report, args, gpu_text)
    step1(report, status)

    runner = Runner(args.build_dir, args.standin, args.work_dir)
    pre = None
    if not args.standin and not gpu_ok:
        pre = f"no usable GPU here ({gpu_text}); run with --standin for a dry run"
    elif not os.path.exists(runner.launcher):
        pre = f"{runner.launcher} does not exist (build failed or wrong --build-dir)"
    elif args.standin and not os.path.exists(os.path.join(runner.standin_lib, "libcupti.so.13")):
        pre = f"the stand-in is not built ({runner.standin_lib})"
    if pre:
        for title in ("2. CUDA examples under gprof-run", "3. gprof-run vs torch.profiler",
                      "4. Launch overhead"):
            report.section(title).status(FAIL, pre)
    else:
        timed(report, "2. CUDA examples under gprof-run", lambda s: examples_check.run(runner, s))
        timed(report, "3. gprof-run vs torch.profiler",
              lambda s: torch_compare.run(runner, s, args.python, steps=args.steps))
        timed(report, "4. Launch overhead",
              lambda s: launch_overhead.run(runner, s, args.python))

    s = report.section("5. Report")
    total = time.time() - float(status.get("start_epoch") or time.time())
    s.check(total < 480, f"whole check took {total:.0f} s (limit 480 s)")
    s.add(f"Report file: `{args.out}`; profiles and logs: `{os.path.dirname(args.work_dir)}`.")
    text = report.render()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    sys.stdout.write(f"\nReport written to {args.out}\n")
    return 1 if report.failed() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

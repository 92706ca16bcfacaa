#!/usr/bin/env python3
"""Driver of scripts/gpu-check (steps 2-10; the bash entry point did step 1, build and ctest).

Standard library only; torch is used only by torch_loop.py, torch_inside.py and
torch_matmul_add.py, in their own processes. Writes one Markdown report to --out and to stdout;
prints each step's start and result with the seconds since the check began on stderr; exits 1
when any check failed, 0 otherwise. No run goes past --deadline-epoch (runner.py): the report is
written in time.
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clock_skew  # noqa: E402
import cupti_life_check  # noqa: E402
import examples_check  # noqa: E402
import gpu_work_check  # noqa: E402
import launch_overhead  # noqa: E402
import no_record_copies_check  # noqa: E402
import torch_compare  # noqa: E402
import torch_inside_check  # noqa: E402
import torch_memory_check  # noqa: E402
import torch_ops_check  # noqa: E402
import windows_check  # noqa: E402
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
    p.add_argument("--deadline-epoch", type=float, default=0.0,
                   help="time.time() by which the report must be written (0: start + 470 s)")
    p.add_argument("--copy-to", default="", help="also copy the report here")
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
    s = report.section("1. Build (Release) and ctest -L gpu -j1")
    s.seconds = float(status.get("build_seconds", 0) or 0) + float(status.get("ctest_seconds", 0)
                                                                  or 0)
    build = status.get("build", "missing")
    if build == "skipped":
        s.status(SKIP, f"build skipped (--skip-build); using {status.get('build_dir', '?')}")
    else:
        err = status.get("build_error", "?")
        if build != "ok" and err.startswith("cannot build:"):
            s.status(FAIL, f"not built — {err}")
        else:
            s.check(build == "ok", f"Release build ({status.get('build_seconds', '?')} s): {build}"
                    + (f"; first error: `{err}`; log {status.get('build_log', '?')}"
                       if build != "ok" else ""))
    log = status.get("ctest_log", "")
    text = ""
    if log and os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    deps = [v for k, v in status.items() if k.startswith("dep_")]
    if deps:
        s.add("What the build needs (checked before configuring):", "")
        s.add(*[f"- {d}" for d in deps])
        s.add("")
    if status.get("ctest") == "skipped":
        s.status(SKIP, f"ctest skipped: {status.get('ctest_why', '?')}")
        return s
    rc = status.get("ctest_rc", "")
    if rc == "":
        s.status(FAIL, "ctest -L gpu did not run")
        return s
    if rc == "124":
        s.status(FAIL, f"ctest -L gpu -j1 ran past its limit ({status.get('ctest_limit', '?')} s); "
                       f"log {log}")
    summary = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
    not_run = re.findall(r"^\s*\d+ - (\S+) \((Skipped|Disabled|Not Run)\)", text, re.M)
    failed = re.findall(r"^\s*\d+ - (\S+) \((Failed|Timeout|SEGFAULT|Subprocess aborted|"
                        r"Exception|Child aborted)[^)]*\)", text, re.M)
    if rc == "124":
        pass
    elif "No tests were found" in text:
        s.status(WARN, "ctest -L gpu: no gpu-labelled tests are registered")
    elif summary:
        total, nfail = int(summary.group(3)), int(summary.group(2))
        s.check(rc == "0" and nfail == 0, f"ctest -L gpu -j1: {total} tests, {nfail} failed, "
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


def device_name(gpu_ok, gpu_text):
    """The GPU's name for the report's last line: nvidia-smi's, else cuDeviceGetName's."""
    smi = command_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    if smi:
        return ", ".join(x.strip() for x in smi.splitlines() if x.strip())
    m = re.search(r"device\(s\): (.*?); driver", gpu_text)
    return m.group(1) if gpu_ok and m else f"no usable GPU ({gpu_text})"


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
        f"- device: {report.device}",
        f"- CUDA toolkit: {nvcc.group(1) if nvcc else '?'}; GPU: {gpu_text}"
        + (f"; nvidia-smi: {smi}" if smi else ""),
        f"- mode: {'STAND-IN dry run (tests/cudasim; no real GPU — figures are not GPU figures)' if args.standin else 'real GPU'}",
        f"- build: {os.path.abspath(args.build_dir)}; profiles in {args.work_dir}",
    ]


def progress(start_epoch, text):
    print(f"gpu-check: [{time.time() - start_epoch:6.1f} s] {text}", file=sys.stderr, flush=True)


def section_result(s):
    sc = [st for st, _ in s.checks]
    return FAIL if FAIL in sc else WARN if WARN in sc else PASS if PASS in sc else \
        SKIP if SKIP in sc else "-"


def timed(report, title, fn, start_epoch=None):
    s = report.section(title)
    t = time.perf_counter()
    if start_epoch is not None:
        progress(start_epoch, f"{title} ...")
    try:
        fn(s)
    except Exception as e:  # noqa: BLE001 - a crash in one phase is a failed check, not a hang
        s.status(FAIL, f"the check itself crashed: {type(e).__name__}: {e}")
    s.seconds = time.perf_counter() - t
    if start_epoch is not None:
        progress(start_epoch, f"{title}: {section_result(s)} ({s.seconds:.1f} s)")
    return s


def main(argv):
    args = parse_args(argv)
    if not args.work_dir:
        args.work_dir = tempfile.mkdtemp(prefix="gprof-gpu-check-")
    os.makedirs(args.work_dir, exist_ok=True)
    status = read_kv(args.build_status)
    report = Report("gprof-run GPU check" + (" (stand-in dry run)" if args.standin else ""))

    gpu_ok, gpu_text = probe_gpu()
    report.device = device_name(gpu_ok, gpu_text)
    if args.standin:
        gpu_text = f"none used (stand-in); local probe: {gpu_text}"
        report.device = "none (STAND-IN dry run on tests/cudasim)"
    header(report, args, gpu_text)
    step1(report, status)

    start_epoch = float(status.get("start_epoch") or time.time())
    deadline = args.deadline_epoch or start_epoch + 470
    runner = Runner(args.build_dir, args.standin, args.work_dir, deadline=deadline)
    pre = None
    if not args.standin and not gpu_ok:
        pre = f"no usable GPU here ({gpu_text}); run with --standin for a dry run"
    elif not os.path.exists(runner.launcher):
        pre = f"{runner.launcher} does not exist (build failed or wrong --build-dir)"
    elif args.standin and not os.path.exists(os.path.join(runner.standin_lib, "libcupti.so.13")):
        pre = f"the stand-in is not built ({runner.standin_lib})"
    titles = ["2. CUDA examples under gprof-run",
              "2b. GPU work at the edges: exit with kernels queued, graphs, cuModuleUnload",
              "2c. Copies that move nothing: does CUPTI write records for 0-byte and HtoH copies",
              "3. Windows without per-step synchronization",
              "3b. Busy GPU across windows (1 ms kernels, host far ahead, --wait 1)",
              "4. symbolName probe (kernel-regex steps)",
              "5. Clock skew: GPU record start vs its launch call",
              "6. gprof-run vs torch.profiler", "7. torch.profiler inside gprof-run",
              "8. Launch overhead",
              "9. torch ops: the seeds' matmul+add (64, 4096) against torch.profiler",
              "9b. torch memory columns: matmul+add at 4096 against profile_memory=True",
              "9c. Beside real CUPTI: libcupti loaded, after torch.profiler, SIGTERM, fork"]
    if pre:
        progress(start_epoch, f"cannot profile: {pre}")
        for title in titles:
            report.section(title).status(FAIL, pre)
    else:
        rows = []
        timed(report, titles[0], lambda s: rows.extend(examples_check.run(runner, s) or []),
              start_epoch)
        timed(report, titles[1], lambda s: (gpu_work_check.run_exit_queued(runner, s),
                                            gpu_work_check.run_graphs(runner, s),
                                            gpu_work_check.run_module_unload(runner, s)),
              start_epoch)
        timed(report, titles[2], lambda s: no_record_copies_check.run(runner, s), start_epoch)
        timed(report, titles[3], lambda s: windows_check.run_nosync(runner, s), start_epoch)
        timed(report, titles[4], lambda s: windows_check.run_busy(runner, s), start_epoch)
        timed(report, titles[5], lambda s: windows_check.run_symbol_probe(runner, s), start_epoch)
        timed(report, titles[6], lambda s: clock_skew.run(
            s, [(r["case"], r.get("trace", "")) for r in rows]), start_epoch)
        timed(report, titles[7], lambda s: torch_compare.run(runner, s, args.python,
                                                             steps=args.steps), start_epoch)
        inside = {}
        timed(report, titles[8], lambda s: inside.setdefault(
            "run", torch_inside_check.run(runner, s, args.python)), start_epoch)
        timed(report, titles[9], lambda s: launch_overhead.run(runner, s, args.python),
              start_epoch)
        timed(report, titles[10], lambda s: torch_ops_check.run(runner, s, args.python),
              start_epoch)
        timed(report, titles[11], lambda s: torch_memory_check.run(runner, s, args.python),
              start_epoch)
        timed(report, titles[12], lambda s: cupti_life_check.run(runner, s, args.python,
                                                                 inside.get("run")), start_epoch)

    s = report.section("10. Report")
    total = time.time() - start_epoch
    s.check(total < 480, f"whole check took {total:.0f} s (limit 480 s)")
    s.add(f"Report file: `{args.out}`; profiles and logs: `{os.path.dirname(args.work_dir)}`.")
    text = report.render()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    sys.stdout.write(f"\nReport written to {args.out}\n")
    if args.copy_to:
        try:
            os.makedirs(args.copy_to, exist_ok=True)
            shutil.copy(args.out, os.path.join(args.copy_to, "gpu-check-report.md"))
        except OSError as e:
            print(f"gpu-check: could not copy the report to {args.copy_to}: {e}", file=sys.stderr)
    progress(start_epoch, f"overall {'FAIL' if report.failed() else 'PASS'}; report {args.out}")
    return 1 if report.failed() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Step 7 of scripts/gpu-check: torch.profiler started inside a program that gprof-run profiles.

torch_inside.py enters torch.profiler.profile around a few CUDA ops while gprof-run already holds
CUPTI. Checked: the program exits 0 and prints GPROF_EXAMPLE_DONE torch_inside (FAIL otherwise);
gprof-run's closing line (`gprof-run: recorded ...` on stderr) is there (FAIL otherwise); some
gprof-run line on stderr says that another tool (torch.profiler, Kineto, "another profiling
tool") held or took CUPTI: PASS with that line, else WARN with the closing line's text (the
wording is not fixed yet; a person reads it). The kernels and loss counters gprof-run recorded
are reported, not judged.
"""

import os
import re

from kineto_trace import Trace
from report import FAIL, PASS, SKIP, WARN
import torch_compare

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_inside.py")
CLOSING_RE = re.compile(r"^gprof-run: recorded\b")
OTHER_TOOL_RE = re.compile(r"torch\.profiler|kineto|another (?:profil\w* )?tool|other profil\w*|"
                           r"another profiler", re.I)
CUPTI_RE = re.compile(r"cupti|gpu (?:activity|collection|records?)|activity buffers?", re.I)


def gprof_lines(stderr):
    return [line.strip() for line in stderr.splitlines() if line.startswith("gprof-run:")]


def closing_line(stderr):
    """gprof-run's closing line (the last `gprof-run: recorded ...`), or ""."""
    found = [line for line in gprof_lines(stderr) if CLOSING_RE.match(line)]
    return found[-1] if found else ""


def other_tool_line(stderr):
    """The first gprof-run line that names another tool together with CUPTI, or ""."""
    for line in gprof_lines(stderr):
        if OTHER_TOOL_RE.search(line) and CUPTI_RE.search(line):
            return line
    return ""


def judge(returncode, stdout, stderr, timed_out=False):
    """[(status, text)] for one run (see the module doc)."""
    checks = []
    ok = returncode == 0 and not timed_out and "GPROF_EXAMPLE_DONE torch_inside" in stdout
    checks.append((PASS if ok else FAIL, f"the program with torch.profiler inside exited "
                   f"{returncode}" + (" (timed out)" if timed_out else "")
                   + ("" if ok else " or did not print GPROF_EXAMPLE_DONE torch_inside")))
    close = closing_line(stderr)
    if not close:
        checks.append((FAIL, "gprof-run printed no closing line (`gprof-run: recorded ...`)"))
    other = other_tool_line(stderr)
    if other:
        checks.append((PASS, f"gprof-run says what happened: `{_short(other)}`"))
    elif close:
        checks.append((WARN, "no gprof-run line names torch.profiler/another tool and CUPTI; "
                             f"closing line: `{_short(close)}`"))
    return checks


def _short(text, width=400):
    return text if len(text) <= width else text[:width - 3] + "..."


def run(runner, section, python):
    """Runs and judges torch_inside.py; returns its RunResult (None when skipped)."""
    status, text = torch_compare.torch_status(runner, python)
    if status != "ok":
        why = "torch not importable" if status == "no-torch" else "torch has no CUDA device"
        section.status(SKIP if runner.standin else FAIL,
                       f"skipped: {why}" if runner.standin else f"{why} with `{python}`")
        return
    r = runner.profile("torch-inside", [python, SCRIPT], timeout_s=90)
    for st, msg in judge(r.returncode, r.stdout, r.stderr, r.timed_out):
        section.status(st, msg)
    lines = gprof_lines(r.stderr)
    if lines:
        section.add("gprof-run's lines on stderr:", "", "```", *[_short(x, 600) for x in lines[-8:]],
                    "```", "")
    seen = [x for x in r.stdout.splitlines() if x.startswith("torch_inside:")]
    if seen:
        section.add(f"Program: {seen[-1]}", "")
    if r.trace:
        try:
            t = Trace(r.trace)
            lost = {k: v for k, v in t.loss_counters().items() if v}
            section.add(f"gprof-run recorded {t.count('kernel')} kernels; gpu_status "
                        f"'{t.gprof.get('gpu_status', '?')}'; non-zero loss counters: "
                        f"{lost or 'none'} (reported, not judged).", "")
        except (OSError, ValueError) as e:
            section.add(f"gprof-run's trace does not parse: {e}", "")
    elif not r.ok():
        section.add("```", r.tail(), "```", "")
    return r  # step 9c reads the program's own after-profiler line and the trace

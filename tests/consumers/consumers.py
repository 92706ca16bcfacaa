"""What the consumers tests share: the two trace consumers they hand gprof-run's traces to, Meta's
Holistic Trace Analysis (HTA, PyPI HolisticTraceAnalysis 0.5.0) and TensorBoard's PyTorch
profiler plugin (PyPI torch-tb-profiler 0.4.3), each through its own parser, as a user would.
They run in the consumers venv (scripts/consumers-venv), which has no torch: the torch traces
they read are the ones the torch tests leave in TORCH_OUTPUTS.

Environment: GPROF_RUN (the gprof-run under test), TORCH_OUTPUTS (the folder the torch tests keep
their runs in for these tests).
"""
import contextlib
import io
import json
import logging
import os
import unittest
import warnings

GPROF_RUN = os.environ.get("GPROF_RUN", "")
TORCH_OUTPUTS = os.environ.get("TORCH_OUTPUTS", "")

try:
    import hta  # noqa: F401
    import torch_tb_profiler  # noqa: F401
    MISSING = ""
except ImportError as e:
    MISSING = "no trace consumers in this Python (%s); scripts/consumers-venv installs them" % e

needs_consumers = unittest.skipIf(MISSING, MISSING)


def torch_output(name):
    """The output folder a torch test kept for these tests (TORCH_OUTPUTS/name), or skips the
    test when it is not there (no torch, or the torch test did not get that far: it fails then)."""
    path = os.path.join(TORCH_OUTPUTS, name) if TORCH_OUTPUTS else ""
    if not path or not os.path.isdir(path):
        raise unittest.SkipTest("no torch run in %r: the torch tests (label torch) write it; "
                                "they need GPROF_TORCH_PYTHON" % path)
    return path


def load_json(path):
    with open(path) as f:
        return json.load(f)


def tensorboard_steps(trace):
    """The plugin's overview figures for a trace document: [(step name, {role: us})], from its
    own parser (RunProfileData.from_json, process(): what its overview page shows)."""
    from torch_tb_profiler.profiler.event_parser import ProfileRole
    data = tensorboard_profile(trace)
    return [(name, {r.name: c.costs[r] for r in ProfileRole})
            for name, c in zip(data.steps_names, data.steps_costs)]


def tensorboard_profile(trace, analyze=False):
    """The plugin's RunProfileData of a trace document, processed (and analyzed: kernel and GPU
    metrics views) as its loader does for one worker."""
    from torch_tb_profiler.profiler.data import RunProfileData
    data = RunProfileData.from_json("worker0", None, trace)
    with quiet():
        data.process()
        if analyze:
            data.analyze()
    return data


@contextlib.contextmanager
def quiet():
    """HTA and the plugin log every file they parse and warn about pandas; the tests' output
    keeps only what failed."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


def hta_analysis(trace_files, trace_dir, include_last_step=True):
    """HTA's TraceAnalysis over {rank: trace path}, as a user builds it."""
    from hta.trace_analysis import TraceAnalysis
    with quiet():
        return TraceAnalysis(trace_files=trace_files, trace_dir=trace_dir,
                             include_last_profiler_step=include_last_step)

# The configuration of gprof-run's own torch profiler (_gprof_run_torch.py turns it on on every
# thread): which of torch's op observers hands gprof-run each op (ITT or NVTX), and the
# ProfilerConfig built from it. Loaded by _gprof_run_torch.install() only.
# Rules: those of _gprof_run_torch.py.
import os


def op_range_state(torch, shapes, failed):
    """torch's ITT observer when gprof-run's library is the ITT collector (the launcher sets
    GPROF_TORCH_ITT=1 then) and no shapes are wanted: it hands over each op's bare name, where
    the NVTX observer first formats "name, seq = N, op_id = M" into a new string per op
    (bench figure 8). Otherwise, and for shapes, NVTX."""
    state = torch.autograd.ProfilerState
    try:
        if (not shapes and os.environ.get("GPROF_TORCH_ITT") == "1"
                and torch.profiler.itt.is_available()):
            return state.ITT
    except Exception as exc:
        failed("looking for torch's ITT support", exc)
    return state.NVTX


def build(torch, shapes, failed):
    """ProfilerConfig(state, record_shapes, ...) for the op observer. Raises where torch lacks
    the APIs."""
    return torch.autograd.ProfilerConfig(
        op_range_state(torch, shapes, failed), shapes,
        False, False, False, False, torch._C._profiler._ExperimentalConfig())

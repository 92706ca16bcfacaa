# gprof-run's Python hook, the program's own torch profiler (part of the torch part,
# _gprof_run_torch.py, which loads this module from its install() and owns the state used here):
# - our per-op NVTX ranges step aside on a thread while the program's profiler runs there (torch
#   refuses a second profiler on a thread: "Profiler is already enabled on this thread");
# - CUPTI changes hands: before torch.profiler prepares or starts a profile with CUDA activity
#   (Kineto then registers its own activity buffer callbacks, which are process-wide), the
#   injection library flushes its buffers and steps aside (gprof_run_cupti_hand_over); after the
#   profile stops, it takes CUPTI back (gprof_run_cupti_take_back). collector/cupti/handover.cpp
#   does the CUPTI part; docs/PYTORCH.md says what the user sees.
# Rules: those of _gprof_run_torch.py (never raise into the program, never print; the program's
# own exceptions pass through unchanged). The hand-over calls go through ctypes, which releases
# the GIL while the library flushes (bounded: about a second at most).
import functools
import os
import threading

import _gprof_run_torch as _core

# What this part did in this process (tests read these).
cupti_hand_overs = 0   # hand-over calls that reached the library
cupti_take_backs = 0   # take-back calls that reached the library

_cupti_lock = threading.Lock()  # guards the state below; held across the library calls, which
                                # never call back into Python
_cupti_calls = None             # (hand_over, take_back) of the injection library, or False
_handed_over = False            # we asked for a hand-over and have not taken CUPTI back yet


def _library_calls():
    """The injection library's two entry points, looked up once; False without the library."""
    global _cupti_calls
    if _cupti_calls is None:
        _cupti_calls = False
        path = os.environ.get("CUDA_INJECTION64_PATH") or os.environ.get("NVTX_INJECTION64_PATH")
        if path:
            try:
                import ctypes
                lib = ctypes.CDLL(path)  # the copy the driver or NVTX loaded: the same handle
                give = lib.gprof_run_cupti_hand_over
                take = lib.gprof_run_cupti_take_back
                for fn in (give, take):
                    fn.argtypes = ()
                    fn.restype = ctypes.c_int
                _cupti_calls = (give, take)
            except Exception as exc:  # an older library without them: no hand-over
                _core._failed("finding the injection library's CUPTI hand-over", exc)
    return _cupti_calls


def _wants_cuda(args, kwargs):
    """Whether a _prepare_profiler/_enable_profiler call asks for CUDA activity (its second
    argument, `activities`: a set of ProfilerActivity), i.e. Kineto will take CUPTI."""
    activities = kwargs.get("activities", args[1] if len(args) > 1 else None)
    try:
        return any(getattr(a, "name", "") == "CUDA" for a in activities or ())
    except Exception:
        return False


def _hand_over():
    global _handed_over, cupti_hand_overs
    calls = _library_calls()
    if not calls:
        return
    with _cupti_lock:
        if _handed_over:
            return
        _handed_over = True
        cupti_hand_overs += 1
        try:
            calls[0]()
        except Exception as exc:
            _core._failed("handing CUPTI over to the program's profiler", exc)


def _take_back():
    global _handed_over, cupti_take_backs
    calls = _library_calls()
    if not calls:
        return
    with _cupti_lock:
        if not _handed_over:
            return
        _handed_over = False
        cupti_take_backs += 1
        try:
            calls[1]()
        except Exception as exc:
            _core._failed("taking CUPTI back from the program's profiler", exc)


def _wrap_prepare(real):
    @functools.wraps(real)
    def _prepare_profiler(*args, **kwargs):
        try:
            if _wants_cuda(args, kwargs):
                _hand_over()  # Kineto registers its callbacks here (its configure step)
        except Exception as exc:
            _core._failed("handing CUPTI over to the program's profiler", exc)
        return real(*args, **kwargs)
    return _prepare_profiler


def _wrap_enable(real):
    @functools.wraps(real)
    def _enable_profiler(*args, **kwargs):
        ops = None
        try:
            if _wants_cuda(args, kwargs):
                _hand_over()  # no-op after _prepare_profiler did it
            ops = getattr(_core._local, "ops", None)
            if ops is not None and ops.on:
                _core._ours_off(ops)
            else:
                ops = None
        except Exception as exc:
            _core._failed("stepping aside for the program's torch profiler", exc)
        try:
            result = real(*args, **kwargs)
        except BaseException:
            if ops is not None and ops.wanted:
                _core._ours_on(ops)  # the program's profiler did not start: ours is back
            _take_back()
            raise
        with _core._count_lock:
            _core.torch_profiler_spans += 1
        _core._mark(_core.MARK_PROFILER_STARTED)
        return result
    return _enable_profiler


def _wrap_disable(real):
    @functools.wraps(real)
    def _disable_profiler(*args, **kwargs):
        ops = None
        try:
            ops = getattr(_core._local, "ops", None)
            if ops is not None and ops.on:
                # The program stops a profiler on a thread where only ours runs: ours must not
                # be what torch stops; torch answers the program as it would without us.
                _core._ours_off(ops)
        except Exception as exc:
            _core._failed("stepping aside for the program's torch profiler", exc)
        try:
            result = real(*args, **kwargs)  # Kineto's stop: its kinds off, its buffers flushed
        finally:
            _take_back()
            try:
                if ops is not None and ops.wanted and not ops.on:
                    _core._ours_on(ops)
            except Exception as exc:
                _core._failed("turning torch's op ranges back on", exc)
        _core._mark(_core.MARK_PROFILER_STOPPED)
        return result
    return _disable_profiler


def profiler_flag_on(torch):
    """torch's Python-side "a profiler is on" flag, which emit_nvtx() and torch.profiler set too
    (torch.autograd.profiler._run_on_profiler_start): torch.compile's code adds its
    record_function scopes only while it is set ("## Call CompiledFxGraph ... ##", inductor's
    Triton kernel launches). Kept set while our op ranges are on: the program's own profiler
    clears it when it stops (_run_on_profiler_stop), so that is wrapped to set it again."""
    profiler = torch.autograd.profiler
    setter = getattr(profiler, "_set_is_profiler_enabled", None)
    real_stop = getattr(profiler, "_run_on_profiler_stop", None)
    if setter is None:
        return
    setter(True)
    if real_stop is None:
        return

    @functools.wraps(real_stop)
    def _run_on_profiler_stop(*args, **kwargs):
        result = real_stop(*args, **kwargs)
        try:
            setter(True)  # ours are still on (on this and the other threads)
        except Exception as exc:
            _core._failed("setting torch's profiler flag again", exc)
        return result

    profiler._run_on_profiler_stop = _run_on_profiler_stop


def install_profiler_wrappers(torch):
    """Every place the program's torch profilers (torch.profiler.profile,
    torch.autograd.profiler.profile, emit_nvtx, emit_itt, the legacy profiler) look up torch's
    enable/disable functions at call time: module globals of torch.autograd.profiler and
    torch.autograd.profiler_legacy, and torch.autograd for direct callers. _prepare_profiler
    coexists with our NVTX state, but Kineto takes CUPTI in it: wrapped for the hand-over only."""
    autograd = torch.autograd
    pairs = [("_enable_profiler", "_disable_profiler", _core._real_enable, _core._real_disable)]
    legacy_enable = getattr(autograd, "_enable_profiler_legacy", None)
    legacy_disable = getattr(autograd, "_disable_profiler_legacy", None)
    if legacy_enable is not None and legacy_disable is not None:
        pairs.append(("_enable_profiler_legacy", "_disable_profiler_legacy",
                      legacy_enable, legacy_disable))
    modules = [autograd] + [m for m in (getattr(autograd, "profiler", None),
                                        getattr(autograd, "profiler_legacy", None))
                            if m is not None]
    for enable_name, disable_name, enable, disable in pairs:
        wrapped_enable, wrapped_disable = _wrap_enable(enable), _wrap_disable(disable)
        for module in modules:
            if getattr(module, enable_name, None) is enable:
                setattr(module, enable_name, wrapped_enable)
            if getattr(module, disable_name, None) is disable:
                setattr(module, disable_name, wrapped_disable)
    prepare = getattr(autograd, "_prepare_profiler", None)
    if prepare is not None:
        wrapped_prepare = _wrap_prepare(prepare)
        for module in modules:
            if getattr(module, "_prepare_profiler", None) is prepare:
                setattr(module, "_prepare_profiler", wrapped_prepare)

# gprof-run's torch part of the Python hook (issue 12): what happens to a torch program once its
# `import torch` has finished. _gprof_run_hook.on_torch_imported() imports this module then, and
# only then (a program without torch never loads it), and calls install(). docs/PYTORCH.md says
# what the user sees.
#
# Rules for this file (it runs inside the user's program):
# - Never raise into the program and never print. Our own failures go to the hook's once-only
#   reporter (stderr at GPROF_LOG_LEVEL=debug|trace only); torch refusing a call just means that
#   part is skipped, quietly. A torch without an API the ops or steps need gets one stderr line
#   naming its version and what is missing (_gprof_run_profiler_config.say_unsupported).
#   Exceptions raised by the program's own calls that pass through a wrapper below (torch's
#   profiler entry points, profile.step, record_function.__enter__) reach the program unchanged.
# - Never initialize CUDA: no torch.cuda.synchronize/init/current_device, nothing that creates a
#   context. torch.cuda.nvtx and the NVTX profiler state only call the NVTX library. With
#   GPROF_TORCH_MEMORY=1, _gprof_run_memory.py waits for the program's own CUDA initialization.
# - Threads: install() runs on the thread that imported torch. _on_new_thread() runs on each
#   threading.Thread started later, as its first profile event (op ranges on, and the memory
#   part's thread tag). The wrappers run on whichever thread the program calls torch's profiler
#   from; the optimizer hook on whichever thread calls optimizer.step(), the forward pre-hook
#   (once) on whichever thread runs the first forward. Per-thread state lives
#   in a threading.local; the step counters are guarded by _steps_lock.
# - torch's profiler state is per thread, and torch refuses a second profiler on a thread
#   ("Profiler is already enabled on this thread"): ours steps aside while the program runs its
#   own (the _enable/_disable wrappers, in _gprof_run_own_profiler.py, which also hands CUPTI over
#   to the program's profiler and takes it back).
# - Cheap: one NVTX profiler enable per thread, a few attribute lookups per optimizer step and
#   per record_function.__enter__ until the program's own steps are seen.
import functools
import os
import sys
import threading

try:
    from _thread import allocate_lock, get_ident
except ImportError:  # pragma: no cover - every CPython has _thread
    from threading import Lock as allocate_lock, get_ident

# What the hook did in this process (tests read these).
ops_enabled_threads = 0       # threads on which our per-op NVTX ranges were turned on
torch_profiler_spans = 0      # times the program started a torch profiler of its own
optimizer_steps = 0           # optimizer.step() calls seen (every optimizer, every call)
own_steps_detected = False    # the program has ProfilerStep steps of its own
step_ranges = 0               # ProfilerStep#N ranges started by us (ProfilerStep#0 included)

# NVTX marks the collector reads (C++ side); keep the strings exactly as they are.
MARK_PROFILER_STARTED = "gprof-run: torch.profiler started"
MARK_PROFILER_STOPPED = "gprof-run: torch.profiler stopped"
MARK_OWN_STEPS = "gprof-run: program has its own steps"
MARK_TORCH_IMPORTED = "gprof-run: torch imported"
STEP_PREFIX = "ProfilerStep#"

_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")

_report = None               # the hook's once-only reporter: _report(what, exc), never raises
_nvtx = None                 # torch.cuda.nvtx; its functions are looked up at each call, so
                             # a test may put recorders in their place
_real_enable = None          # torch's own _enable_profiler / _disable_profiler
_real_disable = None
_nvtx_config = None          # ProfilerConfig(ProfilerState.NVTX, record_shapes, ...), built by
                             # _gprof_run_profiler_config.py
# The two locks are never held together, and never while calling the program or torch's profiler.
_count_lock = allocate_lock()  # guards ops_enabled_threads and torch_profiler_spans

_steps_lock = allocate_lock()  # guards the step state below; held across NVTX range calls,
                               # which never call back into Python
_steps_on = False            # we are turning optimizer steps into ranges
_open_step = None            # id of the open ProfilerStep range (range_start's handle)
_first_forward = None        # handle of the global forward pre-hook that starts step 0
_forward_seen = False        # that hook has seen its first eager forward
_own_steps_unwrap = []       # (owner, name, ours, original): undone once own steps are seen


def _env_bool(name, default):
    value = os.environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return default  # unset, or a value the launcher would have refused


def _failed(what, exc):
    if _report is not None:
        _report(what, exc)


def _mark(message):
    try:
        _nvtx.mark(message)
    except Exception:
        pass  # torch without NVTX: nobody could read the mark anyway


# ---- 1. torch's per-op NVTX ranges, on every thread ---------------------------------------------

class _ThreadOps:
    """Our profiler's state on one thread, kept in _local.ops and referenced from nowhere else:
    when the thread ends, Python frees the thread's locals on that thread, and __del__ turns our
    profiler off there, before torch's thread-local callbacks are destroyed (torch warns "Leaked
    callback handle" on stderr for a profiler still on at thread exit)."""

    __slots__ = ("ident", "on", "wanted", "disable")

    def __init__(self, disable):
        self.ident = get_ident()
        self.on = False       # our NVTX profiler is on on this thread now
        self.wanted = False   # ours belongs on here whenever the program's own profiler is not
        self.disable = disable  # held here: module globals may be gone at interpreter exit

    def __del__(self):
        try:
            if self.on and get_ident() == self.ident:
                self.on = False
                self.disable()
        except Exception:
            pass


_local = threading.local()


def _thread_ops():
    ops = getattr(_local, "ops", None)
    if ops is None:
        ops = _ThreadOps(_real_disable)
        _local.ops = ops
    return ops


def _ours_on(ops):
    """Turns our NVTX profiler on on this thread. False when torch refuses (a profiler of the
    program's is on here): then this thread goes without op ranges for now."""
    try:
        _real_enable(_nvtx_config, set())
    except Exception:
        return False
    ops.on = True
    return True


def _ours_off(ops):
    ops.on = False
    try:
        _real_disable()  # returns an empty result for the NVTX state: nothing to keep
    except Exception as exc:
        _failed("turning torch's op ranges off", exc)


def _ops_on_this_thread():
    """Once per thread: our op ranges on. True when they are. Never raises."""
    global ops_enabled_threads
    try:
        ops = _thread_ops()
        if ops.wanted:
            return True
        if not _ours_on(ops):
            return False
        ops.wanted = True
        with _count_lock:
            ops_enabled_threads += 1
        return True
    except Exception as exc:
        _failed("turning torch's op ranges on", exc)
        return False


def _install_thread_hook(ops, memory):
    """Every threading.Thread started from now on turns our op ranges on (`ops`) and calls
    `memory` (_gprof_run_memory.on_new_thread, or None) as its first act, via threading's
    per-thread profile function: ours takes itself off at its first call, puts back the program's
    own (set with threading.setprofile before torch was imported) and hands it that first event,
    so the program's profile function sees everything it would have seen."""
    previous = (threading.getprofile() if hasattr(threading, "getprofile")
                else getattr(threading, "_profile_hook", None))

    def _on_new_thread(frame, event, arg):
        sys.setprofile(previous)
        if ops:
            _ops_on_this_thread()
        if memory is not None:
            memory()  # never raises
        if previous is not None:
            return previous(frame, event, arg)  # the program's: its exceptions are its own
        return None

    threading.setprofile(_on_new_thread)


def _ops_off_at_exit():
    """atexit, on the main thread after the program's own atexit handlers registered after torch
    was imported: our profiler off there, so torch has nothing to warn about at exit."""
    try:
        ops = getattr(_local, "ops", None)
        if ops is not None:
            ops.wanted = False
            if ops.on:
                _ours_off(ops)
    except Exception as exc:
        _failed("turning torch's op ranges off at exit", exc)


# ---- 2. the program's own torch profiler: _gprof_run_own_profiler.py ----------------------------

# ---- 3. optimizer steps as ProfilerStep#N ranges ------------------------------------------------

def _on_first_forward(module, args):
    """torch's global forward pre-hook: ProfilerStep#0 starts at the first forward of any
    nn.Module, so step 0 is the first iteration, not the start-up. Not at the first op of the
    thread that later steps the optimizer: that thread is known only once it steps, an NVTX range
    cannot start in the past, and the importing thread's first op is the model's construction."""
    global _open_step, step_ranges, _first_forward, _forward_seen
    try:
        if _is_compiling():
            return None  # dynamo traces this into the program's graph: a no-op, no graph break
        with _steps_lock:
            handle = _first_forward
            if handle is None or _forward_seen:
                return None  # another thread's forward got here first, or kept (below)
            _forward_seen = True
            # Taken off (module calls go back to torch's fast path), unless torch.compile made
            # graphs while it was there: they guard on the hooks, and would be compiled again.
            if not _compiled_anything():
                _first_forward = None
                handle.remove()
            if _steps_on and _open_step is None and optimizer_steps == 0:
                _open_step = _nvtx.range_start(STEP_PREFIX + "0")
                step_ranges += 1
    except Exception as exc:
        _failed("starting step 0 at the first forward", exc)
    return None


def _say_unsupported(torch, exc, lost):
    try:
        import _gprof_run_profiler_config
        _gprof_run_profiler_config.say_unsupported(torch, exc, lost)  # never raises
    except Exception:
        pass


_is_compiling = bool  # torch.compiler.is_compiling where torch has it (_install_steps)


def _compiled_anything():
    try:  # dynamo's own counter of the graphs it made
        return sys.modules["torch._dynamo.utils"].counters["stats"]["unique_graphs"] > 0
    except Exception:
        return False


def _end_open_step_at_exit():
    """atexit (after the program's handlers registered after torch was imported, before the
    library's Py_AtExit flush): the open step ends, so no range of ours is left open."""
    global _open_step, _steps_on
    try:
        with _steps_lock:
            _steps_on = False
            if _open_step is not None:
                _nvtx.range_end(_open_step)
                _open_step = None
    except Exception as exc:
        _failed("ending the last step at exit", exc)


def _on_optimizer_step(optimizer, args, kwargs):
    """torch's global optimizer post hook: runs at the end of every optimizer.step(), inside
    torch's `Optimizer.step#...` range. Never raises."""
    global optimizer_steps, _open_step, step_ranges
    try:
        with _steps_lock:
            optimizer_steps += 1
            if not _steps_on:
                return
            if _open_step is not None:
                _nvtx.range_end(_open_step)
            elif step_ranges == 0:  # no forward began step 0: an empty one keeps step N the
                _nvtx.range_end(_nvtx.range_start(STEP_PREFIX + "0"))  # N-th step boundary, as
                step_ranges += 1                                        # windows count them
            _open_step = _nvtx.range_start(STEP_PREFIX + str(optimizer_steps))
            step_ranges += 1
    except Exception as exc:
        _failed("marking an optimizer step", exc)


def _own_steps_seen():
    """The program has steps of its own: ours end here, once. Never raises."""
    global own_steps_detected, _steps_on, _open_step, _first_forward
    try:
        with _steps_lock:
            if own_steps_detected:
                return
            own_steps_detected = True
            _steps_on = False
            if _open_step is not None:
                _nvtx.range_end(_open_step)
                _open_step = None
            if _first_forward is not None:
                _first_forward.remove()
                _first_forward = None
        _mark(MARK_OWN_STEPS)
        # Nothing left to detect: the program's calls go straight to torch again (unless someone
        # wrapped the same method after us; then ours stays, a call-through).
        for owner, name, ours, original in _own_steps_unwrap:
            if owner.__dict__.get(name) is ours:
                setattr(owner, name, original)
    except Exception as exc:
        _failed("noticing the program's own steps", exc)


def _install_own_steps_detection(torch):
    profile = torch.profiler.profile
    real_step = profile.__dict__["step"]

    @functools.wraps(real_step)
    def step(self, *args, **kwargs):
        _own_steps_seen()
        return real_step(self, *args, **kwargs)

    record_function = torch.autograd.profiler.record_function
    real_enter = record_function.__dict__["__enter__"]

    # functools.wraps matters: TorchScript compiles record_function from the source it finds by
    # unwrapping (__wrapped__), so scripted code keeps working.
    @functools.wraps(real_enter)
    def __enter__(self):
        if not own_steps_detected:
            try:
                name = self.name
                if isinstance(name, str) and name.startswith("ProfilerStep"):
                    _own_steps_seen()
            except Exception:
                pass
        return real_enter(self)

    profile.step = step
    record_function.__enter__ = __enter__
    _own_steps_unwrap.extend([(profile, "step", step, real_step),
                              (record_function, "__enter__", __enter__, real_enter)])


def _install_steps(torch):
    """Raises (and leaves nothing half done that matters) where torch lacks global optimizer
    hooks or NVTX; the caller then goes without steps."""
    global _steps_on, _first_forward, _is_compiling
    _is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", _is_compiling)
    # torch.optim deletes its `optimizer` attribute; the module is loaded with torch.
    from torch.optim.optimizer import register_optimizer_step_post_hook as register
    from torch.nn.modules.module import register_module_forward_pre_hook as on_forward
    import atexit
    _nvtx.range_start  # raises where torch has no NVTX
    _install_own_steps_detection(torch)
    with _steps_lock:
        _steps_on = True
        _first_forward = on_forward(_on_first_forward)
    register(_on_optimizer_step)
    atexit.register(_end_open_step_at_exit)


# ---- entry ---------------------------------------------------------------------------------------

def _after_fork_in_child():
    """A child forked while another thread held one of our locks (DataLoader workers fork from a
    training process) would wait for it forever: the child gets fresh ones. It runs on the one
    thread the child has, before any of the program's code."""
    global _count_lock, _steps_lock, _open_step, _steps_on
    _count_lock = allocate_lock()
    _steps_lock = allocate_lock()
    _steps_on, _open_step = False, None  # the child's library is inert; the range is the parent's


def _install_memory(torch):
    """GPROF_TORCH_MEMORY=1 (gprof-run --profile-memory): the allocator's own events, from CUDA
    initialization on (_gprof_run_memory.py, imported only then). Returns the function each new
    thread calls, or None. Never raises."""
    if os.environ.get("GPROF_TORCH_MEMORY") != "1":
        return None
    try:
        import _gprof_run_memory
        if _gprof_run_memory.install(torch, _report):  # never raises
            return _gprof_run_memory.on_new_thread
    except Exception as exc:
        _failed("loading the memory recording", exc)
    return None


def install(torch, report=None):
    """Called once per process by on_torch_imported(), on the thread that imported torch, with
    the torch module. Reads GPROF_TORCH_OPS, GPROF_RECORD_SHAPES, GPROF_TORCH_MEMORY and
    GPROF_TORCH_STEPS. Never raises."""
    global _report, _nvtx, _real_enable, _real_disable, _nvtx_config
    _report = report
    try:
        import _gprof_run_profiler_config
        shapes = _env_bool("GPROF_RECORD_SHAPES", False)
        _nvtx_config = _gprof_run_profiler_config.build(torch, shapes, _failed)
        _real_enable = torch.autograd._enable_profiler
        _real_disable = torch.autograd._disable_profiler
        _nvtx = torch.cuda.nvtx
    except Exception as exc:
        _say_unsupported(torch, exc, "no torch ops and no steps")
        return

    # The process's first NVTX call initializes our library: made inside the program's first op,
    # that op's begin was lost and its end counted as an unmatched pop.
    _mark(MARK_TORCH_IMPORTED)

    try:
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
    except Exception as exc:
        _failed("registering a fork handler", exc)

    try:
        import _gprof_run_own_profiler
        _gprof_run_own_profiler.install_profiler_wrappers(torch)
    except Exception as exc:
        _failed("wrapping torch's profiler entry points", exc)
        return  # without them ours would break the program's own profiler: no op ranges

    # A refusal on the importing thread, where the program cannot have a profiler on yet, is
    # torch saying no for good (e.g. a build without NVTX): then no thread tries.
    ops = _env_bool("GPROF_TORCH_OPS", True) and _ops_on_this_thread()
    if ops:
        try:
            _gprof_run_own_profiler.profiler_flag_on(torch)
        except Exception as exc:
            _failed("setting torch's profiler flag", exc)
    memory = _install_memory(torch)
    if ops or memory is not None:
        try:
            _install_thread_hook(ops, memory)
            if ops:
                import atexit
                atexit.register(_ops_off_at_exit)
        except Exception as exc:
            _failed("watching for new threads", exc)

    steps = os.environ.get("GPROF_TORCH_STEPS", "optimizer").strip().lower()
    if steps != "off":
        try:
            _install_steps(torch)
        except Exception as exc:  # torch without NVTX or without global optimizer hooks
            _say_unsupported(torch, exc, "no steps")

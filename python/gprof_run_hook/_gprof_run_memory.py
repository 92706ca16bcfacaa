# gprof-run's torch memory part of the Python hook (issue 19; docs/PYTORCH.md, "Memory
# (--profile-memory)"): with GPROF_TORCH_MEMORY=1 (gprof-run --profile-memory) torch's CUDA
# caching allocator records its own events (torch.cuda.memory._record_memory_history) from CUDA
# initialization on, and at exit they go to <GPROF_OUTPUT_DIR>/<program>.<pid>.torchmem, next to
# the process's dump, for the launcher. The allocator hands tensors memory it already holds, so
# CUDA (and CUPTI) never see those allocations; only the allocator can say.
#
# Rules for this file (it runs inside the user's program):
# - Never raise into the program and never print: our failures go to the hook's once-only
#   reporter (stderr at GPROF_LOG_LEVEL=debug|trace only); a failed start means no file.
# - Never initialize CUDA: _record_memory_history and _set_memory_metadata both need it, so
#   install() only queues _start() with torch.cuda._lazy_call; torch runs it inside _lazy_init
#   right after CUDA is initialized (at once when it already is). _start() catches everything:
#   an exception from a queued call reaches the program as torch's DeferredCudaCallError.
# - Threads: install() runs on the thread that imported torch; _start() on the thread that
#   initializes CUDA (torch holds its _initialization_lock around it); on_new_thread() on each
#   threading.Thread started later, as its first act (_gprof_run_torch's thread hook); _flush()
#   in atexit on the main thread. _count_lock guards threads_tagged only and is never held while
#   calling torch.
# - Fork: a fork child records nothing and writes nothing (there is no dump for it): it does not
#   start recording from the queued call it inherited, tags no thread, and skips the flush.
# - Cheap: with the flag off this module is never loaded; on_new_thread() is one global check
#   until recording has started.
import os

try:
    from _thread import allocate_lock, get_native_id
except ImportError:  # pragma: no cover - every CPython 3.8+ on Linux has them
    from threading import Lock as allocate_lock, get_native_id

FORMAT = "gprof-torchmem"
VERSION = 1
EXTENSION = ".torchmem"
# The allocator keeps a ring buffer of TraceEntry per device; past this many the oldest entries
# are overwritten. About 150 bytes each without stacks (we record none: context=None).
MAX_ENTRIES = 1_000_000
# The actions the launcher reads; others (snapshot, annotate, ...) are left out.
ACTIONS = frozenset(("alloc", "free_requested", "free_completed", "segment_alloc",
                     "segment_free", "segment_map", "segment_unmap", "oom"))
TID_PREFIX = "gprof-tid:"   # our user_metadata: the thread's native id follows

# What the hook did in this process (tests read these).
recording_started = False   # _record_memory_history succeeded
threads_tagged = 0          # threads whose allocator events carry their tid
entries_written = 0         # `e` lines in the file written at exit

_report = None      # the hook's once-only reporter: _report(what, exc), never raises
_memory = None      # torch.cuda.memory; its functions are looked up at each call
_path = None        # the .torchmem file; None once flushed
_pid = 0            # the process that started recording
_started_ns = 0
_tagging = False    # new threads get tagged: recording is on in this process
_forked = False     # this is a fork child of the process that installed us
_count_lock = allocate_lock()


def _failed(what, exc):
    if _report is not None:
        _report(what, exc)


def _tag_this_thread():
    """This thread's allocator events carry its native tid from now on. Never raises."""
    global threads_tagged
    try:
        _memory._set_memory_metadata("%s%d" % (TID_PREFIX, get_native_id()))
        with _count_lock:
            threads_tagged += 1
    except Exception as exc:
        _failed("tagging a thread's memory events", exc)


def on_new_thread():
    """Called by _gprof_run_torch as each new threading.Thread's first act. Never raises."""
    if _tagging:
        _tag_this_thread()


def _start():
    """Queued with torch.cuda._lazy_call: runs once CUDA is initialized, on the thread that
    initialized it. Never raises."""
    global recording_started, _pid, _started_ns, _tagging
    try:
        if _forked or recording_started:
            return
        _memory._record_memory_history(enabled="all", context=None, stacks="python",
                                       max_entries=MAX_ENTRIES)
        import time
        _started_ns = time.time_ns()
        _pid = os.getpid()
        recording_started = True
    except Exception as exc:
        _failed("starting torch's memory recording", exc)
        return
    _tagging = True
    _tag_this_thread()


def _field(entry, key):
    value = entry.get(key)
    return int(value) if value else 0


def _tid(entry):
    metadata = entry.get("user_metadata")
    if isinstance(metadata, str) and metadata.startswith(TID_PREFIX):
        tail = metadata[len(TID_PREFIX):]
        if tail.isdigit():
            return int(tail)
    return 0


def _lines(snapshot, count):
    """The file's lines (docs/PYTORCH.md); count[0] ends as the number of `e` lines."""
    yield "%s\t%d\n" % (FORMAT, VERSION)
    yield "pid\t%d\n" % _pid
    yield "max_entries\t%d\n" % MAX_ENTRIES
    yield "started_ns\t%d\n" % _started_ns
    n = 0
    for device, trace in enumerate(snapshot.get("device_traces") or ()):
        for entry in trace:
            action = entry.get("action")
            if action not in ACTIONS:
                continue
            yield "e\t%d\t%s\t%d\t%d\t%d\t%d\t%d\n" % (
                device, action, _field(entry, "addr"), _field(entry, "size"),
                _field(entry, "stream"), _field(entry, "time_us"), _tid(entry))
            n += 1
    count[0] = n
    yield "end\t%d\n" % n


def _flush():
    """atexit: the allocator's events to the .torchmem file, once, in the process that started
    recording. Never raises."""
    global _path, _tagging, entries_written
    path = _path
    _path = None
    _tagging = False
    if path is None or not recording_started or _forked or os.getpid() != _pid:
        return
    try:
        snapshot = _memory._snapshot()
        count = [0]
        import _gprof_run_sampler
        _gprof_run_sampler.write_side_file(path, _pid, _lines(snapshot, count))
        entries_written = count[0]
    except Exception as exc:
        _failed("writing torch's memory events", exc)


def _after_fork_in_child():
    global _forked, _tagging
    _forked = True
    _tagging = False


def install(torch, report=None):
    """Called once per process by _gprof_run_torch.install(), on the thread that imported torch.
    Does nothing unless GPROF_TORCH_MEMORY=1. True when _start() is queued. Never raises."""
    global _report, _memory, _path
    _report = report
    try:
        if os.environ.get("GPROF_TORCH_MEMORY") != "1" or _memory is not None:
            return False
        memory = torch.cuda.memory
        lazy_call = torch.cuda._lazy_call
        import _gprof_run_sampler
        _path = _gprof_run_sampler.side_file_path(EXTENSION, os.environ, _failed)[0]
        _memory = memory
        import atexit
        atexit.register(_flush)  # registered at torch's import: runs after the program's own
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
        lazy_call(_start)
        return True
    except Exception as exc:
        _failed("setting up torch's memory recording", exc)
        return False

# gprof-run's Python stack sampler (issue 20, part 1; docs/PYTHON_SAMPLING.md): with
# GPROF_PYTHON_SAMPLING=HZ (gprof-run --python-sampling[=HZ]) a thread of ours takes every other
# thread's Python stack HZ times a second and writes them at exit to
# <GPROF_OUTPUT_DIR>/<program>.<pid>.pysamples, next to the process's dump. The launcher turns
# them into <stem>.stacks.folded and python_function slices in the trace.
#
# Rules for this file (it runs inside the user's program):
# - Never raise into the program and never print: our failures go to the hook's once-only
#   reporter (stderr at GPROF_LOG_LEVEL=debug|trace only); a failed start means no samples.
# - Threads: start() runs once, on the main thread, from the hook at interpreter start-up. The
#   sampler thread is a bare _thread thread (not a threading.Thread: the program's
#   threading.enumerate() and active_count() stay as they were). _flush() runs in atexit on the
#   main thread. The sampler thread takes no lock the program can hold: it only waits on its own
#   stop lock (with a timeout: the tick) and on the GIL, so a program holding the GIL in C for a
#   long time only delays it (the ticks it missed are counted), never deadlocks.
# - The samples are appended in one order (time, thread, stack) to three arrays, and _flush()
#   writes the first min(len) of them: no lock is needed between the two threads.
# - Fork: the child records nothing and writes nothing (the collector is inert in a fork child:
#   there is no dump for its samples). A child that execs Python starts a sampler of its own.
# - Interpreter exit: _flush() stops the thread (wakes it through its stop lock, waits for it at
#   most _STOP_WAIT_S with the GIL released), then writes the file under a temporary name and
#   renames it into place.
import os
import sys

try:
    from _thread import allocate_lock, get_ident, get_native_id, start_new_thread
except ImportError:  # pragma: no cover - every CPython 3.8+ on Linux has them
    allocate_lock = get_ident = get_native_id = start_new_thread = None

FORMAT = "gprof-pysamples"
VERSION = 2
EXTENSION = ".pysamples"
MAX_HZ = 2000
# Samples kept per process (16 bytes each: 128 MiB); more are counted as dropped.
MAX_SAMPLES = 8 * 1024 * 1024
_STOP_WAIT_S = 1.0

_report = None     # the hook's once-only reporter: _report(what, exc), never raises
_sampler = None    # the running _Sampler of this process, or None
_remote = None     # the out-of-process sampler's handle (_gprof_run_remote_sampler.Remote)

# What the sampler did in this process (tests read these): started, and by which sampler
# ("out-of-process", "in-process"), and why out of process was not used.
started = False
backend = ""
remote_refused = ""


def _failed(what, exc):
    if _report is not None:
        _report(what, exc)


def _escape(text):
    """A field of the file: tabs, newlines and backslashes escaped; always valid UTF-8."""
    if not isinstance(text, str):
        text = str(text)
    if "\\" in text or "\t" in text or "\n" in text or "\r" in text:
        text = (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
                .replace("\r", "\\r"))
    return text


def _unescape(text):
    """The inverse of _escape."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            i += 1
            c = {"t": "\t", "n": "\n", "r": "\r"}.get(text[i], text[i])
        out.append(c)
        i += 1
    return "".join(out)


def program_name(argv, executable):
    """The dump's program name when the library did not say it (collector/lifecycle/
    process_identity.h ProgramNameFrom): for a Python interpreter the script's basename, the
    module for -m, the interpreter for -c or -."""
    exe = os.path.basename(executable or "") or (os.path.basename(argv[0]) if argv else "")
    exe = exe or "program"
    if not exe.startswith("python"):
        return exe
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m" and i + 1 < len(argv):
            return argv[i + 1]
        if a in ("-c", "-"):
            return exe
        if a in ("-W", "-X", "-Q"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return os.path.basename(a) or exe
    return exe


def _attach_collector():
    """Runs the injection library's init now (gprof_run_python_attach), so that a program that
    never calls CUDA or NVTX still gets a dump, and returns the program name of its dump names.
    None when there is no library (not run by gprof-run) or it did not attach."""
    path = os.environ.get("NVTX_INJECTION64_PATH") or os.environ.get("CUDA_INJECTION64_PATH")
    if not path:
        return None
    import ctypes
    lib = ctypes.CDLL(path)
    attach = getattr(lib, "gprof_run_python_attach", None)
    if attach is None:
        return None
    attach.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
    attach.restype = ctypes.c_int
    buf = ctypes.create_string_buffer(4096)
    if attach(buf, len(buf)) != 1:
        return None
    return buf.value.decode("utf-8", "replace")


def side_file_path(extension, environ, failed):
    """Where a file of this process for the launcher goes, beside its dump:
    <GPROF_OUTPUT_DIR or .>/<program>.<pid><extension>, made absolute now (the launcher sets an
    absolute GPROF_OUTPUT_DIR). <program> is the dump's, from gprof-run's library (attaching it
    now), else program_name()'s. Also used by _gprof_run_memory.py (.torchmem). Returns (path, program, pid); failure to attach goes to `failed`."""
    directory = os.path.abspath(environ.get("GPROF_OUTPUT_DIR") or ".")
    program = None
    try:
        program = _attach_collector()
    except Exception as exc:
        failed("attaching to gprof-run's library", exc)
    if program is None:
        argv = getattr(sys, "orig_argv", None) or [sys.executable] + list(sys.argv)
        try:
            executable = os.readlink("/proc/self/exe")  # as the collector reads it
        except OSError:
            executable = sys.executable
        program = program_name(argv, executable)
    pid = os.getpid()
    return os.path.join(directory, "%s.%d%s" % (program, pid, extension)), program, pid


def write_side_file(path, pid, lines):
    """Writes the strings `lines` to `path` (UTF-8, '\\n') under a temporary name in the same
    folder, then renames it into place: the launcher never reads half a file. Raises on failure,
    leaving no temporary file behind."""
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, ".%s.tmp%d" % (name, pid))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with open(fd, "w", encoding="utf-8", errors="replace", newline="\n",
                  buffering=1 << 20) as out:
            chunk = []
            for line in lines:
                chunk.append(line)
                if len(chunk) >= 4096:
                    out.write("".join(chunk))
                    chunk = []
            out.write("".join(chunk))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _Sampler:
    def __init__(self, hz, path, pid, sampler="in-process"):
        import time
        from array import array
        self.hz = hz
        self.period_ns = 1000000000 // hz
        self.path = path
        self.pid = pid
        self.program = ""
        self.time_ns = time.time_ns
        self.mono_ns = time.monotonic_ns
        self.start_ns = self.time_ns()
        self.frame_ids = {}    # (file, function, first line, line) -> frame index
        self.frames = []
        self.stack_ids = {}    # tuple of frame indices, root first -> stack index
        self.stacks = []
        self.thread_ids = {}   # (ident, native id, name) -> thread index
        self.threads = []
        self.ts = array("q")   # sample time - start_ns
        self.thread = array("I")
        self.stack = array("I")
        self.ticks = 0         # deadlines at which samples were taken
        self.missed = 0        # deadlines skipped: the sampler got the GIL (or the CPU) too late
        self.dropped = 0       # samples past MAX_SAMPLES
        self.torn = 0          # thread stacks the program changed while they were read
        self.sampler = sampler
        self.main_ident = get_ident()
        self.main_native = get_native_id()
        self.stop_lock = allocate_lock()
        self.stop_lock.acquire()  # released by stop(): wakes the sampler at once
        self.done_lock = allocate_lock()
        self.done_lock.acquire()  # released by the sampler thread when it leaves its loop
        self.stopping = False
        self.forked = False

    # ---- the sampler thread -------------------------------------------------------------------

    def run(self):
        try:
            me = get_ident()
            period = self.period_ns
            mono = self.mono_ns
            wait = self.stop_lock.acquire
            deadline = mono() + period
            while not self.stopping:
                delay = deadline - mono()
                if delay > 0 and wait(True, delay / 1e9):
                    break  # stop() released the lock
                if self.stopping:
                    break
                late = mono() - deadline
                if late >= period:  # the GIL or the CPU came too late: skip, and count
                    skipped = late // period
                    self.missed += skipped
                    deadline += skipped * period
                deadline += period
                self.ticks += 1
                self.sample(me, self.time_ns())
        except BaseException:
            pass  # at interpreter exit anything may be half torn down: stop quietly
        finally:
            try:
                self.done_lock.release()
            except BaseException:
                pass

    def sample(self, me, now):
        frames = sys._current_frames()
        threading = sys.modules.get("threading")
        active = getattr(threading, "_active", None) or {}
        offset = now - self.start_ns
        for ident, f in frames.items():
            if ident == me:
                continue
            keys = []
            while f is not None:
                code = f.f_code
                keys.append((code.co_filename, code.co_name, code.co_firstlineno, f.f_lineno or 0))
                f = f.f_back
            keys.reverse()
            self.add(offset, self.thread_key(ident, active), keys)

    def add(self, offset, thread, frames):
        """One sample: ns after start_ns, the thread's (ident, native id, name), its frames
        (file, function, first line, line) root first."""
        ids = []
        frame_ids = self.frame_ids
        for key in frames:
            fid = frame_ids.get(key)
            if fid is None:
                fid = len(self.frames)
                self.frames.append(key)
                frame_ids[key] = fid
            ids.append(fid)
        key = tuple(ids)
        sid = self.stack_ids.get(key)
        if sid is None:
            sid = len(self.stacks)
            self.stacks.append(key)
            self.stack_ids[key] = sid
        tix = self.thread_ids.get(thread)
        if tix is None:
            tix = len(self.threads)
            self.threads.append(thread)
            self.thread_ids[thread] = tix
        if len(self.ts) >= MAX_SAMPLES:
            self.dropped += 1
            return
        self.ts.append(offset)
        self.thread.append(tix)
        self.stack.append(sid)

    def thread_key(self, ident, active):
        t = active.get(ident)
        if t is not None:
            native = getattr(t, "native_id", None) or 0
            name = getattr(t, "_name", None) or ""
        elif ident == self.main_ident:
            native, name = self.main_native, "MainThread"
        else:
            native, name = 0, ""  # a thread not started through threading: tid unknown
        return (ident, native, name)

    # ---- the main thread ----------------------------------------------------------------------

    def stop(self):
        if self.stopping:
            return
        self.stopping = True
        try:
            self.stop_lock.release()
        except Exception:
            pass
        # With the GIL released, so that the sampler can finish its tick.
        if self.done_lock.acquire(True, _STOP_WAIT_S):
            self.done_lock.release()

    def lines(self, end_ns):
        n = min(len(self.ts), len(self.thread), len(self.stack))
        threads = list(self.threads)
        frames = list(self.frames)
        stacks = list(self.stacks)
        yield "%s\t%d\n" % (FORMAT, VERSION)
        for key, value in (("pid", self.pid), ("program", _escape(self.program)),
                           ("sampler", self.sampler), ("torn", self.torn),
                           ("hz", self.hz), ("period_ns", self.period_ns),
                           ("start_ns", self.start_ns), ("end_ns", end_ns),
                           ("ticks", self.ticks), ("missed", self.missed),
                           ("dropped", self.dropped), ("threads", len(threads)),
                           ("frames", len(frames)), ("stacks", len(stacks)), ("samples", n)):
            yield "%s\t%s\n" % (key, value)
        for i, (ident, native, name) in enumerate(threads):
            yield "T\t%d\t%d\t%d\t%s\n" % (i, native, ident, _escape(name))
        for i, (file, function, first, line) in enumerate(frames):
            yield "F\t%d\t%d\t%d\t%s\t%s\n" % (i, first, line, _escape(file), _escape(function))
        for i, ids in enumerate(stacks):
            yield "K\t%d\t%s\n" % (i, " ".join(map(str, ids)))
        ts, thread, stack = self.ts, self.thread, self.stack
        for i in range(n):
            yield "S\t%d\t%d\t%d\n" % (ts[i], thread[i], stack[i])
        yield "end\n"

    def write(self):
        write_side_file(self.path, self.pid, self.lines(self.time_ns()))


def _flush():
    """atexit (and the hook's exit path): stop the sampler and write the file, once. Never
    raises."""
    global _sampler, _remote
    s, remote = _sampler, _remote
    _sampler = _remote = None
    if remote is not None:
        try:
            if not remote.stop(_thread_names()):
                _failed("writing the Python samples", RuntimeError("no answer from the sampler"))
        except Exception as exc:
            _failed("writing the Python samples", exc)
        return
    if s is None or s.forked or os.getpid() != s.pid:
        return
    try:
        s.stop()
        s.write()
    except Exception as exc:
        _failed("writing the Python samples", exc)


def _thread_names():
    """[(ident, native id, name)] of the program's threads now, for the out-of-process sampler
    (which cannot read threading's names)."""
    threading = sys.modules.get("threading")
    active = dict(getattr(threading, "_active", None) or {})
    return [(ident, getattr(t, "native_id", None) or 0, getattr(t, "_name", None) or "")
            for ident, t in active.items()]


def _after_fork_in_child():
    global _sampler, _remote
    s = _sampler
    if s is not None:
        s.forked = True   # the parent's samples are not the child's; its thread is gone
        s.stopping = True
    _sampler = None
    if _remote is not None:
        _remote.close()   # the parent's sampler reads the parent; its pipes are the parent's
    _remote = None


def parse_hz(text):
    """GPROF_PYTHON_SAMPLING: 0 or unset -> 0 (off), 1..2000 -> Hz; anything else -> 0 (the
    launcher refuses such a value before the program starts)."""
    text = (text or "").strip()
    if not text.isdigit():
        return 0
    hz = int(text)
    return hz if 1 <= hz <= MAX_HZ else 0


def start(report=None, environ=None):
    """Starts the sampler when GPROF_PYTHON_SAMPLING asks for it. Called once per process by the
    hook, on the main thread at interpreter start-up. Never raises."""
    global _report, _sampler, _remote, started, backend, remote_refused
    _report = report
    env = os.environ if environ is None else environ
    try:
        hz = parse_hz(env.get("GPROF_PYTHON_SAMPLING"))
        if hz == 0 or _sampler is not None or _remote is not None or start_new_thread is None:
            return
        path, program, pid = side_file_path(EXTENSION, env, _failed)
        import atexit
        atexit.register(_flush)  # registered first, so it runs after the program's own
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
        if env.get("GPROF_PYTHON_SAMPLER", "auto") != "in-process":
            try:
                from _gprof_run_remote_sampler import launch
                _remote = launch(hz, path, program, pid)
                started, backend = True, "out-of-process"
                return
            except Exception as exc:  # the fallback: sample in process
                remote_refused = "%s: %s" % (type(exc).__name__, exc)
                _failed("starting the out-of-process Python sampler", exc)
        else:
            remote_refused = "GPROF_PYTHON_SAMPLER=in-process"
        s = _Sampler(hz, path, pid)
        s.program = program
        _sampler = s
        start_new_thread(s.run, ())
        started, backend = True, "in-process"
    except Exception as exc:
        _sampler = _remote = None
        _failed("starting the Python sampler", exc)

# gprof-run's out-of-process Python sampler (docs/PYTHON_SAMPLING.md, "Out of process"): the
# program (the hook, at interpreter start-up) starts this file as a process of its own, which
# reads the program's Python stacks with _gprof_run_remote_reader HZ times a second, without the
# program's GIL and without stopping it, and writes the same .pysamples file as the in-process
# sampler (_gprof_run_sampler.py, which stays the fallback).
#
# Two halves:
# - launch() and Remote run in the program (called by _gprof_run_sampler.start and _flush):
#   they start the sampler through /bin/sh in the background (so it is not the program's child:
#   the program's os.wait() never sees it), wait for its "ok" (its self-check passed and it read
#   the program's threads once) and, at exit, send "stop" with the names of the program's
#   threads and wait for "done" (the file is written). Anything else: no out-of-process
#   samples, and the caller falls back.
# - main() runs in the sampler process: `python -I -S this.py PID HZ PATH PROGRAM CTL RESP`.
#   It ignores SIGINT/SIGHUP/SIGTERM (the program's exit ends it: "stop", or end of file on CTL
#   when the program died without its atexit, which leaves no file, as in process).
import os
import sys

_READY_WAIT_S = 5.0   # for the sampler's start-up and self-check (a busy machine is slow)
_DONE_WAIT_S = 5.0    # for the file at exit
_PR_SET_PTRACER = 0x59616D61


def _line(fd, timeout):
    """One line from pipe `fd` within `timeout` seconds; "" at end of file or on timeout."""
    import select
    import time
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return ""
        chunk = os.read(fd, 1)
        if not chunk:
            return ""
        data += chunk
    return data.decode("utf-8", "replace").rstrip("\n")


class Remote:
    """The program's handle on its sampler process."""

    def __init__(self, ctl, resp):
        self.ctl, self.resp = ctl, resp

    def close(self):
        for fd in (self.ctl, self.resp):
            try:
                os.close(fd)
            except OSError:
                pass
        self.ctl = self.resp = -1

    def stop(self, threads):
        """Asks for the file and waits for it; `threads`: [(ident, native id, name)]. True when
        the sampler says it wrote the file."""
        from _gprof_run_sampler import _escape
        try:
            text = "stop\n" + "".join("T\t%d\t%d\t%s\n" % (i, n, _escape(name))
                                      for i, n, name in threads) + "end\n"
            os.write(self.ctl, text.encode("utf-8", "replace"))
            return _line(self.resp, _DONE_WAIT_S) == "done"
        finally:
            self.close()


def _allow_tracer(pid):
    """With Yama's ptrace_scope 1 a process may read only its descendants' memory, unless the
    program names it (PR_SET_PTRACER)."""
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            if f.read().strip() != "1":
                return
    except OSError:
        return
    import ctypes
    ctypes.CDLL(None).prctl(_PR_SET_PTRACER, ctypes.c_ulong(pid), 0, 0, 0)


def launch(hz, path, program, pid):
    """Starts the sampler process for this process; a Remote once it said "ok". Raises
    (OSError, RuntimeError) when it cannot: the caller samples in process."""
    exe = sys.executable
    if not exe or not os.path.exists(exe):
        raise RuntimeError("no interpreter path")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.path.basename(__file__))
    ctl_r, ctl_w = os.pipe()
    resp_r, resp_w = os.pipe()
    pid_r, pid_w = os.pipe()
    ok = False
    try:
        os.set_inheritable(ctl_r, True)
        os.set_inheritable(resp_w, True)
        argv = ["sh", "-c", '"$@" </dev/null >/dev/null 2>&1 & echo $!', "sh", exe, "-I", "-S",
                here, str(pid), str(hz), path, program, str(ctl_r), str(resp_w)]
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
        sh = os.posix_spawn("/bin/sh", argv, env,
                            file_actions=[(os.POSIX_SPAWN_DUP2, pid_w, 1)])
        os.close(pid_w)
        pid_w = -1
        child = _line(pid_r, _READY_WAIT_S)
        os.waitpid(sh, 0)
        if child.isdigit():
            _allow_tracer(int(child))
        answer = _line(resp_r, _READY_WAIT_S)
        if answer != "ok":
            raise RuntimeError("the sampler process said %r" % (answer or "nothing"))
        ok = True
        return Remote(ctl_w, resp_r)
    finally:
        for fd in (ctl_r, resp_w, pid_r, pid_w) if ok else (ctl_r, resp_w, pid_r, pid_w, ctl_w,
                                                            resp_r):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass


# ---- the sampler process ----------------------------------------------------------------------

def _names(ctl, rest):
    """The thread lines after "stop": {(ident, native): name}."""
    names = {}
    data = rest
    while not data.endswith(b"end\n"):
        import select
        if not select.select([ctl], [], [], _DONE_WAIT_S)[0]:
            break
        chunk = os.read(ctl, 65536)
        if not chunk:
            break
        data += chunk
    from _gprof_run_sampler import _unescape
    for line in data.decode("utf-8", "replace").split("\n"):
        f = line.split("\t")
        if len(f) == 4 and f[0] == "T" and f[1].isdigit() and f[2].isdigit():
            names[(int(f[1]), int(f[2]))] = _unescape(f[3])
    return names


def sample_until_stopped(reader, store, ctl):
    """Samples every period until "stop" (True, with the names) or end of file or the
    program's exit (False)."""
    import select
    import time
    period = store.period_ns
    mono, now_ns = time.monotonic_ns, time.time_ns
    deadline = mono() + period
    while True:
        delay = deadline - mono()
        if delay > 0 and select.select([ctl], [], [], delay / 1e9)[0]:
            data = os.read(ctl, 65536)
            if not data.startswith(b"stop\n"):
                return False, {}
            return True, _names(ctl, data[5:])
        late = mono() - deadline
        if late >= period:
            skipped = late // period
            store.missed += skipped
            deadline += skipped * period
        deadline += period
        store.ticks += 1
        when = now_ns() - store.start_ns
        try:
            threads = reader.threads()
        except reader_module.Gone:
            return False, {}
        except reader_module.Unreadable:
            store.torn += 1
            continue
        for ident, native, stack in threads:
            if stack:  # None: torn; []: only frames not started yet
                store.add(when, (ident, native, ""), reversed(stack))


reader_module = None


def main(argv):
    global reader_module
    import signal
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    pid, hz, path, program, ctl, resp = (int(argv[1]), int(argv[2]), argv[3], argv[4],
                                         int(argv[5]), int(argv[6]))
    for fd in range(3, 1024):
        if fd not in (ctl, resp):
            try:
                os.close(fd)
            except OSError:
                pass
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _gprof_run_remote_reader as reader_module
    import _gprof_run_sampler
    try:
        reader_module.self_check()
        reader = reader_module.Reader(pid)
        reader.threads()
        store = _gprof_run_sampler._Sampler(hz, path, pid, sampler="out-of-process")
        store.program = program
    except Exception as exc:
        os.write(resp, ("no %s: %s\n" % (type(exc).__name__, exc)).encode("utf-8", "replace"))
        return 1
    os.write(resp, b"ok\n")
    stopped, names = sample_until_stopped(reader, store, ctl)
    if not stopped:
        return 0
    store.torn += reader.torn
    store.threads = [(i, n, names.get((i, n), "MainThread" if n == pid else ""))
                     for i, n, _ in store.threads]
    try:
        store.write()
        os.write(resp, b"done\n")
    except OSError:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

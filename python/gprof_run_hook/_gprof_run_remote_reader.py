# Reads a CPython 3.11 process's Python stacks from outside it (docs/PYTHON_SAMPLING.md, "Out of
# process"): the sampler process (_gprof_run_remote_sampler.py) reads the program's memory with
# process_vm_readv, without the program's GIL and without stopping it.
#
# It runs the same interpreter binary as the program, so the addresses it needs (_PyRuntime, the
# code type) are its own, moved by the difference between the two processes' load addresses of
# that binary, and the struct offsets below are checked against its own interpreter state before
# any sample is taken (self_check): a build whose layout differs is refused, and the program
# then samples itself in process.
#
# Offsets: CPython 3.11's Include/internal/pycore_runtime.h (_PyRuntimeState.interpreters.head),
# pycore_interp.h (PyInterpreterState.threads.head), cpython/pystate.h (PyThreadState,
# _PyCFrame), pycore_frame.h (_PyInterpreterFrame), cpython/code.h (PyCodeObject),
# cpython/unicodeobject.h (PyASCIIObject, PyCompactUnicodeObject), on x86-64 and arm64.
import ctypes
import os
import struct
import sys

SUPPORTED = ((3, 11),)

RT_INTERP_HEAD = 40
IS_THREADS_HEAD = 16
TS_NEXT, TS_INTERP, TS_CFRAME, TS_THREAD_ID, TS_NATIVE_ID = 8, 16, 56, 152, 160
TS_SIZE = 168
CF_CURRENT_FRAME = 8
FR_CODE, FR_PREVIOUS, FR_PREV_INSTR, FR_OWNER = 32, 48, 56, 69
FR_SIZE = 72
FRAME_OWNED_BY_GENERATOR = 1
CO_TYPE, CO_FIRSTLINENO, CO_FILENAME, CO_NAME, CO_LINETABLE = 8, 72, 112, 120, 136
CO_FIRSTTRACEABLE, CO_CODE = 168, 184
MAX_FRAMES = 1024
MAX_THREADS = 4096


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Unreadable(Exception):
    """A read of the program's memory failed or found what cannot be a 3.11 frame (the program
    changed it while it was read: the sample is dropped)."""


class Gone(Exception):
    """The program has exited."""


class Memory:
    """process_vm_readv of one process."""

    def __init__(self, pid):
        libc = ctypes.CDLL(None, use_errno=True)
        self.readv = libc.process_vm_readv
        self.readv.restype = ctypes.c_ssize_t
        self.readv.argtypes = (ctypes.c_int, ctypes.POINTER(_Iovec), ctypes.c_ulong,
                               ctypes.POINTER(_Iovec), ctypes.c_ulong, ctypes.c_ulong)
        self.pid = pid
        self.buf = ctypes.create_string_buffer(4096)
        self.buf_addr = ctypes.addressof(self.buf)
        self.local = _Iovec(self.buf_addr, 0)
        self.remote = _Iovec(0, 0)
        self.local_p, self.remote_p = ctypes.pointer(self.local), ctypes.pointer(self.remote)
        self.string_at = ctypes.string_at

    def read(self, addr, size):
        if not addr or size > 4096:
            raise Unreadable("address 0x%x" % (addr or 0))
        self.local.len = self.remote.len = size
        self.remote.base = addr
        got = self.readv(self.pid, self.local_p, 1, self.remote_p, 1, 0)
        if got == size:
            return self.string_at(self.buf_addr, size)
        err = ctypes.get_errno()
        if err == 3:  # ESRCH
            raise Gone()
        if got < 0 and err in (1, 13, 38):  # EPERM, EACCES, ENOSYS: never readable
            raise PermissionError(err, os.strerror(err))
        raise Unreadable("read 0x%x" % addr)

    def ptr(self, addr):
        return struct.unpack("<Q", self.read(addr, 8))[0]


def _mappings(pid):
    """{(dev, inode): lowest start} of the process's file mappings, and the file of each."""
    bases = {}
    with open("/proc/%s/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or parts[4] == "0":
                continue
            start = int(parts[0].split("-")[0], 16)
            key = (parts[3], parts[4])
            if key not in bases or start < bases[key][0]:
                bases[key] = (start, int(parts[2], 16), parts[5].strip())
    return bases


def _file_of(bases, addr):
    """The mapped file holding `addr` in this process, by its (dev, inode), and its base."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= addr < hi and len(parts) == 6 and parts[4] != "0":
                key = (parts[3], parts[4])
                return key, bases[key][0] - bases[key][1]
    raise Unreadable("0x%x is in no mapped file" % addr)


def parse_linetable(table, first_line, units):
    """The line of each code unit of a 3.11 code object, from its co_linetable
    (Objects/locations.md); 0 where it has none."""
    lines = [0] * units
    line = first_line
    unit = 0
    i = 0
    n = len(table)

    def varint():
        nonlocal i
        shift = value = 0
        while i < n:
            b = table[i]
            i += 1
            value |= (b & 63) << shift
            shift += 6
            if not b & 64:
                break
        return value

    def svarint():
        v = varint()
        return -(v >> 1) if v & 1 else v >> 1

    while i < n:
        head = table[i]
        i += 1
        code = (head >> 3) & 15
        length = (head & 7) + 1
        here = 0
        if code == 15:
            here = 0
        elif code == 14:
            line += svarint()
            varint()
            varint()
            varint()
            here = line
        elif code == 13:
            line += svarint()
            here = line
        elif code >= 10:
            line += code - 10
            i += 2
            here = line
        else:
            i += 1
            here = line
        for u in range(unit, min(unit + length, units)):
            lines[u] = here
        unit += length
    return lines


class Reader:
    """The Python stacks of every thread of one 3.11 process (`pid`), read from outside."""

    def __init__(self, pid):
        if sys.version_info[:2] not in SUPPORTED:
            raise Unreadable("Python %d.%d" % sys.version_info[:2])
        self.mem = Memory(pid)
        runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
        mine = _mappings("self")
        theirs = _mappings(pid)
        key, my_base = _file_of(mine, runtime)
        if key not in theirs:
            raise Unreadable("the program runs another interpreter binary")
        shift = (theirs[key][0] - theirs[key][1]) - my_base
        self.runtime = runtime + shift
        types = (type(self_check.__code__), str, bytes)
        if any(_file_of(mine, id(t))[0] != key for t in types):
            raise Unreadable("a type is outside the interpreter binary")
        self.code_type, self.str_type, self.bytes_type = (id(t) + shift for t in types)
        self.torn = 0    # thread stacks dropped: changed while they were read
        self.codes = {}  # code address -> (key fields, file, name, first line, lines)

    def _text(self, addr):
        """A str object's text; Unreadable when it is not one (yet): a code object read while
        it was being made."""
        head = self.mem.read(addr, 48)
        if struct.unpack_from("<Q", head, 8)[0] != self.str_type:
            raise Unreadable("not a str")
        length = struct.unpack_from("<q", head, 16)[0]
        state = struct.unpack_from("<I", head, 32)[0]
        kind, compact, ascii_ = (state >> 2) & 7, (state >> 5) & 1, (state >> 6) & 1
        if not compact or length < 0 or length * max(kind, 1) > 4000 or kind not in (1, 2, 4):
            raise Unreadable("a str gprof-run does not read")
        if ascii_:
            text = self.mem.read(addr + 48, length).decode("ascii", "replace") if length else ""
        else:
            data = self.mem.read(addr + 72, length * kind) if length else b""
            text = data.decode({1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind], "replace")
        if not text.isprintable() and any(c < " " and c not in "\t\n\r" for c in text):
            raise Unreadable("a str being made")  # (the file format has no other control chars)
        return text

    def _code(self, addr):
        head = self.mem.read(addr, CO_CODE)
        if struct.unpack_from("<Q", head, CO_TYPE)[0] != self.code_type:
            raise Unreadable("not a code object")
        key = head[CO_FIRSTLINENO:CO_FIRSTLINENO + 4] + head[CO_FILENAME:CO_LINETABLE + 8]
        known = self.codes.get(addr)
        if known is not None and known[0] == key:
            return known
        first = struct.unpack_from("<i", head, CO_FIRSTLINENO)[0]
        filename, name, table = struct.unpack_from("<QQ8xQ", head, CO_FILENAME)
        table_head = self.mem.read(table, 24)
        if struct.unpack_from("<Q", table_head, 8)[0] != self.bytes_type:
            raise Unreadable("the line table is not bytes")
        size = struct.unpack_from("<q", table_head, 16)[0]
        raw = self.mem.read(table + 32, size) if 0 < size <= 4096 else b""
        firsttraceable = struct.unpack_from("<i", head, CO_FIRSTTRACEABLE)[0]
        units = min(max(struct.unpack_from("<q", head, 16)[0], 0), 1 << 20)  # Py_SIZE: code units
        known = (key, self._text(filename), self._text(name), first,
                 parse_linetable(raw, first, units), firsttraceable)
        if len(self.codes) > 100000:
            self.codes.clear()
        self.codes[addr] = known
        return known

    def stack(self, frame):
        """[(file, function, first line, line)] from the innermost frame out."""
        out = []
        while frame and len(out) < MAX_FRAMES:
            raw = self.mem.read(frame, FR_SIZE)
            code, previous, prev_instr = struct.unpack_from("<Q8xQQ", raw, FR_CODE)
            owner = raw[FR_OWNER]
            info = self._code(code)
            index = (prev_instr - code - CO_CODE) // 2
            if owner == FRAME_OWNED_BY_GENERATOR or index >= info[5]:  # else not started yet
                lines = info[4]
                line = lines[index] if 0 <= index < len(lines) and lines[index] else info[3]
                out.append((info[1], info[2], info[3], line))
            frame = previous
        if frame:
            raise Unreadable("a stack deeper than %d frames" % MAX_FRAMES)
        return out

    def threads(self):
        """[(ident, native tid, stack innermost first)] of the threads running Python; the stack
        is None where the thread changed it while it was read (self.torn counts those)."""
        interp = self.mem.ptr(self.runtime + RT_INTERP_HEAD)
        tstate = self.mem.ptr(interp + IS_THREADS_HEAD)
        out = []
        while tstate:
            if len(out) >= MAX_THREADS:
                raise Unreadable("too many threads")
            raw = self.mem.read(tstate, TS_SIZE)
            nxt, cframe = struct.unpack_from("<Q", raw, TS_NEXT)[0], \
                struct.unpack_from("<Q", raw, TS_CFRAME)[0]
            ident, native = struct.unpack_from("<QQ", raw, TS_THREAD_ID)
            frame = self.mem.ptr(cframe + CF_CURRENT_FRAME) if cframe else 0
            if frame:
                try:
                    out.append((ident, native, self.stack(frame)))
                except Unreadable:
                    self.torn += 1
                    out.append((ident, native, None))
            tstate = nxt
        return out


def self_check():
    """Reads the stack of a thread of this process parked in a known place, as the program's
    would be read, and compares it with what this interpreter says: raises Unreadable when the
    layout is not the one above."""
    import _thread
    reader = Reader(os.getpid())
    for code in (self_check.__code__, parse_linetable.__code__, Reader.stack.__code__):
        want = [0] * (len(code.co_code) // 2)
        for start, end, line in code.co_lines():
            for u in range(start // 2, end // 2):
                want[u] = line or 0
        got = reader._code(id(code))
        if (got[1], got[2], got[3]) != (code.co_filename, code.co_name, code.co_firstlineno) \
                or got[4] != want:
            raise Unreadable("the code object layout differs")
    park, ready, seen = _thread.allocate_lock(), _thread.allocate_lock(), {}
    park.acquire()
    ready.acquire()

    def parked_for_self_check():
        seen["who"] = (_thread.get_ident(), _thread.get_native_id(), sys._getframe().f_lineno + 2)
        ready.release()
        park.acquire()

    _thread.start_new_thread(parked_for_self_check, ())
    try:
        if not ready.acquire(True, 5.0):
            raise Unreadable("the self-check thread did not start")
        ident, native, line = seen["who"]
        code = parked_for_self_check.__code__
        want = (native, [(code.co_filename, code.co_name, code.co_firstlineno, line)])
        for _ in range(200):  # until it waits in park.acquire()
            got = [(t[1], t[2]) for t in reader.threads() if t[0] == ident]
            if got == [want]:
                return True
        raise Unreadable("the thread state layout differs: %r, %r expected" % (got, want))
    finally:
        park.release()

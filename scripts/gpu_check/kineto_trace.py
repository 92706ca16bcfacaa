"""Reading Kineto-style trace JSON (ours and torch.profiler's) for scripts/gpu-check.

Both tools write the format of REFERENCE.md section 3: host API calls have cat "cuda_runtime" or
"cuda_driver" and args.correlation; GPU work has cat "kernel", "gpu_memcpy" or "gpu_memset" and
the same args.correlation; steps are user_annotation events named "ProfilerStep#N". gprof-run
adds a top-level "gprof" object with its counters (dropped records and the like).
"""

import collections
import json
import re
import subprocess

HOST_API_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")

# API calls that launch exactly one kernel (graph launches may run many and are left out).
_KERNEL_LAUNCH_RE = re.compile(r"(LaunchKernel|LaunchCooperativeKernel|^cuLaunch(Kernel|Grid))")
_MEMCPY_API_RE = re.compile(r"^(cuda|cu)Memcpy")
_MEMSET_API_RE = re.compile(r"^(cuda|cu)Memset")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def events(doc):
    return doc.get("traceEvents", []) if isinstance(doc, dict) else doc


def correlation(ev):
    args = ev.get("args") or {}
    c = args.get("correlation")
    return c if isinstance(c, int) else None


def is_complete(ev):
    return ev.get("ph") == "X" and isinstance(ev.get("ts"), (int, float))


def api_kind(name):
    """'kernel', 'memcpy', 'memset' for APIs that must produce GPU work of that kind, else None."""
    if "Graph" in name:
        return None
    if _KERNEL_LAUNCH_RE.search(name):
        return "kernel"
    if _MEMCPY_API_RE.search(name):
        return "memcpy"
    if _MEMSET_API_RE.search(name):
        return "memset"
    return None


_GPU_KIND = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}

_demangle_cache = {}


def demangle_all(names):
    """Demangles every `_Z` name with c++filt (the same libiberty demangler as
    abi::__cxa_demangle, which both gprof-run and Kineto use); others pass through."""
    todo = sorted({n for n in names if n.startswith("_Z") and n not in _demangle_cache})
    if todo:
        try:
            out = subprocess.run(["c++filt"], input="\n".join(todo) + "\n", capture_output=True,
                                 text=True, timeout=60).stdout.splitlines()
        except (OSError, subprocess.SubprocessError):
            out = []
        for i, n in enumerate(todo):
            _demangle_cache[n] = out[i] if i < len(out) and out[i] else n
    return {n: _demangle_cache.get(n, n) for n in names}


class Trace:
    """One trace, indexed for the checks."""

    def __init__(self, path):
        self.path = path
        self.doc = load(path)
        self.events = [e for e in events(self.doc) if isinstance(e, dict)]
        self.gprof = self.doc.get("gprof", {}) if isinstance(self.doc, dict) else {}
        self.host_api = [e for e in self.events
                         if e.get("cat") in HOST_API_CATS and is_complete(e)]
        self.gpu = [e for e in self.events if e.get("cat") in GPU_CATS and is_complete(e)]
        self.host_by_corr = collections.defaultdict(list)
        for e in self.host_api:
            c = correlation(e)
            if c is not None:
                self.host_by_corr[c].append(e)
        self.gpu_by_corr = collections.defaultdict(list)
        for e in self.gpu:
            c = correlation(e)
            if c is not None:
                self.gpu_by_corr[c].append(e)
        names = demangle_all([e.get("name", "") for e in self.gpu if e.get("cat") == "kernel"])
        self.kernel_name = lambda ev: names.get(ev.get("name", ""), ev.get("name", ""))

    # ---- counts and counters ------------------------------------------------------------------

    def count(self, cat):
        return sum(1 for e in self.gpu if e.get("cat") == cat)

    def counter(self, name):
        """The value of counter `name` in the "gprof" object (its "counters" object, as
        outputs/trace/trace_json.cpp writes them, or top level), or None when the trace has none."""
        counters = self.gprof.get("counters") if isinstance(self.gprof, dict) else None
        for obj in (counters, self.gprof):
            if isinstance(obj, dict) and isinstance(obj.get(name), (int, float)) \
                    and not isinstance(obj.get(name), bool):
                return obj[name]
        return None

    def kernel_counts(self):
        """Counter of (demangled) kernel names."""
        return collections.Counter(self.kernel_name(e) for e in self.gpu
                                   if e.get("cat") == "kernel")

    def launch_offsets(self):
        """[(GPU record start - its launching API call's start) in us] for every GPU record
        whose correlation matches exactly one host API call."""
        out = []
        for e in self.gpu:
            hosts = self.host_by_corr.get(correlation(e), [])
            if len(hosts) == 1:
                out.append(float(e["ts"]) - float(hosts[0]["ts"]))
        return out

    def loss_counters(self):
        """Every numeric counter in the "gprof" object whose name says it counts a loss."""
        found = {}

        def walk(prefix, obj):
            if isinstance(obj, dict):
                for k, v in obj.items():
                    if isinstance(v, dict):
                        walk(f"{prefix}{k}.", v)
                    elif isinstance(v, (int, float)) and not isinstance(v, bool) and re.search(
                            r"drop|refus|lost|loss|uncorrelated|unknown|error|incomplete|without", k):
                        found[prefix + k] = v
        walk("", self.gprof)
        return found

    # ---- correlation --------------------------------------------------------------------------

    def correlation_problems(self, limit=8):
        """Checks that every GPU event's correlation matches exactly one host API call, and that
        every launch API call produced its GPU work (exactly one kernel per kernel launch, at least
        one copy/memset per copy/memset call). Returns (problem count, first few messages)."""
        problems = []
        total = 0
        for e in self.gpu:
            c = correlation(e)
            n = len(self.host_by_corr.get(c, [])) if c is not None else 0
            if n != 1:
                total += 1
                if len(problems) < limit:
                    what = "no correlation id" if c is None else f"{n} host API calls"
                    problems.append(f"{e.get('cat')} '{e.get('name')}' (correlation {c}): {what}")
        for e in self.host_api:
            kind = api_kind(e.get("name", ""))
            c = correlation(e)
            if kind is None or c is None:
                continue
            produced = [g for g in self.gpu_by_corr.get(c, []) if _GPU_KIND[g.get("cat")] == kind]
            bad = len(produced) != 1 if kind == "kernel" else not produced
            if bad:
                total += 1
                if len(problems) < limit:
                    problems.append(f"{e.get('cat')} '{e.get('name')}' (correlation {c}): "
                                    f"{len(produced)} {kind} record(s)")
        return total, problems

    # ---- steps --------------------------------------------------------------------------------

    def steps(self):
        """[(step number, start us, end us)] from ProfilerStep#N user annotations. gprof-run may
        write a step twice (the NVTX range itself and the step its step detection derived from
        it), so one number can have several spans."""
        out = []
        for e in self.events:
            if e.get("cat") != "user_annotation" or not is_complete(e):
                continue
            m = STEP_RE.match(e.get("name", ""))
            if m:
                ts = float(e["ts"])
                out.append((int(m.group(1)), ts, ts + float(e.get("dur", 0))))
        return out

    def kernels_by_step(self):
        """({step: Counter(kernel name)}, {step: {name: total GPU us}}, kernels outside steps).

        A kernel belongs to the narrowest step span that contains its launching API call; a
        kernel whose launch is not in the trace falls back to its own start time (each measured
        step ends with a device synchronize, so its kernels also run inside it)."""
        spans = sorted(self.steps(), key=lambda s: s[2] - s[1])

        def step_at(ts):
            for n, a, b in spans:
                if a <= ts <= b:
                    return n
            return None

        names = collections.defaultdict(collections.Counter)
        times = collections.defaultdict(lambda: collections.defaultdict(float))
        outside = 0
        for e in self.gpu:
            if e.get("cat") != "kernel":
                continue
            hosts = self.host_by_corr.get(correlation(e), [])
            n = step_at(float(hosts[0]["ts"])) if hosts else step_at(float(e["ts"]))
            if n is None:
                outside += 1
                continue
            name = self.kernel_name(e)
            names[n][name] += 1
            times[n][name] += float(e.get("dur", 0))
        return names, times, outside

# gprof-run's Python hook: notices the program's `import torch` and calls on_torch_imported(), and
# starts the stack sampler when GPROF_PYTHON_SAMPLING asks for it (_gprof_run_sampler.py).
# Imported by this folder's sitecustomize.py at interpreter start-up (docs/LAUNCHER.md).
#
# Rules for this file (it runs inside the user's program):
# - Never import torch and never touch CUDA. The finder only looks at the names being imported;
#   torch is loaded by the program's own import, by torch's own loader.
# - Never raise into the program and never print: errors of ours are swallowed, and reported once
#   on stderr only when GPROF_LOG_LEVEL is debug or trace. An error raised by torch's own import
#   is the program's and reaches it unchanged.
# - Threads: the finder runs on whichever thread imports; Python holds the module's import lock
#   around find and load of `torch`, so torch is executed, and on_torch_imported called, once.
# - Cheap for every other import: one string compare per import until torch is seen, then the
#   finder takes itself off sys.meta_path.
import sys

try:
    from _thread import allocate_lock, get_ident
except ImportError:  # pragma: no cover - every CPython has _thread
    from threading import Lock as allocate_lock, get_ident

# How many times on_torch_imported() ran in this process (tests read it; it is at most 1).
torch_hook_calls = 0

_TORCH = "torch"
_lock = allocate_lock()      # guards _installed, _fired; never held while calling out
_installed = False
_fired = False
_reported = False
_finding = set()             # thread idents inside _TorchFinder.find_spec (recursion guard)


def on_torch_imported(torch_module):
    """Called once per process, right after the program's `import torch` has finished (or at
    start-up when torch is already imported), with the torch module.

    Counts that it ran (`torch_hook_calls`, so tests can see that the import hook fired), then
    hands torch to _gprof_run_torch (imported only now, so a program without torch never loads
    it): torch's own per-op NVTX ranges, stepping aside for the program's own torch.profiler,
    optimizer steps as ProfilerStep#N ranges (docs/PYTORCH.md).
    """
    global torch_hook_calls
    torch_hook_calls += 1
    import _gprof_run_torch
    _gprof_run_torch.install(torch_module, _debug_report)  # never raises
    try:
        import _gprof_run_dataloader
        _gprof_run_dataloader.install(torch_module, _debug_report)  # never raises
    except Exception as exc:
        _debug_report("loading the DataLoader hook", exc)


def _debug_report(what, exc):
    """Says once per process, on stderr and only at GPROF_LOG_LEVEL=debug|trace, that part of the
    hook failed. Never raises."""
    global _reported
    try:
        if _reported:
            return
        _reported = True
        import os
        if os.environ.get("GPROF_LOG_LEVEL", "").strip().lower() in ("debug", "trace"):
            sys.stderr.write("gprof-run: python hook: %s failed (%s: %s); the program continues "
                             "without it\n" % (what, type(exc).__name__, exc))
    except Exception:
        pass


def _fire(torch_module):
    """Calls on_torch_imported() the first time only. Never raises."""
    global _fired
    try:
        with _lock:
            if _fired:
                return
            _fired = True
        _remove_finder()
        on_torch_imported(torch_module)
    except Exception as exc:
        _debug_report("on_torch_imported", exc)


def _remove_finder():
    try:
        for finder in list(sys.meta_path):
            if isinstance(finder, _TorchFinder):
                sys.meta_path.remove(finder)
    except Exception as exc:
        _debug_report("removing the import hook", exc)


class _NotifyingLoader:
    """Wraps torch's own loader for one import: torch's loader creates and executes the module,
    then _fire() runs. Everything else is torch's loader's (attribute lookups are forwarded), and
    the module's __loader__ / __spec__.loader are set back to torch's loader before torch's code
    runs, so neither torch nor the program ever sees this class."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        if name == "_loader":  # not set yet (copy, pickle): no endless recursion
            raise AttributeError(name)
        return getattr(self._loader, name)

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        loader = self._loader
        try:
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.loader is self:
                spec.loader = loader
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = loader
        except Exception as exc:
            _debug_report("restoring torch's loader", exc)
        loader.exec_module(module)  # torch's own import: its exceptions are the program's
        _fire(sys.modules.get(module.__name__, module))


class _TorchFinder:
    """A sys.meta_path finder that answers only for `torch`: it asks the finders after it for
    torch's spec (as the import system would) and wraps the loader so that the end of the import
    is seen. For any other name, or when anything goes wrong, it answers None and the import
    proceeds exactly as without it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TORCH or _fired:
            return None
        ident = None
        try:
            ident = get_ident()
            if ident in _finding:  # a finder below us importing torch: do not wrap twice
                ident = None
                return None
            _finding.add(ident)
            for finder in list(sys.meta_path):
                if finder is self or isinstance(finder, _TorchFinder):
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is None:
                    continue
                if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                    return None  # nothing we can wrap safely; the import goes on without us
                spec.loader = _NotifyingLoader(spec.loader)
                return spec
            return None
        except Exception as exc:
            # The finder that raised will raise again for the import system itself, if at all.
            _debug_report("looking up torch", exc)
            return None
        finally:
            if ident is not None:
                _finding.discard(ident)

    def invalidate_caches(self):
        pass


def _start_sampler():
    """GPROF_PYTHON_SAMPLING=HZ: the stack sampler (_gprof_run_sampler.py, imported only then).
    Never raises."""
    try:
        import os
        if os.environ.get("GPROF_PYTHON_SAMPLING", "0").strip() in ("", "0"):
            return
        import _gprof_run_sampler
        _gprof_run_sampler.start(_debug_report)  # never raises
    except Exception as exc:
        _debug_report("starting the Python sampler", exc)


def install():
    """Installs the torch import hook (and, when asked for, the stack sampler) once per process.
    Never raises."""
    global _installed
    try:
        with _lock:
            if _installed:
                return
            _installed = True
        _start_sampler()
        already = sys.modules.get(_TORCH)
        if already is not None:
            _fire(already)
            return
        sys.meta_path.insert(0, _TorchFinder())
    except Exception as exc:
        _debug_report("installing the import hook", exc)

# gprof-run's Python start-up hook. gprof-run puts this folder first on PYTHONPATH for Python
# programs (docs/LAUNCHER.md, "Python programs"), so Python's `site` imports this file as
# `sitecustomize` at interpreter start-up, before the program's first line.
#
# Rules for this file (it runs inside the user's program, in every Python process it starts):
# - Print nothing and raise nothing of our own: any exception from gprof-run's code is swallowed
#   (reported once on stderr only when GPROF_LOG_LEVEL is debug or trace).
# - Never import torch, never touch CUDA: the hook only watches for the program's own
#   `import torch` (see _gprof_run_hook.py).
# - Keep the program's environment as it was: the sitecustomize this file shadows (the next one on
#   sys.path, the one Python would have imported without gprof-run) runs exactly once, as
#   `sitecustomize`, and its exceptions reach `site` unchanged, so Python reports them as it always
#   does. usercustomize is not shadowed: `site` imports it after this file as usual.
import sys


def _debug_report(what, exc):
    # The hook module could not be loaded, so its own once-only reporter is not available.
    try:
        import os
        if os.environ.get("GPROF_LOG_LEVEL", "").strip().lower() in ("debug", "trace"):
            sys.stderr.write("gprof-run: python hook: %s failed (%s: %s); the program runs "
                             "without gprof-run's Python hook\n"
                             % (what, type(exc).__name__, exc))
    except Exception:
        pass


def _install_hook():
    try:
        import _gprof_run_hook
    except Exception as exc:
        _debug_report("loading _gprof_run_hook", exc)
        return
    _gprof_run_hook.install()  # never raises


def _find_shadowed_sitecustomize():
    """The spec of the sitecustomize Python would have imported had this folder not been first
    on sys.path: the first one in the sys.path entries after ours. None when there is none (or
    when looking for it failed; then the program runs as if it had none)."""
    try:
        import os
        try:
            # The importer's own classes, always loaded: importing importlib.machinery/.util here
            # would add modules to every Python process the program starts.
            from _frozen_importlib_external import PathFinder
        except ImportError:
            from importlib.machinery import PathFinder
        here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
        entries = list(sys.path)
        rest = None
        for i, entry in enumerate(entries):
            if isinstance(entry, str) and os.path.realpath(entry or os.curdir) == here:
                rest = entries[i + 1:]
                break
        if rest is None:  # imported some other way: search everywhere but here
            rest = [e for e in entries
                    if not (isinstance(e, str) and os.path.realpath(e or os.curdir) == here)]
        return PathFinder.find_spec("sitecustomize", rest)
    except Exception as exc:
        _debug_report("looking for the environment's own sitecustomize", exc)
        return None


def _run_shadowed_sitecustomize(spec):
    """Runs the shadowed sitecustomize once, as module `sitecustomize`: it replaces this module
    in sys.modules, so `site` (and any later `import sitecustomize`) gets the environment's own
    module, as without gprof-run. Its exceptions propagate to `site` on purpose."""
    try:
        from _frozen_importlib import module_from_spec
    except ImportError:
        from importlib.util import module_from_spec
    module = module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        # As a failed import: no half-run `sitecustomize` left behind (site then reports it).
        sys.modules.pop("sitecustomize", None)
        raise


# Install first, so that an `import torch` inside the environment's own sitecustomize is seen.
try:
    _install_hook()
except Exception as _exc:
    _debug_report("installing the hook", _exc)

_shadowed = _find_shadowed_sitecustomize()
if _shadowed is not None and _shadowed.loader is not None:
    _run_shadowed_sitecustomize(_shadowed)

# The configuration of gprof-run's own torch profiler (_gprof_run_torch.py turns it on on every
# thread): which of torch's op observers hands gprof-run each op (ITT or NVTX), and the
# ProfilerConfig built from it. Loaded by _gprof_run_torch.install() only.
# Rules: those of _gprof_run_torch.py.
import os
import sys


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


class Missing(Exception):
    """This torch lacks an API the op observer needs; str() says which, in a user's words."""


# ProfilerConfig's parameters as torch 2.x names them, in the order every 2.x takes them
# positionally (torch/csrc/profiler/orchestration/observer.h); trace_id (2.5 on) has a default.
_PARAMETERS = ("state", "report_input_shapes", "profile_memory", "with_stack", "with_flops",
               "with_modules", "experimental_config")


def _lookup(torch, dotted):
    """torch.a.b.c for dotted "torch.a.b.c", or Missing naming the first attribute that is not
    there."""
    value, names = torch, dotted.split(".")
    for i, name in enumerate(names[1:], 2):
        if not hasattr(value, name):
            raise Missing("no " + ".".join(names[:i]))
        value = getattr(value, name)
    return value


def parameter_names(cls):
    """The names of cls(...)'s parameters (self left out), or None where they cannot be read:
    inspect's signature for a Python class, else the first line of a pybind11 docstring,
    "__init__(self: X, state: Y, report_input_shapes: bool, ...) -> None"."""
    try:
        import inspect
        return [p for p in inspect.signature(cls).parameters]
    except (TypeError, ValueError):
        pass
    doc = (getattr(cls.__init__, "__doc__", None) or "").strip()
    head = doc.split("\n", 1)[0]
    if not head.startswith("__init__(") or "(self" not in head:
        return None
    names, depth, current = [], 0, ""
    for char in head[len("__init__("):]:  # top-level commas split the parameters
        if depth == 0 and char in ",)":
            names.append(current.split(":", 1)[0].split("=", 1)[0].strip())
            current = ""
            if char == ")":
                break
            continue
        depth += char in "[(" and 1 or (char in "])" and -1 or 0)
        current += char
    return [n for n in names if n and n != "self"] or None


def build(torch, shapes, failed):
    """ProfilerConfig(state, report_input_shapes, ...) for the op observer, with keywords where
    torch names its parameters (and only those it has), else positionally as torch 2.x takes
    them. Raises Missing, saying what this torch lacks."""
    for name in ("_enable_profiler", "_disable_profiler", "ProfilerState.NVTX"):
        _lookup(torch, "torch.autograd." + name)
    config = _lookup(torch, "torch.autograd.ProfilerConfig")
    values = {"state": op_range_state(torch, shapes, failed), "report_input_shapes": shapes,
              "profile_memory": False, "with_stack": False, "with_flops": False,
              "with_modules": False}
    names = parameter_names(config)
    if names is None or "experimental_config" in names:
        values["experimental_config"] = _lookup(
            torch, "torch._C._profiler._ExperimentalConfig")()
    if names is not None:
        unknown = [n for n in names if n not in values and n not in _OPTIONAL]
        if unknown:
            raise Missing("torch.autograd.ProfilerConfig takes (%s), not known here (%s)"
                          % (", ".join(names), ", ".join(unknown)))
        try:
            return config(**{n: values[n] for n in names if n in values})
        except TypeError:
            pass  # pybind11 without argument names: positional below
    try:
        return config(*[values[n] for n in _PARAMETERS if n in values])
    except TypeError as exc:
        raise Missing("torch.autograd.ProfilerConfig(%s) refused: %s"
                      % (", ".join(n for n in _PARAMETERS if n in values), exc))


# Parameters with a default that gprof-run leaves as they are.
_OPTIONAL = ("trace_id",)


def say_unsupported(torch, exc, lost):
    """The one line a user gets when this torch lacks an API gprof-run needs: torch's version,
    what is missing, and what the run goes without. Quiet for a module named torch that is not
    PyTorch (no torch._C: a stand-in). Never raises."""
    try:
        if not hasattr(torch, "_C"):
            return
        what = str(exc) if isinstance(exc, Missing) else "%s: %s" % (
            type(exc).__name__, exc)
        sys.stderr.write("gprof-run: torch %s: %s, so this run has %s (docs/PYTORCH.md lists "
                         "the torch releases tested)\n" % (
                             getattr(torch, "__version__", "of unknown version"),
                             what.splitlines()[0] if what else "unsupported", lost))
        sys.stderr.flush()
    except Exception:
        pass

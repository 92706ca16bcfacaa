# gprof-run's DataLoader part of the Python hook (issue 31): names each torch DataLoader that the
# program iterates, for the dataloader_bound finding (docs/FINDINGS.md). torch already opens a
# record_function range around every batch a DataLoader hands out
# ("enumerate(DataLoader)#<iterator class>.__next__"); what the range does not say is which loader
# and how it is set up. So each time a DataLoader starts an iteration (DataLoader.__iter__, once
# per epoch) this puts one NVTX mark on the iterating thread:
#     gprof-run: DataLoader dataset=<class> batch_size=N num_workers=N pin_memory=B
#         persistent_workers=B prefetch_factor=N
# (one line; the C++ side reads the key=value pairs after "gprof-run: DataLoader ").
#
# Rules for this file (it runs inside the user's program): never raise into the program and never
# print (our failures go to the hook's once-only reporter); whatever the program's own __iter__
# raises reaches it unchanged. Cheap: a few attribute reads and one NVTX mark per epoch.
# Threads: the wrapper runs on whichever thread iterates the loader; it keeps no state.
import functools

MARK_PREFIX = "gprof-run: DataLoader "


def describe(loader):
    """The mark's text for `loader`: its dataset's class and its loading settings. Never raises
    for a loader with missing attributes (a subclass of the program's): those are left out."""
    parts = []
    dataset = getattr(loader, "dataset", None)
    if dataset is not None:
        parts.append("dataset=" + type(dataset).__name__)
    for key in ("batch_size", "num_workers", "pin_memory", "persistent_workers",
                "prefetch_factor"):
        if hasattr(loader, key):
            parts.append("%s=%s" % (key, str(getattr(loader, key)).replace(" ", "_")))
    return MARK_PREFIX + " ".join(parts)


def install(torch, report):
    """Wraps torch.utils.data.DataLoader.__iter__ once per process to mark each iteration.
    Never raises."""
    try:
        loader_class = torch.utils.data.DataLoader
        nvtx = torch.cuda.nvtx
        original = loader_class.__iter__
    except Exception:
        return  # a torch without these: nothing to name, quietly
    if getattr(original, "_gprof_run_wrapped", False):
        return

    @functools.wraps(original)
    def __iter__(self):
        try:
            nvtx.mark(describe(self))
        except Exception as exc:
            report("marking a DataLoader iteration", exc)
        return original(self)

    __iter__._gprof_run_wrapped = True
    try:
        loader_class.__iter__ = __iter__
    except Exception as exc:
        report("wrapping DataLoader.__iter__", exc)

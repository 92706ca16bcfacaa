"""Step 5 of scripts/gpu-check: the clock skew between GPU records and their launch calls.

A GPU record (kernel, copy, memset) cannot start before the API call that launched it. Its start
comes from the GPU's clock and the call's from the host clock; gprof-run puts both on one
timeline. For every GPU record whose correlation matches exactly one API call, the offset
(GPU start - launch call start, in us) is taken from the step-2 traces. Reported: min, median,
p99, max and a histogram; judged: records that start before their launch call
  - by more than EARLY_FAIL_US (50 us): FAIL (the clocks disagree; the timeline is wrong)
  - by more than EARLY_WARN_US (5 us): WARN (a small skew, worth a look)
"""

import math
import os
import statistics

from kineto_trace import Trace
from report import FAIL, PASS, WARN

EARLY_WARN_US = 5.0
EARLY_FAIL_US = 50.0
PRODUCT_COUNTER = "gpu_records_before_launch"  # the product's own count, where it writes one
# Histogram bin edges in us (a record falls in [edge[i], edge[i+1])).
BINS = (-math.inf, -50.0, -5.0, 0.0, 5.0, 20.0, 100.0, 1000.0, 10000.0, math.inf)


def percentile(sorted_values, q):
    """Nearest-rank percentile (q in 0..100) of an ascending list; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(offsets):
    """{n, min, median, p99, max, early_warn, early_fail} of launch offsets in us."""
    v = sorted(offsets)
    return {
        "n": len(v),
        "min": v[0] if v else None,
        "median": statistics.median(v) if v else None,
        "p99": percentile(v, 99),
        "max": v[-1] if v else None,
        "early_warn": sum(1 for x in v if x < -EARLY_WARN_US),
        "early_fail": sum(1 for x in v if x < -EARLY_FAIL_US),
    }


def histogram(offsets):
    """[(label, count)] over BINS."""
    counts = [0] * (len(BINS) - 1)
    for x in offsets:
        for i in range(len(BINS) - 1):
            if BINS[i] <= x < BINS[i + 1]:
                counts[i] += 1
                break
    labels = []
    for a, b in zip(BINS, BINS[1:]):
        labels.append(f"< {b:g}" if a == -math.inf else f">= {a:g}" if b == math.inf
                      else f"[{a:g}, {b:g})")
    return list(zip(labels, counts))


def verdict(summary):
    """(status, text) for one summary (see the module doc)."""
    if not summary["n"]:
        return WARN, "no GPU record with a correlated launch call to measure"
    fig = (f"{summary['n']} records: min {summary['min']:+.1f} us, median "
           f"{summary['median']:+.1f} us, p99 {summary['p99']:+.1f} us; "
           f"{summary['early_warn']} start more than {EARLY_WARN_US:g} us before their launch "
           f"call, {summary['early_fail']} more than {EARLY_FAIL_US:g} us")
    if summary["early_fail"]:
        return FAIL, f"GPU records start before their launch call: {fig}"
    if summary["early_warn"]:
        return WARN, f"some GPU records start slightly before their launch call: {fig}"
    return PASS, f"no GPU record starts more than {EARLY_WARN_US:g} us before its launch call: " \
                 f"{fig}"


def _fmt(x):
    return "-" if x is None else f"{x:+.1f}"


def run(section, traces):
    """traces: [(label, trace path)] from step 2."""
    traces = [(label, path) for label, path in traces if path and os.path.exists(path)]
    if not traces:
        section.status(FAIL, "no step-2 trace to measure (step 2 wrote none)")
        return None
    rows, every, product = [], [], {}
    for label, path in traces:
        try:
            t = Trace(path)
            offsets = t.launch_offsets()
        except (OSError, ValueError) as e:
            section.status(FAIL, f"`{label}`: trace does not parse: {e}")
            continue
        v = t.counter(PRODUCT_COUNTER)
        if v is not None:
            product[label] = v
        every += offsets
        s = summarize(offsets)
        rows.append([label, s["n"], _fmt(s["min"]), _fmt(s["median"]), _fmt(s["p99"]),
                     _fmt(s["max"]), s["early_warn"], s["early_fail"]])
    total = summarize(every)
    section.status(*verdict(total))
    section.add("GPU record start minus its launch call's start, in us, per step-2 trace:", "")
    section.table(["trace", "records", "min", "median", "p99", "max",
                   f"early > {EARLY_WARN_US:g} us", f"early > {EARLY_FAIL_US:g} us"], rows)
    section.add("Histogram over all of them (us):", "")
    section.table(["offset us", "records"], histogram(every))
    if product:
        section.add(f"gprof-run's own `{PRODUCT_COUNTER}` counter (reported, not judged): "
                    + ", ".join(f"{k} {v}" for k, v in product.items()) + ".", "")
    return total

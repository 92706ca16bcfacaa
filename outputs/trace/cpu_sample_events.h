// --cpu-sampling's samples as trace JSON events (docs/CPU_SAMPLING.md). Launcher process only.
//
// Each sample is a thread-scoped instant event ("ph":"i","s":"t") on the sampled thread's own
// track (pid = the process, tid = the OS thread, as its ranges and CUDA calls), cat
// "cpu_sample", named by its innermost frame, with args.stack (its frames, innermost first) and
// args.cpu_us (the CPU time it stands for). An instant rather than an X slice of one period: a slice of fixed length would
// overlap the thread's ranges and calls partly, which Perfetto's importer moves or drops
// (REFERENCE.md §4); an instant sits inside whatever encloses it.
#pragma once

#include "analysis/samples/cpu_samples.h"

namespace gprof {

class JsonWriter;
class TraceEventWriter;
class TracePlan;

// Writes every sample of the plan's profile at or after `origin_ns`, the trace's time origin
// (earlier ones would get a negative ts): the plan's base_ns, or a segmented trace's origin.
void WriteCpuSampleEvents(const CpuSampleNames& names, const TracePlan& plan, uint64_t origin_ns,
                          TraceEventWriter* events, JsonWriter* out);

}  // namespace gprof

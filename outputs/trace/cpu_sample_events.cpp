// --cpu-sampling's samples -> trace JSON instants (cpu_sample_events.h). Launcher process only.
#include "outputs/trace/cpu_sample_events.h"

#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/trace_json_events.h"
#include "text/json_writer.h"

namespace gprof {

void WriteCpuSampleEvents(const CpuSampleNames& names, const TracePlan& plan, uint64_t origin_ns,
                          TraceEventWriter* events, JsonWriter* out) {
  const Profile& p = plan.profile();
  const uint64_t base = origin_ns;
  for (const CpuSample& s : p.cpu_samples) {
    if (s.time_ns < base || s.stack >= names.function.size()) continue;
    const std::vector<std::string>& frames = names.frames_outermost_first[s.stack];
    events->Begin("i");
    out->Raw(",\"s\":\"t\",\"cat\":\"cpu_sample\",\"name\":").String(names.function[s.stack]);
    out->Raw(",\"pid\":").Uint(p.info.pid).Raw(",\"tid\":").Uint(s.tid);
    out->Raw(",\"ts\":").Micros(s.time_ns - base);
    out->Raw(",\"args\":{\"cpu_us\":").Micros(s.cpu_ns).Raw(",\"stack\":[");
    for (size_t i = frames.size(); i-- > 0;) {
      out->String(frames[i]);
      if (i != 0) out->Raw(",");
    }
    out->Raw("]}}");
  }
}

}  // namespace gprof

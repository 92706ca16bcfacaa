// TraceEventWriter: the entries of the trace JSON's "traceEvents" array, one planned event
// (trace_plan.h) at a time, launcher process only. trace_json.cpp writes the document around them
// (header, process and thread metadata, trace name).
//
// One formatting path per event kind. API calls, kernels and flows (4 of every 4 events per
// launch) are the hot ones: their variable text (the escaped "cat"/"name" pair, the
// launch-configuration part of a kernel's args) is formatted once per distinct value and copied,
// and their numbers are written with the Put* helpers into a bounded region of the JsonWriter
// (json_writer.h Reserve/Commit). A name has no size bound, so it always goes through
// JsonWriter::Raw, never into a region.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exporters/json_writer.h"
#include "exporters/names.h"
#include "exporters/trace_plan.h"

namespace gprof {

class TraceEventWriter {
 public:
  // Writes to `out`; `plan` and `out` must outlive the writer.
  TraceEventWriter(const TracePlan& plan, JsonWriter* out);
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;

  // Starts the next entry: {"ph":"<ph>", after ",\n" unless it is the first one.
  void Begin(const char* ph);
  // Writes one planned event as one entry.
  void Write(const PlannedEvent& e);
  // Entries started so far (metadata included).
  uint64_t count() const { return count_; }

 private:
  // The launch-configuration part of a kernel's args, formatted once per configuration.
  struct KernelArgText {
    std::string head;  // ,"device":D,"context":C
    std::string tail;  // ,"registers per thread":...,"block":[x,y,z]}}
  };

  void Common(const char* cat, std::string_view name, const PlannedEvent& e);
  void Slice(const char* cat, std::string_view name, const PlannedEvent& e);
  // `torch`: the range whose torch op details (kRangeTorch) to add, or nullptr.
  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags,
                 const HostRange* torch = nullptr);

  char* BeginAt(char* p, char ph);
  char* PidTidTsAt(char* p, const PlannedEvent& e);
  char* BeginNamed(char ph, std::string_view cat_and_name, size_t room);
  const std::string& ApiCatName(const ApiCall& c);
  const std::string& KernelCatName(StringId name);
  const KernelArgText& KernelArgs(uint32_t config);
  void AppendOccupancy(JsonWriter& o, const LaunchConfig& lc);
  void WriteApi(const PlannedEvent& e);
  void WriteKernel(const PlannedEvent& e);
  void WriteFlow(const PlannedEvent& e);

  const TracePlan& plan_;
  const Profile& p_;
  NameCache names_;
  JsonWriter& out_;
  const uint64_t base_;
  uint64_t count_ = 0;
  std::vector<std::string> kernel_json_;    // by StringId
  // By launch config; the last slot is the empty configuration (an index past the table).
  std::vector<KernelArgText> kernel_args_;
  std::unordered_map<uint32_t, std::string> api_json_;  // (domain << 16 | cbid)
  uint32_t last_api_key_ = 0;
  const std::string* last_api_ = nullptr;
  std::string scratch_text_;  // what scratch_ formats (kernel args, once per configuration)
  JsonWriter scratch_;
};

}  // namespace gprof

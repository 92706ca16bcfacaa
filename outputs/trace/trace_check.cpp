// CheckTrace: every violation of Perfetto's JSON importer rules (REFERENCE.md §4) in a trace file,
// with where it is. Launcher process only (`gprof-run check`); reads the whole file.
//
// Two passes: a byte scanner finds raw control characters and invalid UTF-8 (a JSON parser would
// reject the file before saying where), then a repaired copy is parsed with nlohmann::json and
// each event is checked.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "outputs/trace/gzip_file.h"
#include "outputs/trace/trace_check.h"
#include "text/utf8.h"

namespace gprof {
namespace {

using nlohmann::json;

struct Scan {
  std::string repaired;
  std::vector<TraceViolation> violations;
};

// Byte-level pass. Tracks the traceEvents array so that each finding names its event index.
Scan ScanBytes(const std::string& bytes) {
  Scan s;
  s.repaired = bytes;
  bool in_string = false, escaped = false;
  int depth = 0;
  int events_depth = -1;  // depth of the traceEvents array once entered
  long event = -1;
  size_t line = 1;
  std::string key;                  // text of the string being read at depth 1
  bool expect_events_array = false;  // saw the "traceEvents" key at depth 1
  const auto where = [&](size_t offset) {
    std::string w = "byte " + std::to_string(offset) + " (line " + std::to_string(line) + ")";
    if (event >= 0 && events_depth >= 0) w += ", event #" + std::to_string(event);
    return w;
  };
  for (size_t i = 0; i < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(bytes, i);
      if (n == 0) {
        s.violations.push_back({"invalid-utf8", "invalid UTF-8 byte 0x" +
                                [&] { char b[3]; std::snprintf(b, 3, "%02x", c); return std::string(b); }() +
                                " at " + where(i) + ": the whole file fails to load"});
        s.repaired[i] = '?';
        ++i;
      } else {
        if (in_string && depth == 1) key.append(bytes, i, n);
        i += n;
      }
      continue;
    }
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1 && key == "traceEvents") expect_events_array = true;
      } else if (c < 0x20) {
        s.violations.push_back({"control-character", "raw control character 0x" +
                                [&] { char b[3]; std::snprintf(b, 3, "%02x", c); return std::string(b); }() +
                                " inside a string at " + where(i) +
                                ": the whole file fails to load (escape it as \\u00XX)"});
        s.repaired[i] = ' ';
      } else if (depth == 1) {
        key.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    switch (c) {
      case '"': in_string = true; key.clear(); break;
      case '{':
      case '[':
        ++depth;
        if (c == '[' && depth == 2 && expect_events_array) events_depth = depth;
        if (c == '[' && depth == 1) events_depth = 1;  // array form: the root is the event list
        if (events_depth >= 0 && depth == events_depth + 1) ++event;
        break;
      case '}':
      case ']':
        if (depth == events_depth) events_depth = -2;  // left the event list
        --depth;
        break;
      case ',':
      case ':': break;
      default: break;
    }
    if (c == ',' && depth == 1) expect_events_array = false;
    ++i;
  }
  return s;
}

std::string Describe(size_t index, const json& e) {
  std::string d = "event #" + std::to_string(index);
  if (e.is_object()) {
    if (auto n = e.find("name"); n != e.end() && n->is_string()) d += " '" + n->get<std::string>() + "'";
    if (auto p = e.find("ph"); p != e.end() && p->is_string()) d += " (ph " + p->get<std::string>();
    else d += " (";
    if (auto p = e.find("pid"); p != e.end()) d += ", pid " + p->dump();
    if (auto t = e.find("tid"); t != e.end()) d += ", tid " + t->dump();
    d += ")";
  }
  return d;
}

// pid/tid as Perfetto reads them: unsigned 32-bit integers (strings are accepted as names).
bool IdInRange(const json& v, uint32_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > std::numeric_limits<uint32_t>::max()) return false;
    *out = static_cast<uint32_t>(u);
    return true;
  }
  if (v.is_number_integer()) return false;  // negative
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d < 0 || d > 4294967295.0 || d != std::floor(d)) return false;
    *out = static_cast<uint32_t>(d);
    return true;
  }
  return false;
}

// Flow v2 (bind_id on a slice): Perfetto's JSON importer binds "flow_out" and "flow_in" to the
// event's own slice on 'B', 'X', 'b' and 'e' events only (json_trace_parser.cc MaybeAddFlow);
// a bind_id with neither is counted as flow_without_direction, a second flow_out of one id as
// flow_duplicate_id, a flow_in met (in ts order) before any flow_out of its id as
// flow_end_without_start (flow_tracker.cc). A flow_out nobody ends is no error there. Perfetto
// numbers the v1 flows (s/t/f) 0, 1, 2, ... in the id space of bind_ids (GetFlowIdForV1Event),
// so a bind_id below the number of v1 flows binds to one of them.
class FlowBinds {
 public:
  FlowBinds(const json& events, std::vector<TraceViolation>* v) : events_(events), v_(*v) {}
  void AddV1(const json& e) {
    v1_.insert(e["id"].dump() + e.value("cat", json()).dump() + e.value("name", json()).dump());
  }
  void Add(size_t i, const json& e, const std::string& ph, double ts) {
    const auto id_it = e.find("bind_id");
    if (id_it == e.end()) return;
    const std::string id_text = "bind_id " + id_it->dump();
    if (ph != "X" && ph != "B" && ph != "b" && ph != "e") {
      return Bad(i, "flow-bind-ignored", id_text + " on a \"" + ph +
                                             "\" event: Perfetto binds flows to B, X, b, e only");
    }
    if (!id_it->is_number_unsigned()) {
      return Bad(i, "flow-id-not-number",
                 id_text + " is not an unsigned integer (a string id is parsed as hex)");
    }
    const uint64_t id = id_it->get<uint64_t>();
    const bool in = e.value("flow_in", json()) == true, out = e.value("flow_out", json()) == true;
    if (!in && !out) {
      return Bad(i, "flow-without-direction", id_text + " without \"flow_in\" or \"flow_out\"");
    }
    ids_.emplace_back(id, i);
    if (in) ins_.push_back({id, ts, i});
    if (!out) return;
    if (auto [it, fresh] = outs_.emplace(id, End{id, ts, i}); !fresh) {
      Bad(i, "flow-id-reused",
          id_text + " already has its flow_out at event #" + std::to_string(it->second.index));
    }
  }
  void Finish() {
    for (const End& in : ins_) {
      const std::string id_text = "bind_id " + std::to_string(in.id);
      const auto out = outs_.find(in.id);
      if (out == outs_.end()) {
        Bad(in.index, "flow-without-start", id_text + " has no \"flow_out\" slice");
      } else if (in.ts < out->second.ts) {
        Bad(in.index, "flow-without-start",
            id_text + " starts before its flow_out slice (event #" +
                std::to_string(out->second.index) + "): Perfetto meets it first and drops it");
      }
    }
    for (const auto& [id, i] : ids_) {
      if (id >= v1_.size()) continue;
      Bad(i, "flow-id-clash",
          "bind_id " + std::to_string(id) + " is below the number of v1 (s/t/f) flows (" +
              std::to_string(v1_.size()) + "), which Perfetto numbers from 0 in the same space");
    }
  }

 private:
  struct End {
    uint64_t id;
    double ts;
    size_t index;
  };
  void Bad(size_t i, const char* rule, const std::string& what) {
    v_.push_back({rule, Describe(i, events_[i]) + ": " + what});
  }
  const json& events_;
  std::vector<TraceViolation>& v_;
  std::set<std::string> v1_;  // id, cat and name: Perfetto's key of a v1 flow
  std::map<uint64_t, End> outs_;
  std::vector<End> ins_;
  std::vector<std::pair<uint64_t, size_t>> ids_;
};

struct Slice {
  int64_t start, end;
  size_t index;
};

}  // namespace

std::vector<TraceViolation> CheckTrace(const std::string& path) {
  std::string text;
  try {
    text = ReadMaybeGzip(path);  // .json.gz traces too
  } catch (const std::exception& e) {
    return {{"unreadable", e.what()}};
  }
  return CheckTraceText(text);
}

std::vector<TraceViolation> CheckTraceText(const std::string& text) {
  Scan scan = ScanBytes(text);
  std::vector<TraceViolation> v = std::move(scan.violations);

  json doc;
  try {
    doc = json::parse(scan.repaired);
  } catch (const json::exception& e) {
    v.push_back({"parse-error", std::string("not valid JSON: ") + e.what()});
    return v;
  }
  const json* events = nullptr;
  if (doc.is_array()) events = &doc;
  else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  if (events == nullptr) {
    v.push_back({"no-trace-events", "neither a JSON array of events nor an object with a traceEvents array"});
    return v;
  }

  std::map<std::pair<std::string, std::string>, std::vector<Slice>> slices;
  std::map<std::string, size_t> flow_starts, flow_ends;  // id text -> first event index
  std::vector<std::pair<std::string, size_t>> ends_to_check;
  FlowBinds binds(*events, &v);
  static const std::set<std::string> kDropped = {"S", "T", "F", "p", "N", "O", "D", "v", "V"};

  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const auto bad = [&](const char* rule, const std::string& what) {
      v.push_back({rule, Describe(i, e) + ": " + what});
    };
    if (!e.is_object()) {
      bad("not-an-object", "an event must be a JSON object");
      continue;
    }
    const auto ph_it = e.find("ph");
    if (ph_it == e.end() || !ph_it->is_string()) {
      bad("missing-field", "no \"ph\" (phase)");
      continue;
    }
    const std::string ph = ph_it->get<std::string>();
    if (kDropped.count(ph)) {
      bad("dropped-phase", "phase \"" + ph + "\" is silently dropped by Perfetto");
      continue;
    }
    const bool meta = ph == "M";
    if (!e.contains("name")) bad("missing-field", "no \"name\"");
    uint32_t pid = 0, tid = 0;
    bool ids_ok = true;
    const bool needs_tid = !meta || (e.contains("name") && e["name"].is_string() &&
                                     e["name"].get<std::string>().rfind("thread_", 0) == 0);
    for (const char* field : {"pid", "tid"}) {
      const bool is_pid = field[0] == 'p';
      if (!e.contains(field)) {
        if (is_pid || needs_tid) {
          bad("missing-field", std::string("no \"") + field + "\"");
          ids_ok = false;
        }
        continue;
      }
      const json& id = e[field];
      if (id.is_string()) continue;  // Perfetto turns it into a number and uses it as a name
      if (!IdInRange(id, is_pid ? &pid : &tid)) {
        bad("pid-tid-range", std::string(field) + " " + id.dump() +
                                 " is not an unsigned 32-bit integer (negative or too large ids are mangled)");
        ids_ok = false;
      }
    }
    if (meta) continue;
    const auto ts_it = e.find("ts");
    double ts = 0;
    if (ts_it == e.end() || !ts_it->is_number()) {
      bad("missing-field", "no numeric \"ts\"");
      continue;
    }
    ts = ts_it->get<double>();
    if (ts < 0) bad("negative-ts", "ts " + ts_it->dump() + " is negative: Perfetto drops the event");
    if (ph == "X") {
      const auto dur_it = e.find("dur");
      if (dur_it == e.end() || !dur_it->is_number()) {
        bad("missing-field", "no numeric \"dur\" on a complete (X) event");
      } else if (dur_it->get<double>() < 0) {
        bad("negative-dur", "dur " + dur_it->dump() + " is negative");
      } else if (ids_ok && ts >= 0) {
        const int64_t start = std::llround(ts * 1000.0);
        const int64_t end = start + std::llround(dur_it->get<double>() * 1000.0);
        slices[{e["pid"].dump(), e.value("tid", json()).dump()}].push_back({start, end, i});
      }
    }
    binds.Add(i, e, ph, ts);
    if (ph == "s" || ph == "t" || ph == "f") {
      const auto id_it = e.find("id");
      if (id_it == e.end() || !id_it->is_number_integer()) {
        bad("flow-id-not-number", id_it == e.end() ? "flow event without an \"id\""
                                                    : "flow id " + id_it->dump() +
                                                          " is not an integer (a string id is parsed as hex)");
        continue;
      }
      const std::string id = id_it->dump();
      binds.AddV1(e);
      if (ph == "s") {
        if (auto [it, fresh] = flow_starts.emplace(id, i); !fresh) {
          bad("flow-id-reused", "flow id " + id + " already started at event #" + std::to_string(it->second));
        }
      } else if (ph == "f") {
        if (auto [it, fresh] = flow_ends.emplace(id, i); !fresh) {
          bad("flow-id-reused", "flow id " + id + " already finished at event #" + std::to_string(it->second));
        }
        ends_to_check.emplace_back(id, i);
      }
    }
  }
  for (const auto& [id, i] : ends_to_check) {
    if (!flow_starts.count(id)) {
      v.push_back({"flow-without-start", Describe(i, (*events)[i]) + ": flow id " + id + " has no \"s\" event"});
    }
  }
  binds.Finish();
  for (auto& [track, list] : slices) {
    std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
      return std::make_tuple(a.start, -a.end, a.index) < std::make_tuple(b.start, -b.end, b.index);
    });
    std::vector<const Slice*> stack;
    for (const Slice& s : list) {
      while (!stack.empty() && stack.back()->end <= s.start) stack.pop_back();
      if (!stack.empty() && s.end > stack.back()->end) {
        const Slice& o = *stack.back();
        v.push_back({"nesting", Describe(s.index, (*events)[s.index]) + " partially overlaps " +
                                    Describe(o.index, (*events)[o.index]) +
                                    " on the same track: Perfetto moves or drops one of them"});
        continue;
      }
      stack.push_back(&s);
    }
  }
  return v;
}

}  // namespace gprof

// The Python hook's .torchmem file and its attachment to a Profile (torch_memory.h). Launcher
// process only.
#include "analysis/samples/torch_memory.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <queue>
#include <sstream>
#include <utility>

namespace gprof {
namespace {

struct KindName {
  std::string_view name;
  TorchMemEntryKind kind;
};
constexpr KindName kKinds[] = {
    {"alloc", TorchMemEntryKind::kAlloc},
    {"free_requested", TorchMemEntryKind::kFreeRequested},
    {"free_completed", TorchMemEntryKind::kFreeCompleted},
    {"segment_alloc", TorchMemEntryKind::kSegmentAlloc},
    {"segment_free", TorchMemEntryKind::kSegmentFree},
    {"segment_map", TorchMemEntryKind::kSegmentMap},
    {"segment_unmap", TorchMemEntryKind::kSegmentUnmap},
    {"oom", TorchMemEntryKind::kOom},
};

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (true) {
    const size_t tab = line.find('\t', from);
    out.push_back(line.substr(from, tab == std::string_view::npos ? tab : tab - from));
    if (tab == std::string_view::npos) return out;
    from = tab + 1;
  }
}

bool Number(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

class Parser {
 public:
  Parser(std::string_view text, TorchMemoryFile* out, std::string* error)
      : text_(text), out_(out), error_(error) {}

  bool Parse() {
    std::string_view line;
    if (!Next(&line)) return Fail("empty file");
    const std::vector<std::string_view> head = Fields(line);
    if (head.size() != 2 || head[0] != kTorchMemoryFormat) {
      return Fail(std::string("not a ") + kTorchMemoryFormat + " file");
    }
    uint64_t version = 0;
    if (!Number(head[1], &version) || version != kTorchMemoryVersion) {
      return Fail("version " + std::string(head[1]) + ", this gprof-run reads version " +
                  std::to_string(kTorchMemoryVersion));
    }
    uint64_t pid = 0;
    if (!Header("pid", &pid) || pid == 0 || pid > 0xffffffffu) return Fail("bad pid line");
    out_->pid = static_cast<uint32_t>(pid);
    if (!Header("max_entries", &out_->max_entries)) return Fail("bad max_entries line");
    if (!Header("started_ns", &out_->started_ns) || out_->started_ns >= kMaxProfileTimeNs) {
      return Fail("bad started_ns line");
    }
    while (Next(&line)) {
      const std::vector<std::string_view> f = Fields(line);
      if (f[0] == "end") {
        uint64_t count = 0;
        if (f.size() != 2 || !Number(f[1], &count)) return Fail("bad end line");
        if (count != entries_) {
          return Fail("the end line counts " + std::to_string(count) + " entries, the file has " +
                      std::to_string(entries_));
        }
        if (Next(&line)) return Fail("text after the end line");
        return true;
      }
      if (f[0] != "e" || f.size() != 8) return Fail("expected an entry (e + 7 fields) or end");
      if (!Entry(f)) return false;
    }
    return Fail("no end line: the file is cut short");
  }

 private:
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    const size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) {  // a last line without its '\n' is cut short
      pos_ = text_.size();
      ++line_no_;
      *line = "\x01";  // matches nothing, so the caller's check names this line
      return true;
    }
    *line = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    ++line_no_;
    return true;
  }

  bool Header(std::string_view key, uint64_t* value) {
    std::string_view line;
    if (!Next(&line)) return false;
    const std::vector<std::string_view> f = Fields(line);
    return f.size() == 2 && f[0] == key && Number(f[1], value);
  }

  bool Entry(const std::vector<std::string_view>& f) {
    TorchMemoryEntry e;
    uint64_t device = 0, tid = 0;
    if (!Number(f[1], &device) || device > 255) return Fail("bad device " + std::string(f[1]));
    const auto* kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                    [&](const KindName& k) { return k.name == f[2]; });
    if (kind == std::end(kKinds)) return Fail("unknown action " + std::string(f[2]));
    if (!Number(f[3], &e.addr) || !Number(f[4], &e.size) || !Number(f[5], &e.stream) ||
        !Number(f[6], &e.time_us) || !Number(f[7], &tid) || tid > 0xffffffffu) {
      return Fail("bad number");
    }
    if (e.size >= kMaxRecordBytes && kind->kind != TorchMemEntryKind::kOom) {
      return Fail("size " + std::to_string(e.size) + " is not a real allocation's");
    }
    if (e.time_us >= kMaxProfileTimeNs / 1000) return Fail("time out of range");
    e.device = static_cast<uint32_t>(device);
    e.tid = static_cast<uint32_t>(tid);
    e.kind = kind->kind;
    out_->entries.push_back(e);
    ++entries_;
    return true;
  }

  bool Fail(const std::string& what) {
    *error_ = "line " + std::to_string(line_no_) + ": " + what;
    return false;
  }

  std::string_view text_;
  TorchMemoryFile* out_;
  std::string* error_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
  uint64_t entries_ = 0;
};

// A range a thread had open, for the attribution of untagged events by time.
struct OpenRange {
  uint64_t start, end;
  uint32_t tid;
  bool operator<(const OpenRange& o) const { return start < o.start; }  // latest start on top
};

// For each event (by time), the thread whose innermost open range began last, or 0.
void ThreadsByTime(const Profile& p, std::vector<TorchMemoryEvent>* events,
                   TorchMemoryAttached* a) {
  std::vector<OpenRange> ranges;
  for (const HostRange& r : p.ranges) {
    if (!(r.flags & kRangeStartEnd) && r.end_ns > r.start_ns) {
      ranges.push_back({r.start_ns, r.end_ns, r.tid});
    }
  }
  std::sort(ranges.begin(), ranges.end());
  std::priority_queue<OpenRange> open;
  size_t next = 0;
  for (TorchMemoryEvent& e : *events) {
    if (!e.by_time) continue;
    while (next < ranges.size() && ranges[next].start <= e.ts_ns) open.push(ranges[next++]);
    // The latest-started range still open; ranges that ended are dropped when they reach the top
    // (one that ended below the top stays until then, never chosen while a later one is open).
    while (!open.empty() && open.top().end <= e.ts_ns) open.pop();
    if (open.empty()) {
      e.tid = 0;
      ++a->outside_ops;
    } else {
      e.tid = open.top().tid;
    }
  }
}

}  // namespace

bool ParseTorchMemory(std::string_view text, TorchMemoryFile* out, std::string* error) {
  *out = TorchMemoryFile{};
  Parser parser(text, out, error);
  return parser.Parse();
}

bool ReadTorchMemory(const std::string& path, TorchMemoryFile* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string text = std::move(buf).str();
  if (text.size() > kTorchMemoryMaxFileBytes) {
    *error = path + ": larger than " + std::to_string(kTorchMemoryMaxFileBytes >> 30) + " GiB";
    return false;
  }
  std::string why;
  if (!ParseTorchMemory(text, out, &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

uint64_t TorchBlockBytes(uint64_t size) {
  if (size < kTorchBlockRounding) return kTorchBlockRounding;
  return (size + kTorchBlockRounding - 1) / kTorchBlockRounding * kTorchBlockRounding;
}

TorchMemoryAttached AttachTorchMemory(const TorchMemoryFile& file, Profile* p) {
  TorchMemoryAttached a;
  std::map<uint32_t, uint64_t> per_device;
  for (const TorchMemoryEntry& e : file.entries) ++per_device[e.device];
  for (const auto& [device, n] : per_device) a.history_full |= n >= file.max_entries;

  // Blocks live at the time of each free, by (device, address): a free takes its block's size.
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> live;
  std::vector<TorchMemoryEvent> events;
  const uint64_t from = p->info.start_ns, to = p->info.end_ns;
  for (const TorchMemoryEntry& e : file.entries) {
    const uint64_t ts = e.time_us * 1000 + 500;  // the middle of torch's microsecond
    TorchMemoryEvent ev{ts, e.addr, 0, e.tid, static_cast<uint8_t>(e.device),
                        TorchMemAction::kAlloc, e.tid == 0 ? uint8_t{1} : uint8_t{0}, 0};
    const auto key = std::make_pair(e.device, e.addr);
    switch (e.kind) {
      case TorchMemEntryKind::kAlloc:
        ev.bytes = TorchBlockBytes(e.size);
        live[key] = ev.bytes;
        break;
      case TorchMemEntryKind::kFreeRequested: {
        const auto it = live.find(key);
        ev.action = TorchMemAction::kFree;
        ev.bytes = it != live.end() ? it->second : TorchBlockBytes(e.size);
        if (it != live.end()) live.erase(it);
        break;
      }
      case TorchMemEntryKind::kSegmentAlloc:
        ev.action = TorchMemAction::kSegmentAlloc;
        ev.bytes = e.size;
        break;
      case TorchMemEntryKind::kSegmentFree:
        ev.action = TorchMemAction::kSegmentFree;
        ev.bytes = e.size;
        break;
      case TorchMemEntryKind::kOom:
        a.oom += ts >= from && ts <= to ? 1 : 0;
        continue;
      default:  // free_completed, segment_map/unmap: nothing the columns count
        continue;
    }
    if (ts < from || ts > to) continue;
    events.push_back(ev);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const TorchMemoryEvent& x, const TorchMemoryEvent& y) {
                     return x.ts_ns < y.ts_ns;
                   });
  for (const TorchMemoryEvent& e : events) a.by_time += e.by_time;
  ThreadsByTime(*p, &events, &a);
  a.events = events.size();
  p->torch_memory = std::move(events);
  return a;
}

std::string TorchMemoryNote(const TorchMemoryAttached& a, const std::string& path) {
  if (a.events == 0 && a.oom == 0) return "";
  std::string note = "gprof-run: " + std::to_string(a.events) +
                     " torch CUDA allocator events from " + path;
  if (a.by_time > 0) {
    note += " (" + std::to_string(a.by_time) + " from untagged threads, given a thread by time";
    if (a.outside_ops > 0) note += "; " + std::to_string(a.outside_ops) + " outside every op";
    note += ")";
  }
  if (a.oom > 0) note += "; " + std::to_string(a.oom) + " out-of-memory errors";
  if (a.history_full) {
    note += "; the allocator's history filled up, so its oldest events were lost and the "
            "memory columns miss them";
  }
  return note + "\n";
}

}  // namespace gprof

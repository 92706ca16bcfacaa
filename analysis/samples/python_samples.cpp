// The .pysamples reader and the folded stacks (python_samples.h). Launcher process only.
#include "analysis/samples/python_samples.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "text/utf8.h"

namespace gprof {
namespace {

// Timestamps above this are refused (model/profile.h kMaxProfileTimeNs, CLOCK_REALTIME in 2116).
constexpr uint64_t kMaxTimeNs = uint64_t{1} << 62;

class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}

  // The next line without its '\n'; false at the end, or for a last line without '\n'.
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    const size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) {
      truncated_ = true;
      return false;
    }
    *line = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    ++number_;
    return true;
  }
  size_t number() const { return number_; }
  bool truncated() const { return truncated_; }
  bool at_end() const { return pos_ >= text_.size(); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t number_ = 0;
  bool truncated_ = false;
};

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseU32(std::string_view s, uint32_t* out) {
  uint64_t v = 0;
  if (!ParseU64(s, &v) || v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// The writer's escapes: \\ \t \n \r. Anything else after a backslash, or invalid UTF-8, fails.
bool Unescape(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == s.size()) return false;
    switch (s[i]) {
      case '\\': out->push_back('\\'); break;
      case 't': out->push_back('\t'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      default: return false;
    }
  }
  for (size_t i = 0; i < out->size();) {
    const size_t n = Utf8SequenceLength(*out, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

struct Parser {
  Lines lines;
  PythonSamples* out;
  std::string* error;
  uint32_t version_ = 0;

  bool Fail(const std::string& what) {
    *error = "line " + std::to_string(lines.number()) + ": " + what;
    return false;
  }

  bool Line(std::string_view* line, const char* expected) {
    if (lines.Next(line)) return true;
    *error = lines.truncated() ? "the last line has no newline: the file is truncated"
                               : std::string("the file ends before ") + expected +
                                     ": it is truncated";
    return false;
  }

  // "key\tvalue" with exactly this key.
  bool Header(const char* key, std::string_view* value) {
    std::string_view line;
    if (!Line(&line, key)) return false;
    const std::vector<std::string_view> f = SplitTabs(line);
    if (f.size() != 2 || f[0] != key) {
      return Fail(std::string("expected the header line \"") + key + "\\t...\"");
    }
    *value = f[1];
    return true;
  }
  bool HeaderU64(const char* key, uint64_t* v) {
    std::string_view text;
    if (!Header(key, &text)) return false;
    if (!ParseU64(text, v)) return Fail(std::string(key) + ": not a whole number");
    return true;
  }
  bool HeaderU32(const char* key, uint32_t* v) {
    uint64_t wide = 0;
    if (!HeaderU64(key, &wide)) return false;
    if (wide > UINT32_MAX) return Fail(std::string(key) + ": too large");
    *v = static_cast<uint32_t>(wide);
    return true;
  }

  // A table line "<tag>\t<index>\t..." with `fields` fields in all; the index must be `index`.
  bool Row(char tag, size_t fields, uint64_t index, std::vector<std::string_view>* f,
           const char* what) {
    std::string_view line;
    if (!Line(&line, what)) return false;
    *f = SplitTabs(line);
    if ((*f)[0].size() != 1 || (*f)[0][0] != tag) {
      return Fail(std::string("expected ") + what + " line " + std::to_string(index) + " (\"" +
                  tag + "\\t" + std::to_string(index) + "...\")");
    }
    if (f->size() != fields) {
      return Fail(std::string(what) + " line: " + std::to_string(f->size()) + " fields, " +
                  std::to_string(fields) + " expected");
    }
    uint64_t i = 0;
    if (!ParseU64((*f)[1], &i) || i != index) {
      return Fail(std::string(what) + " line: index " + std::string((*f)[1]) + ", " +
                  std::to_string(index) + " expected (in order, from 0)");
    }
    return true;
  }

  bool Parse() {
    std::string_view line;
    if (!Line(&line, "the format line")) return false;
    {
      const std::vector<std::string_view> f = SplitTabs(line);
      if (f.size() != 2 || f[0] != kPythonSamplesFormat) {
        return Fail("not a gprof-run Python samples file (no \"gprof-pysamples\" line)");
      }
      uint32_t version = 0;
      if (!ParseU32(f[1], &version)) return Fail("the format version is not a number");
      if (version != 1 && version != kPythonSamplesVersion) {
        return Fail("format version " + std::to_string(version) + ", this gprof-run reads " +
                    std::to_string(kPythonSamplesVersion) + " (written by another gprof-run?)");
      }
      version_ = version;
    }
    PythonSamples& s = *out;
    std::string_view program;
    uint64_t threads = 0, frames = 0, stacks = 0, samples = 0;
    std::string_view sampler = "in-process";
    if (!HeaderU32("pid", &s.pid) || !Header("program", &program) ||
        (version_ >= 2 && (!Header("sampler", &sampler) || !HeaderU64("torn", &s.torn))) ||
        !HeaderU32("hz", &s.hz) ||
        !HeaderU64("period_ns", &s.period_ns) || !HeaderU64("start_ns", &s.start_ns) ||
        !HeaderU64("end_ns", &s.end_ns) || !HeaderU64("ticks", &s.ticks) ||
        !HeaderU64("missed", &s.missed) || !HeaderU64("dropped", &s.dropped) ||
        !HeaderU64("threads", &threads) || !HeaderU64("frames", &frames) ||
        !HeaderU64("stacks", &stacks) || !HeaderU64("samples", &samples)) {
      return false;
    }
    if (!Unescape(program, &s.program)) return Fail("program: bad escape or invalid UTF-8");
    if (sampler != "in-process" && sampler != "out-of-process") {
      return Fail("sampler: expected in-process or out-of-process");
    }
    s.sampler = std::string(sampler);
    if (s.hz < 1 || s.hz > kPythonSamplingMaxHz) {
      return Fail("hz " + std::to_string(s.hz) + ": expected 1 to " +
                  std::to_string(kPythonSamplingMaxHz));
    }
    if (s.period_ns != 1'000'000'000ull / s.hz) {
      return Fail("period_ns " + std::to_string(s.period_ns) + " does not match hz " +
                  std::to_string(s.hz));
    }
    if (s.start_ns >= kMaxTimeNs || s.end_ns >= kMaxTimeNs) {
      return Fail("start_ns or end_ns is past the year 2116");
    }
    if (threads > UINT32_MAX || frames > UINT32_MAX || stacks > UINT32_MAX) {
      return Fail("more than 2^32 threads, frames or stacks");
    }

    std::vector<std::string_view> f;
    for (uint64_t i = 0; i < threads; ++i) {
      if (!Row('T', 5, i, &f, "thread")) return false;
      PythonThread t;
      if (!ParseU32(f[2], &t.tid)) return Fail("thread: tid is not a 32-bit number");
      if (!ParseU64(f[3], &t.ident)) return Fail("thread: ident is not a number");
      if (!Unescape(f[4], &t.name)) return Fail("thread: name has a bad escape or invalid UTF-8");
      s.threads.push_back(std::move(t));
    }
    for (uint64_t i = 0; i < frames; ++i) {
      if (!Row('F', 6, i, &f, "frame")) return false;
      PythonFrame fr;
      if (!ParseU32(f[2], &fr.first_line) || !ParseU32(f[3], &fr.line)) {
        return Fail("frame: line numbers are not 32-bit numbers");
      }
      if (!Unescape(f[4], &fr.file) || !Unescape(f[5], &fr.function)) {
        return Fail("frame: file or function has a bad escape or invalid UTF-8");
      }
      s.frames.push_back(std::move(fr));
    }
    for (uint64_t i = 0; i < stacks; ++i) {
      if (!Row('K', 3, i, &f, "stack")) return false;
      std::vector<uint32_t> ids;
      std::string_view rest = f[2];
      while (!rest.empty()) {
        const size_t sp = rest.find(' ');
        uint32_t id = 0;
        if (!ParseU32(rest.substr(0, sp), &id) || id >= s.frames.size()) {
          return Fail("stack: frame " + std::string(rest.substr(0, sp)) + " is not one of the " +
                      std::to_string(s.frames.size()) + " frames");
        }
        if (ids.size() >= kPythonMaxStackDepth) return Fail("stack: deeper than 100000 frames");
        ids.push_back(id);
        if (sp == std::string_view::npos) break;
        rest.remove_prefix(sp + 1);
        if (rest.empty()) return Fail("stack: trailing space");
      }
      if (ids.empty()) return Fail("stack: no frames");
      s.stacks.push_back(std::move(ids));
    }
    for (uint64_t i = 0; i < samples; ++i) {
      std::string_view sample_line;
      if (!Line(&sample_line, "a sample")) return false;
      f = SplitTabs(sample_line);
      if (f.size() != 4 || f[0] != "S") {
        return Fail("expected sample line " + std::to_string(i) + " (\"S\\tTIME\\tTHREAD\\tSTACK\")");
      }
      uint64_t offset = 0;
      PythonSample sm{};
      if (!ParseU64(f[1], &offset) || !ParseU32(f[2], &sm.thread) ||
          !ParseU32(f[3], &sm.stack)) {
        return Fail("sample: fields are not numbers");
      }
      if (offset >= kMaxTimeNs - s.start_ns) return Fail("sample: time past the year 2116");
      if (sm.thread >= s.threads.size()) return Fail("sample: no thread " + std::string(f[2]));
      if (sm.stack >= s.stacks.size()) return Fail("sample: no stack " + std::string(f[3]));
      sm.ts_ns = s.start_ns + offset;
      s.samples.push_back(sm);
    }
    if (!Line(&line, "the end line")) return false;
    if (line != "end") return Fail("expected \"end\" after the declared samples");
    if (!lines.at_end()) {
      lines.Next(&line);
      return Fail("text after the end line");
    }
    return true;
  }
};

std::string FoldedName(const PythonFrame& f) {
  std::string text = f.function + " (" + f.file + ":" + std::to_string(f.first_line) + ")";
  for (char& c : text) {
    if (c == ';') c = ':';
    else if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return text;
}

}  // namespace

bool ParsePythonSamples(std::string_view text, PythonSamples* out, std::string* error) {
  *out = PythonSamples{};
  Parser p{Lines(text), out, error};
  if (p.Parse()) return true;
  *out = PythonSamples{};
  return false;
}

bool ReadPythonSamples(const std::string& path, PythonSamples* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0 || static_cast<uint64_t>(size) > kPythonSamplesMaxFileBytes) {
    *error = path + ": larger than 4 GiB (or unreadable); not read";
    return false;
  }
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) {
    *error = path + ": cannot read";
    return false;
  }
  std::string why;
  if (!ParsePythonSamples(text, out, &why)) {
    *error = path + ": " + why;
    return false;
  }
  return true;
}

std::string FoldedStacks(const PythonSamples& s, uint64_t from_ns, uint64_t to_ns,
                         uint64_t* counted) {
  std::vector<uint64_t> per_stack(s.stacks.size(), 0);
  uint64_t n = 0;
  for (const PythonSample& sm : s.samples) {
    if (sm.ts_ns < from_ns || sm.ts_ns > to_ns || sm.stack >= per_stack.size()) continue;
    ++per_stack[sm.stack];
    ++n;
  }
  if (counted != nullptr) *counted = n;
  std::vector<std::string> names(s.frames.size());
  for (size_t i = 0; i < s.frames.size(); ++i) names[i] = FoldedName(s.frames[i]);
  // Stacks that differ only in their current lines fold into one line.
  std::map<std::string, uint64_t> lines;
  for (size_t k = 0; k < s.stacks.size(); ++k) {
    if (per_stack[k] == 0) continue;
    std::string key;
    for (uint32_t id : s.stacks[k]) {
      if (!key.empty()) key += ';';
      key += names[id < names.size() ? id : 0];
    }
    lines[key] += per_stack[k];
  }
  std::string out;
  for (const auto& [stack, count] : lines) {
    out += stack;
    out += ' ';
    out += std::to_string(count);
    out += '\n';
  }
  return out;
}

}  // namespace gprof

#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

namespace gprof {
namespace {

// std::regex (libstdc++) recurses once per alternative while compiling, and a repetition count
// past INT_MAX overflows inside it (undefined behaviour; fuzz/config_fuzz found it): the pattern
// is compiled inside the profiled program too, so it is bounded before it is compiled.
constexpr size_t kMaxStepRegexBytes = 512;
constexpr size_t kMaxRepeatDigits = 4;  // {9999} and \9999 at most

std::string RegexLimitProblem(const std::string& re) {
  if (re.size() > kMaxStepRegexBytes) {
    return "is longer than " + std::to_string(kMaxStepRegexBytes) + " bytes";
  }
  // The longest run of digits from `from` on (commas allowed between counts: {2,5}).
  const auto digits_from = [&](size_t from, bool commas) {
    size_t run = 0, longest = 0;
    for (size_t j = from; j < re.size(); ++j) {
      if (std::isdigit(static_cast<unsigned char>(re[j]))) {
        longest = std::max(longest, ++run);
      } else if (commas && re[j] == ',') {
        run = 0;
      } else {
        break;
      }
    }
    return longest;
  };
  for (size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '\\') {  // an escape: a back-reference \N, or a literal (skipped)
      if (digits_from(i + 1, false) > kMaxRepeatDigits) {
        return "has a back-reference number over 9999";
      }
      ++i;
    } else if (re[i] == '{' && digits_from(i + 1, true) > kMaxRepeatDigits) {
      return "has a repetition count over 9999";
    }
  }
  return "";
}

struct Parser {
  const std::map<std::string, std::string>& env;
  ParseResult result;

  const std::string* Get(std::string_view key) const {
    auto it = env.find(std::string(key));
    return it == env.end() ? nullptr : &it->second;
  }
  void Error(std::string_view key, const std::string& value, std::string message) {
    result.errors.push_back({std::string(key), value, std::move(message)});
  }

  void Bool(std::string_view key, bool* out) {
    const std::string* v = Get(key);
    if (v == nullptr) return;
    if (*v == "1" || *v == "true" || *v == "on" || *v == "yes") *out = true;
    else if (*v == "0" || *v == "false" || *v == "off" || *v == "no") *out = false;
    else Error(key, *v, "expected 1 or 0 (also true/false, on/off, yes/no)");
  }

  void Uint(std::string_view key, uint32_t lo, uint32_t hi, uint32_t* out) {
    const std::string* v = Get(key);
    if (v == nullptr) return;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size() || n < lo || n > hi) {
      Error(key, *v,
            "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
      return;
    }
    *out = static_cast<uint32_t>(n);
  }

  void Duration(std::string_view key, uint64_t* out) {
    const std::string* v = Get(key);
    if (v == nullptr) return;
    if (!ParseDurationNs(*v, out)) {
      Error(key, *v, "expected a duration such as 2s, 1.5s, 250ms, 100us or 0");
    }
  }

  void LogLevelKey() {
    const std::string* v = Get("GPROF_LOG_LEVEL");
    if (v == nullptr) return;
    static const std::pair<const char*, LogLevel> kLevels[] = {
        {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
        {"warn", LogLevel::kWarn},   {"error", LogLevel::kError}, {"off", LogLevel::kOff}};
    for (const auto& [name, level] : kLevels) {
      if (*v == name) {
        result.config.log_level = level;
        return;
      }
    }
    Error("GPROF_LOG_LEVEL", *v, "expected one of trace, debug, info, warn, error, off");
  }

  void ApiFilterKey() {
    const std::string* v = Get("GPROF_API_FILTER");
    if (v == nullptr) return;
    ApiFilter f;
    size_t start = 0;
    bool first = true;
    while (start <= v->size()) {
      size_t comma = v->find(',', start);
      if (comma == std::string::npos) comma = v->size();
      std::string item = v->substr(start, comma - start);
      start = comma + 1;
      if (first && (item == "default" || item == "all" || item == "none")) {
        f.base = item == "all" ? ApiFilter::Base::kAll
                 : item == "none" ? ApiFilter::Base::kNone
                                  : ApiFilter::Base::kDefault;
      } else if (item.size() > 1 && (item[0] == '+' || item[0] == '-')) {
        (item[0] == '+' ? f.include : f.exclude).push_back(item.substr(1));
      } else {
        Error("GPROF_API_FILTER", *v,
              "expected default|all|none followed by ,+NAME or ,-NAME items; bad item '" + item +
                  "'");
        return;
      }
      first = false;
    }
    result.config.api_filter = std::move(f);
  }

  void ScheduleKey() {
    const std::string* v = Get("GPROF_SCHEDULE");
    if (v == nullptr || v->empty()) return;
    Schedule s;
    size_t start = 0;
    while (start <= v->size()) {
      size_t comma = v->find(',', start);
      if (comma == std::string::npos) comma = v->size();
      const std::string item = v->substr(start, comma - start);
      start = comma + 1;
      const size_t eq = item.find('=');
      const std::string name = item.substr(0, eq);
      uint32_t* field = name == "skip_first" ? &s.skip_first
                        : name == "wait"     ? &s.wait
                        : name == "warmup"   ? &s.warmup
                        : name == "active"   ? &s.active
                        : name == "repeat"   ? &s.repeat
                                             : nullptr;
      uint64_t n = 0;
      const char* num = item.data() + (eq == std::string::npos ? item.size() : eq + 1);
      auto [end, ec] = std::from_chars(num, item.data() + item.size(), n);
      if (field == nullptr || eq == std::string::npos || ec != std::errc() ||
          end != item.data() + item.size() || n > 1'000'000'000) {
        Error("GPROF_SCHEDULE", *v,
              "expected comma-separated skip_first=N, wait=N, warmup=N, active=N, repeat=N; bad "
              "item '" + item + "'");
        return;
      }
      *field = static_cast<uint32_t>(n);
    }
    if (s.active == 0) {
      Error("GPROF_SCHEDULE", *v, "active must be at least 1 (torch.profiler requires it)");
      return;
    }
    result.config.schedule = s;
  }

  void StepKey() {
    const std::string* v = Get("GPROF_STEP");
    if (v == nullptr) return;
    const size_t colon = v->find(':');
    const std::string kind = v->substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : v->substr(colon + 1);
    StepSource s;
    s.pattern = arg;
    if (colon == std::string::npos || arg.empty()) {
      Error("GPROF_STEP", *v, "expected nvtx:GLOB, kernel:REGEX, api:NAME or time:DURATION");
      return;
    }
    if (kind == "nvtx") {
      s.kind = StepSource::Kind::kNvtx;
    } else if (kind == "kernel") {
      s.kind = StepSource::Kind::kKernel;
      if (const std::string bad = RegexLimitProblem(arg); !bad.empty()) {
        Error("GPROF_STEP", *v, "kernel pattern " + bad);
        return;
      }
      try {
        std::regex re(arg);
      } catch (const std::regex_error& e) {
        Error("GPROF_STEP", *v, std::string("kernel pattern is not a valid regex: ") + e.what());
        return;
      }
    } else if (kind == "api") {
      s.kind = StepSource::Kind::kApi;
    } else if (kind == "time") {
      s.kind = StepSource::Kind::kTime;
      if (!ParseDurationNs(arg, &s.period_ns) || s.period_ns == 0) {
        Error("GPROF_STEP", *v, "time step needs a positive duration, e.g. time:100ms");
        return;
      }
    } else {
      Error("GPROF_STEP", *v, "expected nvtx:GLOB, kernel:REGEX, api:NAME or time:DURATION");
      return;
    }
    result.config.step = std::move(s);
  }

  void CaptureKeys() {
    CaptureRange& c = result.config.capture;
    if (const std::string* v = Get("GPROF_CAPTURE_RANGE")) {
      if (*v == "none") c.kind = CaptureRange::Kind::kNone;
      else if (*v == "cudaProfilerApi") c.kind = CaptureRange::Kind::kCudaProfilerApi;
      else if (*v == "nvtx") c.kind = CaptureRange::Kind::kNvtx;
      else Error("GPROF_CAPTURE_RANGE", *v, "expected none, cudaProfilerApi or nvtx");
    }
    if (const std::string* v = Get("GPROF_NVTX_CAPTURE")) {
      const size_t at = v->rfind('@');
      c.nvtx_name = v->substr(0, at);
      c.nvtx_domain = at == std::string::npos ? "" : v->substr(at + 1);
    }
    if (c.kind == CaptureRange::Kind::kNvtx && c.nvtx_name.empty()) {
      Error("GPROF_NVTX_CAPTURE", Get("GPROF_NVTX_CAPTURE") ? *Get("GPROF_NVTX_CAPTURE") : "",
            "GPROF_CAPTURE_RANGE=nvtx needs the range name: NAME or NAME@DOMAIN");
    }
    if (const std::string* v = Get("GPROF_CAPTURE_RANGE_END")) {
      uint64_t n = 0;
      if (*v == "stop") {
        c.repeat = false;
      } else if (*v == "repeat") {
        c.repeat = true;
      } else if (v->rfind("repeat:", 0) == 0 &&
                 std::from_chars(v->data() + 7, v->data() + v->size(), n).ptr ==
                     v->data() + v->size() &&
                 v->size() > 7 && n >= 1 && n <= 1'000'000'000) {
        c.repeat = true;
        c.repeat_count = static_cast<uint32_t>(n);
      } else {
        Error("GPROF_CAPTURE_RANGE_END", *v, "expected stop, repeat or repeat:N (N >= 1)");
      }
    }
    Duration("GPROF_DELAY", &c.delay_ns);
    Duration("GPROF_DURATION", &c.duration_ns);
    if ((c.delay_ns > 0 || c.duration_ns > 0) && result.config.schedule.enabled()) {
      Error(c.delay_ns > 0 ? "GPROF_DELAY" : "GPROF_DURATION",
            *Get(c.delay_ns > 0 ? "GPROF_DELAY" : "GPROF_DURATION"),
            "--delay/--duration pick one time window and cannot be combined with GPROF_SCHEDULE; "
            "use skip_first/wait in the schedule instead");
    }
    if (c.kind != CaptureRange::Kind::kNone && result.config.schedule.enabled()) {
      Error("GPROF_CAPTURE_RANGE", *Get("GPROF_CAPTURE_RANGE"),
            "a capture range and GPROF_SCHEDULE cannot be combined; use one or the other");
    }
  }

  void ControlKeys() {
    Config& c = result.config;
    Bool("GPROF_START_PAUSED", &c.start_paused);
    if (const std::string* v = Get("GPROF_SESSION")) {
      constexpr std::string_view kAllowed =
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
      const bool valid =
          !v->empty() && v->size() <= 64 && v->find_first_not_of(kAllowed) == std::string::npos;
      if (valid) c.session = *v;
      else Error("GPROF_SESSION", *v, "expected 1 to 64 letters, digits, '.', '_' or '-'");
    }
    if (!c.start_paused) return;
    const char* other = nullptr;
    if (c.schedule.enabled()) other = "GPROF_SCHEDULE";
    else if (c.capture.kind != CaptureRange::Kind::kNone) other = "GPROF_CAPTURE_RANGE";
    else if (c.capture.delay_ns > 0 || c.capture.duration_ns > 0) other = "GPROF_DELAY/DURATION";
    if (other != nullptr) {
      Error("GPROF_START_PAUSED", *Get("GPROF_START_PAUSED"),
            std::string("--start-paused takes its windows from `gprof-run capture` and cannot be "
                        "combined with ") + other);
      return;
    }
    c.capture.kind = CaptureRange::Kind::kControl;
  }

  void BacktraceKey() {
    const std::string* v = Get("GPROF_BACKTRACE");
    if (v == nullptr) return;
    if (*v == "none") {
      result.config.backtrace = 0;
      return;
    }
    uint8_t bits = 0;
    std::string_view rest = *v;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      if (item == "sync") bits |= kBacktraceSync;
      else if (item == "alloc") bits |= kBacktraceAlloc;
      else if (item == "memcpy") bits |= kBacktraceMemcpy;
      else if (item == "launch") bits |= kBacktraceLaunch;
      else {
        Error("GPROF_BACKTRACE", *v,
              "expected none or a comma list of sync, alloc, memcpy, launch (e.g. sync,alloc)");
        return;
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    result.config.backtrace = bits;
  }

  void UnknownKeys() {
    for (const auto& [key, value] : env) {
      if (key.rfind("GPROF_", 0) != 0) continue;
      bool known = false;
      for (const ConfigKey& k : ConfigKeys()) known = known || k.name == key;
      if (!known) {
        result.warnings.push_back("unknown setting " + key + "=" + value +
                                  " ignored (gprof-run --help-env lists the settings)");
      }
    }
  }
};

}  // namespace

bool ParseDurationNs(std::string_view text, uint64_t* ns) {
  static const std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"", 1e9}};
  for (const auto& [suffix, scale] : kUnits) {
    if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string_view number = text.substr(0, text.size() - suffix.size());
    double value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || !(value >= 0) ||
        !std::isfinite(value) || value * scale > 1e18) {
      return false;
    }
    *ns = static_cast<uint64_t>(std::llround(value * scale));
    return true;
  }
  return false;
}

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  return "warn";
}

ParseResult ParseConfig(const std::map<std::string, std::string>& env) {
  Parser p{env, {}};
  Config& c = p.result.config;
  if (const std::string* v = p.Get("GPROF_OUTPUT_DIR")) c.output_dir = *v;
  if (const std::string* v = p.Get("GPROF_CUPTI_LIB")) c.cupti_lib = *v;
  p.LogLevelKey();
  p.Bool("GPROF_CUDA", &c.cuda);
  p.Bool("GPROF_NVTX", &c.nvtx);
  p.Bool("GPROF_TORCH_OPS", &c.torch_ops);
  p.Bool("GPROF_RECORD_SHAPES", &c.record_shapes);
  p.Bool("GPROF_TORCH_MEMORY", &c.torch_memory);
  p.Bool("GPROF_TORCH_ITT", &c.torch_itt);
  if (const std::string* v = p.Get("GPROF_TORCH_STEPS")) {
    if (*v == "optimizer") c.torch_steps = true;
    else if (*v == "off") c.torch_steps = false;
    else p.Error("GPROF_TORCH_STEPS", *v, "expected optimizer or off");
  }
  p.Uint("GPROF_PYTHON_SAMPLING", 0, 2000, &c.python_sampling_hz);
  if (const std::string* v = p.Get("GPROF_PYTHON_SAMPLER")) {
    if (*v == "auto") c.python_sampler_in_process = false;
    else if (*v == "in-process") c.python_sampler_in_process = true;
    else p.Error("GPROF_PYTHON_SAMPLER", *v, "expected auto or in-process");
  }
  p.Uint("GPROF_CPU_SAMPLING", 0, 20000, &c.cpu_sampling_hz);
  if (const std::string* v = p.Get("GPROF_CPU_SAMPLING_BACKEND")) {
    if (*v == "auto") c.cpu_sampling_backend = CpuSamplingBackend::kAuto;
    else if (*v == "process") c.cpu_sampling_backend = CpuSamplingBackend::kProcess;
    else if (*v == "perf") c.cpu_sampling_backend = CpuSamplingBackend::kPerf;
    else if (*v == "timer") c.cpu_sampling_backend = CpuSamplingBackend::kTimer;
    else p.Error("GPROF_CPU_SAMPLING_BACKEND", *v, "expected auto, process, perf or timer");
  }
  if (const std::string* v = p.Get("GPROF_CPU_SAMPLER_PROCESS")) {
    if (*v == "auto") c.cpu_sampler_process_refused = false;
    else if (*v == "refuse") c.cpu_sampler_process_refused = true;
    else p.Error("GPROF_CPU_SAMPLER_PROCESS", *v, "expected auto or refuse");
  }
  p.ApiFilterKey();
  p.BacktraceKey();
  p.Uint("GPROF_ACTIVITY_BUFFER_KIB", 64, 262144, &c.activity_buffer_kib);
  p.Uint("GPROF_ACTIVITY_POOL", 2, 65536, &c.activity_pool_buffers);
  p.Uint("GPROF_HOST_BUFFER_MIB", 1, 65536, &c.host_buffer_mib);
  p.Uint("GPROF_PENDING_MIB", 1, 65536, &c.pending_mib);
  p.Uint("GPROF_SEGMENT_SECONDS", 0, 86400, &c.segment_seconds);
  p.ScheduleKey();
  p.StepKey();
  p.CaptureKeys();
  p.ControlKeys();
  p.UnknownKeys();
  return std::move(p.result);
}

std::string FormatError(const ConfigError& e) {
  return e.key + "=" + e.value + ": " + e.message;
}

}  // namespace gprof

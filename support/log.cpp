#include "support/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace gprof::log {
namespace {

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

// Built on first use and deliberately never destroyed: the library may log from atexit
// handlers, after static destructors would have run.
spdlog::logger& Logger() {
  static spdlog::logger* logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* l = new spdlog::logger("gprof", std::move(sink));
    l->set_pattern("gprof-run: %l: %v");
    l->set_level(spdlog::level::warn);
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return *logger;
}

}  // namespace

void SetLevel(LogLevel level) { Logger().set_level(ToSpdlog(level)); }
bool Enabled(LogLevel level) { return Logger().should_log(ToSpdlog(level)); }
void Error(std::string_view message) { Logger().error("{}", message); }
void Warn(std::string_view message) { Logger().warn("{}", message); }
void Info(std::string_view message) { Logger().info("{}", message); }
void Debug(std::string_view message) { Logger().debug("{}", message); }

}  // namespace gprof::log

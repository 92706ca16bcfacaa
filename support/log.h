// Logging: one named spdlog logger ("gprof") writing "gprof-run: <level>: <message>" to stderr.
// Never call from a hot path (CUPTI callbacks, NVTX hooks). spdlog and fmt are compiled into
// log.cpp only, so they stay hidden inside the injection library and never clash with the
// profiled program's own copies.
#pragma once

#include <string_view>

#include "config/config.h"

namespace gprof::log {

// Sets the level; safe to call more than once (the last call wins).
void SetLevel(LogLevel level);
bool Enabled(LogLevel level);

void Error(std::string_view message);
void Warn(std::string_view message);
void Info(std::string_view message);
void Debug(std::string_view message);

}  // namespace gprof::log

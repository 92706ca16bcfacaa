// Whether this kernel lets a process open a task-clock perf event on itself (for the
// --cpu-sampling perf tests: they skip, saying why, without it; perf_event_paranoid decides).
#pragma once

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gprof::testing {

// "" when perf_event_open of a user-space task-clock event on this thread works, else why not.
inline std::string PerfUnavailable() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) return std::string("perf_event_open: ") + std::strerror(errno);
  ::close(static_cast<int>(fd));
  return "";
}

}  // namespace gprof::testing

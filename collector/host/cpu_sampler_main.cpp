// gprof-cpu-sampler: --cpu-sampling's sampler process (docs/CPU_SAMPLING.md, "process";
// the protocol is cpu_sampler_process.h). Started by the profiled program's gprof-run library
// (cpu_sampler_process.cpp), it opens the perf events on the program's threads, owns their rings
// and copies the samples into the program's sample queue (shared memory) every 10 ms, until the
// program closes the control pipe (stop, exit, exec or death). The program pays only the kernel's
// sample interrupts; this process's wake-ups and copies are its own CPU time.
//
// Every signal stays blocked (inherited from the program's spawn), so a Ctrl-C to the terminal's
// process group does not end it before the program has taken its last samples.
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "collector/host/cpu_perf_rings.h"
#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler_process.h"

namespace {

using namespace gprof::collector;
using namespace gprof::collector::cpu_sampling_internal;

long Arg(char** argv, int i) { return std::strtol(argv[i], nullptr, 10); }

// Leaves only our three descriptors open: one of the program's kept open here could keep the
// program's peer from seeing its end (a pipe to a subprocess).
void CloseOthers(int a, int b, int c) {
  for (int fd = 0; fd < 3; ++fd) {
    if (fd != a && fd != b && fd != c) ::close(fd);
  }
  const int hi = a > b ? (a > c ? a : c) : (b > c ? b : c);
  if (::syscall(SYS_close_range, static_cast<unsigned>(hi) + 1, ~0u, 0u) != 0) {
    for (int fd = hi + 1; fd < 65536; ++fd) ::close(fd);  // kernels before 5.9
  }
  for (int fd = 3; fd < hi; ++fd) {
    if (fd != a && fd != b && fd != c) ::close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) return 2;
  const pid_t program = static_cast<pid_t>(Arg(argv, 1));
  const uint32_t hz = static_cast<uint32_t>(Arg(argv, 2));
  const int control = static_cast<int>(Arg(argv, 3));
  const int answers = static_cast<int>(Arg(argv, 4));
  const int queue_fd = static_cast<int>(Arg(argv, 5));
  const size_t slots = static_cast<size_t>(Arg(argv, 6));
  const bool refuse = Arg(argv, 7) == 1;
  if (program <= 0 || hz == 0 || slots == 0 || (slots & (slots - 1)) != 0) return 2;
  CloseOthers(control, answers, queue_fd);
  CpuSampleQueue queue;
  StartAnswer answer{static_cast<int32_t>(PerfRingsError::kMmap), ENOMEM};
  if (!queue.Attach(queue_fd, slots)) {
    (void)!::write(answers, &answer, sizeof answer);
    return 1;
  }
  char go = 0;
  if (::read(control, &go, 1) != 1) return 0;  // the program gave up before the go
  static PerfRings rings{};
  static pid_t tids[kMaxPerfEvents];
  const int n = ListThreads(program, 0, tids, kMaxPerfEvents);
  answer = StartAnswer{static_cast<int32_t>(PerfRingsError::kNoThreads), n < 0 ? -n : 0};
  if (refuse) {
    answer = StartAnswer{static_cast<int32_t>(PerfRingsError::kOpen), EACCES};
  } else if (n > 0) {
    const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
    answer.error = static_cast<int32_t>(
        OpenPerfRings(tids, static_cast<size_t>(n), cpus > 0 ? static_cast<int>(cpus) : 1,
                      ::sysconf(_SC_PAGESIZE), hz, &rings, &answer.err_no));
  }
  if (::write(answers, &answer, sizeof answer) != sizeof answer ||
      answer.error != static_cast<int32_t>(PerfRingsError::kNone)) {
    return 1;
  }
  const uint64_t period_ns = hz >= 1000000000u ? 1 : 1000000000ull / hz;
  pollfd p{control, POLLIN, 0};
  for (;;) {
    p.revents = 0;
    const int ready = ::poll(&p, 1, kSamplerReadEveryMs);
    // Readable or hung up: the program closed the control pipe.
    const bool last = ready > 0 && p.revents != 0;
    if (last) DisablePerfRings(rings);
    ReadPerfRings(rings, program, period_ns, queue);
    if (last) return 0;
  }
}

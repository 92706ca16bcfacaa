// See signals.h.
#include "collector/lifecycle/signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "collector/host/host_collection.h"
#include "collector/lifecycle/flush.h"
#include "collector/lifecycle/runtime.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {
namespace {

int g_wake_fds[2] = {-1, -1};  // signal handler -> flush thread
int g_done_fds[2] = {-1, -1};  // flush thread -> signal handler
bool g_handler_installed[NSIG] = {};

void SignalHandler(int sig) {
  const int saved_errno = errno;
  // Wake the flush thread and wait for the dump only while a flush can still complete: none has
  // started (the flush thread runs it), or one runs on another thread. If the exit flush is
  // running on this very thread (the signal interrupted it), it cannot resume before this handler
  // returns: waiting would only delay death by the timeout, so die at once (no dump). Once the
  // flush is done there is nothing to wait for.
  const int flush = FlushState();
  const bool flush_can_finish = flush == kFlushNone || (flush > 0 && flush != CallerTid());
  if (flush_can_finish && !HostInert() && ::getpid() == g_pid && g_wake_fds[1] >= 0 &&
      g_done_fds[0] >= 0) {
    const char c = static_cast<char>(sig);
    if (::write(g_wake_fds[1], &c, 1) == 1) {
      pollfd done{g_done_fds[0], POLLIN, 0};
      (void)::poll(&done, 1, kSignalFlushTimeoutMs);
    }
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  // Blocked while this handler runs; delivered with the default action as soon as it returns,
  // so the program ends with the same status as without us.
  ::raise(sig);
  errno = saved_errno;
}

void* FlushThreadMain(void*) {
  char c;
  for (;;) {
    const ssize_t n = ::read(g_wake_fds[0], &c, 1);
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    return nullptr;
  }
  NoteSignalFlush();  // the exit flush gives CUPTI only a bounded try (flush.h DrainGpuBounded)
  FlushAtExit();
  const char done = 1;
  (void)!::write(g_done_fds[1], &done, 1);
  return nullptr;
}

}  // namespace

void InstallSignalHandlers() {
  bool any = false;
  for (int sig : kSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;  // program's own
    any = true;
  }
  if (!any) return;
  if (::pipe2(g_wake_fds, O_CLOEXEC) != 0 || ::pipe2(g_done_fds, O_CLOEXEC) != 0) {
    log::Warn(std::string("cannot create the signal flush pipes: ") + std::strerror(errno) +
              "; a SIGINT/SIGTERM/SIGHUP will end the program without a profile");
    return;
  }
  // The flush thread must never take the signal itself.
  pthread_t thread;
  const int rc = WithFlushSignalsBlocked([&] {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    const int created = pthread_create(&thread, &attr, &FlushThreadMain, nullptr);
    pthread_attr_destroy(&attr);
    return created;
  });
  if (rc != 0) {
    log::Warn(std::string("cannot start the signal flush thread: ") + std::strerror(rc) +
              "; a SIGINT/SIGTERM/SIGHUP will end the program without a profile");
    return;
  }
  pthread_setname_np(thread, "gprof-flush");
  for (int sig : kSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &SignalHandler;
    sigemptyset(&sa.sa_mask);
    for (int other : kSignals) sigaddset(&sa.sa_mask, other);
    sa.sa_flags = SA_RESTART;
    if (::sigaction(sig, &sa, nullptr) == 0) g_handler_installed[sig] = true;
  }
}

void ResetSignalsInForkChild() {
  for (int sig : kSignals) {
    if (!g_handler_installed[sig]) continue;
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == &SignalHandler) {
      struct sigaction dfl;
      std::memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  for (int* fds : {g_wake_fds, g_done_fds}) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) ::close(fds[i]);
      fds[i] = -1;
    }
  }
}

}  // namespace gprof::collector::lifecycle

// SIGINT/SIGTERM/SIGHUP: the profile is flushed before the program dies of the signal, with the
// same exit status as without us. A handler is installed only for signals the program left at
// SIG_DFL; it wakes the flush thread (started here, at init) and waits, bounded, for the dump.
//
// Rules: the handler does only async-signal-safe things (a lock-free atomic load, write, poll,
// sigaction, raise, getpid, syscall(SYS_gettid)) and never waits for a flush running on its own
// thread. Our threads (flush, window, CUPTI parser) are created with these signals blocked
// (WithFlushSignalsBlocked), so the handler never runs on a thread the flush needs.
#pragma once

#include <pthread.h>
#include <signal.h>

#include "collector/lifecycle/runtime_state.h"

namespace gprof::collector::lifecycle {

// At init: the flush pipes, the flush thread and the handlers. Failures are logged (a signal then
// ends the program without a profile).
void InstallSignalHandlers();

// In a child forked without exec (pthread_atfork child handler: one thread, locks possibly held
// by vanished threads): our handlers back to SIG_DFL, the pipes closed. Takes no lock.
void ResetSignalsInForkChild();

// Runs `start` (which creates threads of ours) with the flush signals blocked on the calling
// thread; new threads inherit the mask, so a signal handler never runs on a thread that the flush
// has to wait for (the window thread, the CUPTI parser), which would hang the flush until timeout.
template <typename Start>
auto WithFlushSignalsBlocked(Start start) {
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old_mask};
  return start();
}

}  // namespace gprof::collector::lifecycle

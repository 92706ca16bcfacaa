// The control server of a program started with --start-paused: answers `gprof-run capture`,
// `pause`, `resume` and `sessions` over a Unix-domain socket (model/control_channel.h says where
// and in which words) and turns their requests into control captures of the window thread
// (collector/windows/window_thread.h: PostControlCapture, PostControlPause).
//
// Threads: one server thread of ours, started at init and stopped at exit; it polls the
// listening socket, its clients and a wake-up eventfd, and never runs program code. The window
// thread tells it about each saved capture (SetWindowSavedObserver) through a mutex-guarded
// list and the eventfd. Nothing here runs on the program's threads; all of it is cold.
//
// Security: the socket directory is this user's, mode 0700 (control_channel.h); each client's
// uid is read with SO_PEERCRED and any uid but ours is refused, logged and answered with an
// error line. Stale sockets of dead processes are removed by the clients (`gprof-run sessions`)
// and by a server that finds its own path taken by a socket nobody listens on.
#pragma once

#include <string>

#include "config/config.h"

namespace gprof::collector {

struct ControlIdentity {
  std::string session;     // GPROF_SESSION, else the program's name
  std::string program;
  std::string command;     // the command line, for `gprof-run sessions`
  std::string output_dir;  // where the captures' dumps go (absolute)
  // GPU collection's state for `status` ("collected", why it is off, or "" before the program's
  // first CUDA call); called on the server thread. nullptr: not reported.
  std::string (*gpu_status)() = nullptr;
  std::string socket_dir;  // "" = control::SocketDir() (tests pass their own)
};

// Starts listening when `config.start_paused` (windows must already run with control
// captures). On failure logs one warning saying why (captures cannot be asked for; the program
// runs on uncollected) and returns false. Idempotent. Cold.
bool StartControlServer(const Config& config, const ControlIdentity& identity) noexcept;

// Whether the server listens (started and not stopped).
bool ControlServerRunning() noexcept;

// At exit, after FinishWindows (which saves an open capture as partial): answers the clients
// still waiting with what was saved, closes them, removes the socket and joins the thread.
// Idempotent; a no-op when the server never started.
void StopControlServer() noexcept;

}  // namespace gprof::collector

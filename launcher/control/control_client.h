// The client side of the control channel (model/control_channel.h): finds the sessions of
// programs started with --start-paused, sends them one request and reads their replies. Used by
// `gprof-run sessions|capture|pause|resume` (control_commands.cpp). Launcher process only.
#pragma once

#include <string>
#include <vector>

#include "model/control_channel.h"

namespace gprof::launcher {

struct SessionInfo {
  long pid = 0;
  std::string socket_path;
  control::Message status;  // the session's `status` reply (verb "ok")
};

struct SessionList {
  std::vector<SessionInfo> live;   // ordered by pid
  int stale_removed = 0;           // sockets of processes that are gone, removed
  std::string error;               // the directory could not be used ("" otherwise)
};

// Every session of this user that answers `status` within `timeout_ms`. Sockets nobody listens
// on (their process is gone, or its pid now belongs to another program) are removed; a session
// that does not answer in time is skipped.
SessionList ListSessions(int timeout_ms);

// The session `target` names: a pid (all digits), else a session name. "" and `*out` set, or the
// message (none, or several with that name: they are listed).
std::string FindSession(const std::string& target, SessionInfo* out);

// A connection to one session: one request, then its replies one line at a time.
class ControlConnection {
 public:
  ControlConnection() = default;
  ~ControlConnection();
  ControlConnection(const ControlConnection&) = delete;
  ControlConnection& operator=(const ControlConnection&) = delete;

  // "" on success, else the message (no such socket, refused, ...).
  std::string Connect(const std::string& socket_path, int timeout_ms);
  // The last Connect failed because nobody listens there (a stale socket).
  bool refused() const { return refused_; }
  std::string Send(const control::Message& request);
  // The next reply; waits at most `timeout_ms` (-1: no limit). "" and `*reply` set, else the
  // message ("closed" when the server closed without a reply).
  std::string Read(control::Message* reply, int timeout_ms);

 private:
  int fd_ = -1;
  bool refused_ = false;
  std::string in_;
};

}  // namespace gprof::launcher

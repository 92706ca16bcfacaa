// The control channel between `gprof-run capture|pause|resume|sessions` (launcher/) and a
// program started with --start-paused (collector/control/): where the sockets live, and the
// one-line messages both sides exchange. No threads, no CUDA; both processes link it.
//
// Sockets: Unix-domain stream sockets `<dir>/<pid>.sock`, `<dir>` = $XDG_RUNTIME_DIR/gprof-run
// when XDG_RUNTIME_DIR is an absolute path, else /tmp/gprof-run-<uid>. The directory is this
// user's, mode 0700; one that belongs to somebody else, is a link, or is open to group or others
// is refused (a planted directory in /tmp must not receive our sockets). The server also checks
// each client's uid with SO_PEERCRED and refuses any other uid.
//
// Messages: one line each, `verb` then tab-separated `key=value` fields, values %-escaped
// (`%`, tab, CR and LF as %25, %09, %0D, %0A) so a path with any byte survives. A client sends
// one request and reads replies until the server closes:
//   status                       -> ok pid= session= program= state= captures= output_dir= ...
//   capture duration_ns=N|steps=N -> ok capture=K, then (when saved) saved capture=K path=P
//   resume                       -> ok capture=K                  (runs until a pause)
//   pause                        -> ok capture=K, then saved ...  (the open capture is saved)
//                                   | ok state=paused             (nothing was open)
//                                   | ok cancelled=K              (a capture waiting for a step)
//   anything refused             -> error message=...
// Capture numbers K start at 1; capture K is written as <program>.<pid>.capture<K>.gpdump.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace gprof::control {

inline constexpr size_t kMaxMessageBytes = 16384;  // a longer line is refused

// The sockets' directory for this user (see above; SocketDirFor with this process's
// XDG_RUNTIME_DIR and effective uid); not created.
std::string SocketDir();
std::string SocketDirFor(const char* xdg_runtime_dir, unsigned uid);
// Creates `dir` if needed and checks it (ours, a directory, not a link, mode 0700). "" on
// success, else the message.
std::string EnsureSocketDir(const std::string& dir);
// Checks an existing `dir` the same way without creating it. "" when usable; `*missing` is set
// when it does not exist (no session has run).
std::string CheckSocketDir(const std::string& dir, bool* missing);
// `<dir>/<pid>.sock`.
std::string SocketPath(const std::string& dir, long pid);
// The pid of a socket file name `<pid>.sock`, or -1.
long SocketPid(std::string_view file_name);

struct Message {
  std::string verb;
  std::map<std::string, std::string> fields;
  // The field's value, or "" when absent.
  std::string Get(const std::string& key) const;
};

// The line for `m`, ending in '\n'.
std::string EncodeMessage(const Message& m);
// Parses one line (without its '\n'). False on a malformed line: an empty verb, a field
// without '=', a bad %-escape, or a key used twice.
bool DecodeMessage(std::string_view line, Message* m);

}  // namespace gprof::control

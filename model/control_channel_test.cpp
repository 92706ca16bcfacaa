// Unit tests: the control channel's message lines (escaping, malformed lines) and its socket
// directory checks (control_channel.h).
#include "model/control_channel.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace gprof::control {
namespace {

TEST(ControlMessage, RoundTripsEveryByteOfAPath) {
  Message m;
  m.verb = "saved";
  std::string path = "/tmp/a b\tc\nd\re%25f=g";
  path += '\0';
  path += "\xff";
  m.fields["path"] = path;
  m.fields["capture"] = "3";
  const std::string line = EncodeMessage(m);
  // Hand-derived: fields in key order, the four special bytes escaped, '=' in a value kept.
  EXPECT_EQ(line, std::string("saved\tcapture=3\tpath=/tmp/a b%09c%0Ad%0De%2525f=g") + '\0' +
                      "\xff\n");
  Message back;
  ASSERT_TRUE(DecodeMessage(std::string_view(line).substr(0, line.size() - 1), &back));
  EXPECT_EQ(back.verb, "saved");
  EXPECT_EQ(back.Get("path"), path);
  EXPECT_EQ(back.Get("capture"), "3");
  EXPECT_EQ(back.Get("absent"), "");
}

TEST(ControlMessage, MalformedLinesAreRefused) {
  Message m;
  EXPECT_TRUE(DecodeMessage("status", &m));
  EXPECT_TRUE(m.fields.empty());
  for (const char* bad : {"", "\tk=v", "capture\tsteps", "capture\t=3", "capture\tk=%4",
                          "capture\tk=%zz", "capture\tk=1\tk=2", "a=b"}) {
    EXPECT_FALSE(DecodeMessage(bad, &m)) << bad;
  }
  EXPECT_TRUE(DecodeMessage("capture\tk=", &m));  // an empty value is a value
  EXPECT_EQ(m.fields.count("k"), 1u);
}

TEST(ControlSocket, PathsAndPids) {
  EXPECT_EQ(SocketPath("/d", 42), "/d/42.sock");
  EXPECT_EQ(SocketPid("42.sock"), 42);
  for (const char* bad : {"x.sock", ".sock", "42.sock.tmp", "-1.sock", "0.sock", "42",
                          "12345678901.sock"}) {
    EXPECT_EQ(SocketPid(bad), -1) << bad;
  }
}

// The directory: $XDG_RUNTIME_DIR/gprof-run when that is absolute, else /tmp/gprof-run-UID;
// made 0700; a directory open to others, a link, or a file there is refused with a message
// naming the fix.
TEST(ControlSocket, DirectoryIsOursAndClosedToOthers) {
  namespace fs = std::filesystem;
  EXPECT_EQ(SocketDirFor("/run/user/7", 7), "/run/user/7/gprof-run");
  EXPECT_EQ(SocketDirFor("relative", 7), "/tmp/gprof-run-7");  // a relative one is not trusted
  EXPECT_EQ(SocketDirFor(nullptr, 7), "/tmp/gprof-run-7");
  const fs::path base = fs::temp_directory_path() / ("gprof-ctl-test-" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  const std::string dir = SocketDirFor(base.c_str(), geteuid());
  bool missing = false;
  EXPECT_EQ(CheckSocketDir(dir, &missing), "");
  EXPECT_TRUE(missing);
  ASSERT_EQ(EnsureSocketDir(dir), "");
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  EXPECT_NE(EnsureSocketDir(dir).find("open to other users (mode 755); run chmod 700"),
            std::string::npos);
  fs::remove_all(dir);
  fs::create_directories(base / "elsewhere");
  fs::create_directory_symlink(base / "elsewhere", dir);
  EXPECT_NE(EnsureSocketDir(dir).find("is not a directory"), std::string::npos);
  fs::remove_all(base);
}

}  // namespace
}  // namespace gprof::control

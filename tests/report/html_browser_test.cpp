// report.html in a real browser: Debian's chromium, headless, loads the page from disk with the
// network off (a network namespace of its own when `unshare -rn` works here, and in any case
// every host name unresolvable and a dead proxy), and the test checks what a user would see:
// the rendered DOM holds the report's content, no script ran (the profile's names are hostile:
// they try to set the title and load an image), the console stayed empty, and a screenshot is
// not blank. A control page with a script proves that the harness sees scripts and console
// errors, and a blank page that the screenshot check can fail. Skips, saying why, without
// chromium (scripts/setup installs it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/dump.h"
#include "tests/report/png_check.h"
#include "tests/report/report_profile.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

std::string FindChromium() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin");
  std::vector<std::string> search;
  for (std::string d; std::getline(dirs, d, ':');) search.push_back(d);
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    for (const std::string& d : search) {
      const std::string p = d + "/" + name;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "";
}

struct Loaded {
  ProcessResult process;
  std::vector<std::string> console;  // the page's console messages (errors, CSP reports, logs)
};

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; "
                      "scripts/setup installs it): report.html was not checked in a browser";
    }
    dir_ = MakeTempDir("html_browser");
    // A network namespace of our own when the kernel lets us have one (no interface but lo).
    isolated_ = RunProcess({"unshare", "-rn", "true"}).exit_code == 0;
  }

  // Loads file://`page` with `mode` (--dump-dom, --screenshot=...).
  Loaded Load(const std::string& page, const std::vector<std::string>& mode) {
    std::vector<std::string> argv;
    if (isolated_) argv = {"unshare", "-rn"};
    argv.insert(argv.end(), {chromium_, "--headless", "--no-sandbox", "--disable-gpu",
                             "--no-first-run", "--no-default-browser-check",
                             "--disable-extensions", "--disable-background-networking",
                             "--disable-component-update", "--disable-sync",
                             "--disable-default-apps", "--host-resolver-rules=MAP * ~NOTFOUND",
                             "--proxy-server=http://127.0.0.1:9", "--hide-scrollbars",
                             "--user-data-dir=" + dir_ + "/chromium-profile",
                             "--enable-logging=stderr", "--v=0"});
    argv.insert(argv.end(), mode.begin(), mode.end());
    argv.push_back("file://" + page);
    ProcessOptions o;
    o.timeout = std::chrono::milliseconds(90'000);
    Loaded l;
    l.process = RunProcess(argv, o);
    std::istringstream err(l.process.err);
    for (std::string line; std::getline(err, line);) {
      // The page's messages only: under load chromium's own internal pages log to the console
      // too ("Slow network is detected", source chrome://resources/...), which says nothing
      // about the report. The control test below still sees the page's own (file://) errors.
      if (line.find(":CONSOLE") == std::string::npos) continue;
      if (line.find("source: chrome://") != std::string::npos ||
          line.find("source: chrome-untrusted://") != std::string::npos) {
        continue;
      }
      l.console.push_back(line);
    }
    return l;
  }

  // report.html of a dump of ReportProfile(names), made by `gprof-run report`.
  std::string Page(const ReportNames& names) {
    const std::string out = dir_ + "/profile";
    std::filesystem::create_directories(out);
    EXPECT_EQ(WriteDump(ReportProfile(names), out + "/train.4242.gpdump"), "");
    const ProcessResult r = RunProcess({LauncherPath(), "report", out, "-q"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out + "/report.html";
  }

  std::string chromium_, dir_;
  bool isolated_ = false;
};

// The control: a page whose script sets the title and writes two console errors. If the harness
// did not see these, "no script ran, no console errors" below would prove nothing.
TEST_F(Browser, HarnessSeesScriptsAndConsoleErrors) {
  const std::string page = dir_ + "/control.html";
  std::ofstream(page) << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title>"
                         "</head><body><script>document.title='RAN';console.error('boom');"
                         "throw new Error('uncaught');</script></body></html>";
  const Loaded l = Load(page, {"--dump-dom"});
  ASSERT_EQ(l.process.exit_code, 0) << l.process.err;
  EXPECT_NE(l.process.out.find("<title>RAN</title>"), std::string::npos) << l.process.out;
  EXPECT_EQ(l.console.size(), 2u) << l.process.err;
}

TEST_F(Browser, ReportRendersItsContentWithNoScriptAndNoConsoleMessage) {
  const Loaded l = Load(Page(HostileNames()), {"--dump-dom"});
  ASSERT_EQ(l.process.exit_code, 0) << l.process.err;
  const std::string& dom = l.process.out;
  // What the page says (the numbers are derived in report_profile.h / html_report_test.cpp).
  for (const char* text : {"gprof-run report: ", "Neither overhead- nor compute-bound",
                           "<b>3 steps</b>, median 4.000ms", "GPU 0 idle 66.1% of the window",
                           "7.890ms", "peak <b>150.0 MiB</b>", "href=\"./trace.pftrace\"",
                           "ui.perfetto.dev"}) {
    EXPECT_NE(dom.find(text), std::string::npos) << text;
  }
  // The hostile names are text in the document, never elements: no script ran, no image loaded.
  EXPECT_NE(dom.find("&lt;/script&gt;&lt;script&gt;document.title='PWNED'&lt;/script&gt;&lt;img"),
            std::string::npos);
  EXPECT_EQ(dom.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_TRUE(l.console.empty()) << "console:\n" << l.process.err;
  std::printf("network %s\n", isolated_ ? "namespace (unshare -rn)" : "blocked by flags only");
}

// With sampled Python stacks beside the dump (a .pysamples as the sampler writes it: three
// samples of <module> -> a function named like markup), the page has its "Python stacks
// (sampled)" section, and the hostile function name is text, not an element.
TEST_F(Browser, PythonStacksSectionRendersWithNoScript) {
  const std::string out = dir_ + "/profile";
  std::filesystem::create_directories(out);
  std::ofstream(out + "/train.4242.pysamples")
      << "gprof-pysamples\t1\npid\t4242\nprogram\ttrain\nhz\t1000\nperiod_ns\t1000000\n"
         "start_ns\t1700000000000000000\nend_ns\t1700000000018500000\nticks\t3\nmissed\t0\n"
         "dropped\t0\nthreads\t1\nframes\t2\nstacks\t1\nsamples\t3\n"
         "T\t0\t4242\t1\tMainThread\n"
         "F\t0\t1\t1\ttrain.py\t<module>\n"
         "F\t1\t5\t6\ttrain.py\t</script><script>document.title='PWNED'</script>\n"
         "K\t0\t0 1\nS\t1000000\t0\t0\nS\t2000000\t0\t0\nS\t3000000\t0\t0\nend\n";
  const Loaded l = Load(Page(ReportNames{}), {"--dump-dom"});
  ASSERT_EQ(l.process.exit_code, 0) << l.process.err;
  const std::string& dom = l.process.out;
  EXPECT_NE(dom.find("<h2>Python stacks (sampled)</h2>"), std::string::npos) << dom;
  EXPECT_NE(dom.find("3 samples of 1 thread at 1000 Hz"), std::string::npos);
  EXPECT_NE(dom.find("&lt;/script&gt;&lt;script&gt;document.title='PWNED'"), std::string::npos);
  EXPECT_EQ(dom.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_TRUE(l.console.empty()) << "console:\n" << l.process.err;
}

TEST_F(Browser, ScreenshotIsNotBlank) {
  // The check itself can fail: a blank page's screenshot has nothing drawn.
  const std::string blank = dir_ + "/blank.html";
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>";
  const Loaded b = Load(blank, {"--window-size=800,600", "--screenshot=" + dir_ + "/blank.png"});
  ASSERT_EQ(b.process.exit_code, 0) << b.process.err;
  const PngSummary empty = SummarizePng(dir_ + "/blank.png");
  ASSERT_EQ(empty.error, "");
  EXPECT_EQ(empty.not_white, 0u);

  const std::string shot = dir_ + "/report.png";
  const Loaded l =
      Load(Page(ReportNames{}), {"--window-size=1366,900", "--screenshot=" + shot});
  ASSERT_EQ(l.process.exit_code, 0) << l.process.err;
  EXPECT_TRUE(l.console.empty()) << l.process.err;
  const PngSummary s = SummarizePng(shot);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.width, 1366u);
  EXPECT_EQ(s.height, 900u);
  // Text, bars and cards: far more than a few stray pixels, in many colours.
  EXPECT_GT(s.not_white * 100, s.pixels * 5) << s.not_white << " of " << s.pixels;
  EXPECT_GE(s.colors, 16u);
  std::printf("screenshot %s: %u x %u, %.1f%% not white, %llu colours\n", shot.c_str(), s.width,
              s.height, 100.0 * static_cast<double>(s.not_white) / static_cast<double>(s.pixels),
              static_cast<unsigned long long>(s.colors));
}

}  // namespace
}  // namespace gprof::testing

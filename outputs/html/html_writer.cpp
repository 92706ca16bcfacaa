// HTML escaping for the report (html_report_model.h). Launcher process only. Names recorded by the
// profiled program are arbitrary bytes ("</script><img onerror=...>", quotes, invalid UTF-8): they
// reach the page only through here.
#include <string>
#include <string_view>

#include "outputs/html/html_report_model.h"
#include "text/utf8.h"

namespace gprof::html_internal {

void AppendHtml(std::string_view s, std::string* out, size_t max_chars) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars == max_chars) {
      *out += "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
      return;
    }
    ++chars;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '&': *out += "&amp;"; break;
        case '<': *out += "&lt;"; break;
        case '>': *out += "&gt;"; break;
        case '"': *out += "&quot;"; break;
        case '\'': *out += "&#39;"; break;
        case '\t':
        case '\n': *out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7F) {
            *out += kReplacement;
          } else {
            *out += static_cast<char>(c);
          }
      }
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      *out += kReplacement;  // one per invalid byte, as RepairUtf8
      ++i;
      continue;
    }
    // C1 controls (U+0080..U+009F) are as invisible as C0 ones.
    if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      *out += kReplacement;
    } else {
      out->append(s.substr(i, n));
    }
    i += n;
  }
}

std::string Html(std::string_view s, size_t max_chars) {
  std::string out;
  out.reserve(s.size() + 8);
  AppendHtml(s, &out, max_chars);
  return out;
}

}  // namespace gprof::html_internal

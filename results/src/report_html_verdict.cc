// How a verdict looks in the report and where it sorts.
#include "html_text.h"
#include "report_html_parts.h"

namespace kg::results::html {

std::string verdict_badge(const std::string& verdict) {
  const bool known = verdict == "pass" || verdict == "fail" || verdict == "rejected" || verdict == "error";
  return "<span class=\"badge " + (known ? verdict : std::string("other")) + "\">" + escape(verdict) + "</span>";
}

int verdict_rank(const std::string& verdict) {
  if (verdict == "pass") return 0;
  if (verdict == "fail") return 1;
  if (verdict == "error") return 2;
  return 3;  // rejected (and anything unknown: never sorted as better than a failure)
}

}  // namespace kg::results::html

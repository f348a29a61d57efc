// OUT/report.html of one submission, from the documents beside it (report_file.h).
#include "report_file.h"

#include "eval_cli.h"

#include "kernelgate/report_html.h"
#include "kernelgate/results.h"

#include <filesystem>

namespace kg::cli {

bool write_report_html(const std::string& out_dir, bool with_audit, const char* cmd) {
  const std::filesystem::path out = out_dir;
  const std::string path = (out / "report.html").string();
  std::string html;
  try {
    const results::json results = results::read_document((out / "results.json").string());
    const results::json audit = with_audit ? results::read_document((out / "audit.json").string()) : results::json();
    html = results::report_html(results, audit);
  } catch (const std::exception& e) {
    print_error(cmd, path + ": " + e.what());
    return false;
  }
  return write_text_file(path, html, cmd);
}

}  // namespace kg::cli

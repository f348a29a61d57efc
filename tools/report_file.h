// OUT/report.html of one submission, made from the documents the command just wrote beside it
// (a batch's reports are written by the engine: kernelgate/report_html.h).
#pragma once

#include <string>

namespace kg::cli {

// Writes OUT/report.html (kg::results::report_html) from OUT/results.json and, for an audit, from
// OUT/audit.json, atomically. False, with a message naming `cmd`, the file and the problem, when
// a document cannot be read or the report cannot be written.
bool write_report_html(const std::string& out_dir, bool with_audit, const char* cmd);

}  // namespace kg::cli

// OUT/report.html: one self-contained page (inline CSS, SVG and script; no network) for people to
// read and forward, generated from the same documents results.json and audit.json hold. Every
// string taken from a document is HTML-escaped: no text a submission wrote can become markup.
// Torch-free.
#pragma once

#include "kernelgate/results.h"

#include <string>
#include <vector>

namespace kg::results {

// One submission's report: summary (pass rate, geomean speedup, fast_p curve), a sortable op table,
// charts of failure categories, input families and speedups, and every failure's and rule's
// evidence. `audit` is audit.json's document when `kernelgate audit` ran, null otherwise (then no
// audit section). Throws std::runtime_error naming the field when a document is malformed.
std::string report_html(const json& results, const json& audit = nullptr);

// A batch's report: the run, a leaderboard of the submissions (ranked by fraction of ops correct,
// then geomean speedup), the batch's charts, and each submission's summary, op table and evidence.
std::string batch_report_html(const RunIdentity& id, const std::vector<BatchEntry>& entries);

// Writes OUT/report.html (batch_report_html) and OUT/<name>/report.html (report_html) for every
// entry, each atomically (write_atomically). Throws std::runtime_error naming the path.
void write_batch_reports(const std::string& out_dir, const RunIdentity& id, const std::vector<BatchEntry>& entries);

}  // namespace kg::results

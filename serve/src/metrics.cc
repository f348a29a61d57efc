#include "metrics.h"

#include <cstdio>

namespace kg::serve {
namespace {

const std::vector<double> kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void histogram(std::string& out, const std::string& name, const std::string& labels, const std::vector<double>& counts, double sum,
               long count) {
  double cumulative = 0;
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += counts.empty() ? 0 : counts[i];
    out += name + "_bucket{" + labels + sep + "le=\"" + num(kBuckets[i]) + "\"} " + num(cumulative) + "\n";
  }
  out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(count) + "\n";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + num(sum) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count) + "\n";
}

void counter_map(std::string& out, const std::string& name, const std::string& help, const std::string& key,
                 const std::map<std::string, long>& m) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n";
  for (const auto& [k, v] : m) out += name + "{" + key + "=\"" + label(k) + "\"} " + std::to_string(v) + "\n";
}

}  // namespace

void Metrics::Histogram::observe(double v) {
  if (counts.empty()) counts.assign(kBuckets.size(), 0);
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (v <= kBuckets[i]) {
      counts[i] += 1;
      break;
    }
  sum += v;
  ++count;
}

void Metrics::request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, status}];
  request_seconds_[route].observe(seconds);
}

void Metrics::task_decided(const std::string& status, const std::string& verdict, const std::vector<std::string>& rules, double queue_s,
                           double run_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++tasks_[status];
  if (!verdict.empty()) ++verdicts_[verdict];
  for (const auto& r : rules) ++rules_[r];
  queue_seconds_.observe(queue_s);
  run_seconds_.observe(run_s);
}

void Metrics::rejected_admission(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++admission_[reason];
}

std::string Metrics::text(const std::map<std::string, double>& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& [name, v] : gauges) out += "# TYPE " + name + " gauge\n" + name + " " + num(v) + "\n";
  out += "# HELP kernelgate_http_requests_total HTTP requests by route and status.\n# TYPE kernelgate_http_requests_total counter\n";
  for (const auto& [k, v] : requests_)
    out += "kernelgate_http_requests_total{route=\"" + label(k.first) + "\",code=\"" + std::to_string(k.second) + "\"} " +
           std::to_string(v) + "\n";
  out +=
      "# HELP kernelgate_http_request_seconds Time to answer a request (not the evaluation).\n# TYPE kernelgate_http_request_seconds histogram\n";
  for (const auto& [route, h] : request_seconds_)
    histogram(out, "kernelgate_http_request_seconds", "route=\"" + label(route) + "\"", h.counts, h.sum, h.count);
  counter_map(out, "kernelgate_tasks_total", "Tasks decided, by final status.", "status", tasks_);
  counter_map(out, "kernelgate_verdicts_total", "Completed tasks by their worst op verdict.", "verdict", verdicts_);
  counter_map(out, "kernelgate_rules_total", "Rules that fired, per task.", "rule", rules_);
  counter_map(out, "kernelgate_admission_refused_total", "Submissions refused at admission (429/503), by reason.", "reason", admission_);
  out += "# HELP kernelgate_task_queue_seconds Time tasks waited in the queue.\n# TYPE kernelgate_task_queue_seconds histogram\n";
  histogram(out, "kernelgate_task_queue_seconds", "", queue_seconds_.counts, queue_seconds_.sum, queue_seconds_.count);
  out += "# HELP kernelgate_task_run_seconds Time tasks took to evaluate.\n# TYPE kernelgate_task_run_seconds histogram\n";
  histogram(out, "kernelgate_task_run_seconds", "", run_seconds_.counts, run_seconds_.sum, run_seconds_.count);
  return out;
}

}  // namespace kg::serve

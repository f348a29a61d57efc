// The service's counters and histograms, in Prometheus' text format (GET /metrics).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kg::serve {

class Metrics {
 public:
  void request(const std::string& route, int status, double seconds);
  void task_decided(const std::string& status, const std::string& verdict, const std::vector<std::string>& rules, double queue_s,
                    double run_s);
  void rejected_admission(const std::string& reason);  // queue_full, token_quota, draining
  // `gauges`: name -> value, written as they are (queue depth, running, workers).
  std::string text(const std::map<std::string, double>& gauges) const;

 private:
  struct Histogram {
    std::vector<double> counts;  // per bucket of kBuckets, cumulative when written
    double sum = 0;
    long count = 0;
    void observe(double v);
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, long> requests_;
  std::map<std::string, Histogram> request_seconds_;  // by route
  std::map<std::string, long> tasks_, verdicts_, rules_, admission_;
  Histogram queue_seconds_, run_seconds_;
};

}  // namespace kg::serve

// run_batch (engine.h): the submissions of a batch judged by a few worker threads that share the
// build slots, one run lock per device pool, and the journal.
#include "kernelgate/engine.h"
#include "kernelgate/loader.h"
#include "kernelgate/report_html.h"
#include "kernelgate/runner_pool.h"

#include <ATen/Context.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kg::engine {

results::RunIdentity batch_identity(const BatchOptions& options, const policy::Policy& policy, uint64_t seed) {
  results::RunIdentity id;
  id.kernelgate_version = KG_VERSION_STRING;
  id.torch_version = TORCH_VERSION;
  id.device = names::device_name(options.eval.device);
  id.suite = options.eval.suite;
  id.policy = policy.name;
  id.seed = seed;
  id.timing = options.eval.timing;
  id.ops = options.eval.ops;
  id.shard_index = options.shard.index;
  id.shard_count = options.shard.count;
  return id;
}

namespace {

// One submission's part of the batch: the op folders this shard judges, and what the journal already has.
struct Work {
  Submission submission;
  std::vector<std::string> todo;     // ops still to judge, in folder order
  std::vector<std::string> shard;    // every op of this shard, in folder order
  std::map<std::string, json> done;  // op -> per-op object, from the journal
  std::vector<std::pair<std::string, std::string>> problems;
  std::string error;  // the submission cannot be read at all
  bool in_shard = false;
};

// The seed of the run: --seed, else the journal's when resuming, else a fresh secret one.
uint64_t run_seed(const BatchOptions& options, const std::string& journal_path) {
  if (options.eval.seed_given) return options.eval.seed;
  if (options.resume) {
    std::ifstream in(journal_path);
    std::string first;
    if (in && std::getline(in, first)) {
      json head = json::parse(first, nullptr, false);
      if (!head.is_discarded() && head.is_object() && head.contains("run"))
        return results::identity_from_json(head["run"], journal_path + ":1").seed;
    }
  }
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

// Names come from the file system: bytes that are not UTF-8 are replaced rather than thrown on.
std::string dump(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

bool wanted(const BatchOptions& o, const std::string& op) {
  return o.eval.ops.empty() || std::find(o.eval.ops.begin(), o.eval.ops.end(), op) != o.eval.ops.end();
}

Work plan(const BatchOptions& options, const Submission& s, const std::map<std::string, std::map<std::string, json>>& decided) {
  Work w;
  w.submission = s;
  if (auto it = decided.find(s.name); it != decided.end()) w.done = it->second;
  bool any_op = false;
  try {
    loader::ScanResult scan = loader::scan_submission(s.dir);
    w.problems = scan.problems;
    std::vector<std::string> ops;
    for (const loader::OpFolder& f : scan.ops)
      if (wanted(options, f.op)) ops.push_back(f.op);
    for (const std::string& want : options.eval.ops)  // a wanted op without a folder: the harness reports it
      if (std::none_of(scan.ops.begin(), scan.ops.end(), [&](const loader::OpFolder& f) { return f.op == want; })) ops.push_back(want);
    any_op = !ops.empty();
    for (const std::string& op : ops)
      if (results::in_shard(options.shard, s.name, op)) w.shard.push_back(op);
  } catch (const std::exception& e) { w.error = e.what(); }
  for (const std::string& op : w.shard)
    if (!w.done.count(op)) w.todo.push_back(op);
  // A submission with no op to judge (unreadable, no op folders) is reported by one shard alone.
  w.in_shard = any_op ? !w.shard.empty() : results::in_shard(options.shard, s.name, "");
  return w;
}

harness::Report report_header(const BatchOptions& options, const policy::Policy& policy, const Submission& s, uint64_t seed) {
  harness::Report rep;
  rep.version = KG_VERSION_STRING;
  rep.torch_version = TORCH_VERSION;
  rep.device = names::device_name(options.eval.device);
  rep.suite = options.eval.suite;
  rep.policy = policy.name;
  rep.submission = s.dir;
  rep.seed = seed;
  rep.seed_given = true;
  return rep;
}

// results.json's per-op object for one op (the one serialiser, on a report of that op alone).
json op_object(harness::Report header, const harness::OpResult& op) {
  header.ops = {op};
  return json::parse(harness::report_json(header))["ops"].at(0);
}

// The submission's results.json: the journal's ops and this run's, in the order of the shard's ops.
json results_document(harness::Report header, const Work& w, const std::map<std::string, json>& fresh, double wall_s) {
  header.problems = w.problems;
  if (!w.error.empty()) header.problems.push_back({w.submission.dir, w.error});
  json doc = json::parse(harness::report_json(header));
  json ops = json::array();
  std::vector<std::string> order = w.shard;  // by op name, as a merge of shards orders them
  std::sort(order.begin(), order.end());
  for (const std::string& op : order) {
    if (auto it = fresh.find(op); it != fresh.end()) ops.push_back(it->second);
    else if (auto jt = w.done.find(op); jt != w.done.end()) ops.push_back(jt->second);
  }
  doc["ops"] = ops;
  doc["summary"] = results::summary_of_ops(ops, wall_s);
  return doc;
}

// --devices: on cuda one pool per visible GPU unless fewer are asked for; on the CPU as many
// simulated pools as asked (1 by default).
int pool_count(const BatchOptions& o) {
  if (o.eval.device != names::Device::Cuda) return std::max(1, o.device_pools);
  const int gpus = static_cast<int>(at::getNumGPUs());
  if (o.device_pools > gpus)
    throw std::runtime_error("--devices " + std::to_string(o.device_pools) + ": only " + std::to_string(gpus) + " GPU(s) are visible");
  return o.device_pools > 0 ? o.device_pools : std::max(1, gpus);
}

class Batch {
 public:
  Batch(const BatchOptions& o, const policy::Policy& p) : options_(o), policy_(p) {}

  BatchOutcome run() {
    fs::create_directories(options_.out_dir);
    const std::string journal_path = (fs::path(options_.out_dir) / "journal.jsonl").string();
    seed_ = run_seed(options_, journal_path);
    outcome_.identity = batch_identity(options_, policy_, seed_);
    journal_ = results::Journal::open(journal_path, outcome_.identity, options_.resume);
    if (!options_.resume) remove_previous_outputs();
    std::map<std::string, std::map<std::string, json>> decided;
    for (const auto& e : journal_->decided()) decided[e.submission][e.op.value("op", "")] = e.op;
    for (const Submission& s : options_.submissions) {
      Work w = plan(options_, s, decided);
      if (w.in_shard) work_.push_back(std::move(w));
    }
    documents_.resize(work_.size());
    for (const Work& w : work_) progress_.ops_total += w.error.empty() ? w.todo.size() : 0;
    slots_ = std::make_shared<harness::BuildSlots>(options_.jobs);
    pools_ = std::vector<harness::DeviceLock>(static_cast<size_t>(pool_count(options_)));
    for (size_t i = 0; i < pools_.size(); ++i) eagers_.push_back(harness::make_eager_runner());
    const int workers = std::max(1, std::min<int>(options_.jobs, static_cast<int>(work_.size())));
    start_runner_pools(workers);
    std::vector<std::thread> threads;
    for (int t = 0; t < workers; ++t) threads.emplace_back([this, t] { worker(t); });
    for (auto& t : threads) t.join();
    for (auto& eager : eagers_) harness::finish_eager_runner(*eager);
    stop_runner_pools();
    if (fatal_) std::rethrow_exception(fatal_);
    for (size_t i = 0; i < work_.size(); ++i) outcome_.entries.push_back({work_[i].submission.name, documents_[i]});
    return outcome_;
  }

 private:
  // One runner pool per device pool, shared by its workers: each keeps a runner started ahead
  // for every worker that may want one at once (at most 4), and starts no more ahead in all than
  // the batch has ops to judge (and one eager runner per pool when timing).
  // Not on a GPU with timing: there each op starts its runner outside the device lock anyway
  // (harness::evaluate), what bounds the rate is the driver setting CUDA contexts up one at a
  // time, which runners started ahead do not speed up, and the pool measured 0.87-0.93x the
  // throughput of runners started when needed (tools/bench-batch.py, 100 cuda submissions,
  // --jobs 16, rl-reward; docs/batches.md).
  void start_runner_pools(int workers) {
    if (options_.eval.no_runner_pool) return;
    if (options_.eval.device == names::Device::Cuda && options_.eval.timing) return;
    size_t ops = 0;
    for (const Work& w : work_) ops += w.todo.size();
    if (ops == 0) return;
    const size_t per_pool = static_cast<size_t>((workers + static_cast<int>(pools_.size()) - 1) / static_cast<int>(pools_.size()));
    staging_root_ = (fs::path(options_.out_dir) / ".runners").string();
    // What a killed batch left there (this process holds OUT's journal: no other batch runs in OUT).
    std::error_code ec;
    loader::remove_tree(staging_root_, ec);
    for (size_t k = 0; k < pools_.size(); ++k) {
      harness::EvalOptions o = options_.eval;
      o.device_pool = pools_.size() > 1 ? static_cast<int>(k) : -1;
      runner_pools_.push_back(harness::make_runner_pool(o, policy_, (fs::path(staging_root_) / std::to_string(k)).string(),
                                                        std::min<size_t>(per_pool, 4), ops + (o.timing ? 1 : 0)));
    }
  }

  void stop_runner_pools() {
    runner_pools_.clear();  // the runners still waiting are stopped, their folders removed
    if (!staging_root_.empty()) {
      std::error_code ec;
      loader::remove_tree(staging_root_, ec);
    }
  }

  void worker(int t) {
    // Each worker runs on one device pool; with timing, or on a GPU, a pool's timed calls run
    // alone on it (harness::DeviceLock), while judging overlaps.
    const int pool_index = t % static_cast<int>(pools_.size());
    harness::DeviceLock& pool = pools_[static_cast<size_t>(pool_index)];
    const bool exclusive = options_.eval.timing || options_.eval.device == names::Device::Cuda;
    for (size_t i; !stop_.load() && (i = next_.fetch_add(1)) < work_.size();) {
      try {
        judge(work_[i], Pool{pool_index, exclusive ? &pool : nullptr}, documents_[i]);
      } catch (...) {
        // What stops the batch (the journal or OUT cannot be written): the first such error is rethrown by run().
        std::lock_guard<std::mutex> l(fatal_mu_);
        if (!fatal_) fatal_ = std::current_exception();
        stop_.store(true);
      }
    }
  }

  struct Pool {
    int index;
    harness::DeviceLock* lock;  // null: runs on this pool may overlap freely (no timing, on the CPU)
  };

  void judge(const Work& w, Pool pool, json& document) {
    const auto t0 = std::chrono::steady_clock::now();
    const harness::Report header = report_header(options_, policy_, w.submission, seed_);
    std::map<std::string, json> fresh;
    if (w.error.empty() && !w.todo.empty()) {
      harness::EvalOptions o = options_.eval;
      o.submission = w.submission.dir;
      o.out_dir = (fs::path(options_.out_dir) / w.submission.name).string();
      o.ops = w.todo;
      o.seed = seed_;
      o.seed_given = true;
      o.jobs = options_.jobs;
      o.build_slots = slots_;
      o.device_lock = pool.lock;
      if (pool.lock) o.eager_runner = eagers_[static_cast<size_t>(pool.index)];  // used under the pool's exclusive lock only
      if (!runner_pools_.empty()) o.runner_pool = runner_pools_[static_cast<size_t>(pool.index)];
      else o.no_runner_pool = true;  // each runner started when needed: no evaluation keeps a pool of its own
      // One pool: the default device, as for one submission. Several: GPU k for pool k.
      o.device_pool = pools_.size() > 1 ? pool.index : -1;
      if (options_.on_progress)
        o.on_progress = [this, &w](const harness::EvalProgress& p) {
          if (p.op.empty()) return;  // this submission's end: its ops were counted one by one
          std::lock_guard<std::mutex> l(progress_mu_);
          if (p.phase == "decided") progress_.ops_done++;
          progress_.op = w.submission.name + ": " + p.op;
          progress_.phase = p.phase;
          progress_.samples_done = p.samples_done;
          progress_.samples_total = p.samples_total;
          options_.on_progress(progress_);
        };
      std::exception_ptr journal_failed;
      o.on_op_decided = [&](const harness::OpResult& r) {
        json obj = op_object(header, r);
        try {
          journal_->append(w.submission.name, obj);
        } catch (...) {
          if (!journal_failed) journal_failed = std::current_exception();
        }
        fresh[r.op] = std::move(obj);
      };
      try {
        harness::evaluate(o, policy_);
        if (journal_failed) std::rethrow_exception(journal_failed);
      } catch (const std::exception& e) {
        if (journal_failed) std::rethrow_exception(journal_failed);
        // A configuration error of this submission alone (its folder vanished): its problem, not the batch's.
        Work broken = w;
        broken.error = e.what();
        document = results_document(header, broken, fresh, seconds_since(t0));
        document["device_pool"] = pool.index;
        write(w, document);
        return;
      }
    }
    document = results_document(header, w, fresh, seconds_since(t0));
    document["device_pool"] = pool.index;
    write(w, document);
  }

  // A new run's output folder holds nothing of an earlier run's that a reader could take for this one's.
  void remove_previous_outputs() {
    const fs::path out = options_.out_dir;
    for (const char* name : {"summary.json", "summary.csv", "summary.md", "report.html"}) fs::remove(out / name);
    for (const Submission& s : options_.submissions) {
      fs::remove(out / s.name / "results.json");
      fs::remove(out / s.name / "report.html");
    }
  }

  void write(const Work& w, const json& document) {
    const fs::path dir = fs::path(options_.out_dir) / w.submission.name;
    fs::create_directories(dir);
    results::write_atomically((dir / "results.json").string(), dump(document));
  }

  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  const BatchOptions& options_;
  const policy::Policy& policy_;
  uint64_t seed_ = 0;
  BatchOutcome outcome_;
  std::unique_ptr<results::Journal> journal_;
  std::vector<Work> work_;
  std::vector<json> documents_;
  std::shared_ptr<harness::BuildSlots> slots_;
  std::vector<harness::DeviceLock> pools_;
  std::vector<std::shared_ptr<loader::RunnerPool>> runner_pools_;  // per device pool
  std::string staging_root_;
  std::vector<std::shared_ptr<harness::EagerRunner>> eagers_;  // per pool: eager timing's runner
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex fatal_mu_;
  std::exception_ptr fatal_;
  std::mutex progress_mu_;
  harness::EvalProgress progress_;  // over the whole batch (BatchOptions::on_progress)
};

}  // namespace

BatchOutcome run_batch(const BatchOptions& options, const policy::Policy& policy) {
  BatchOutcome outcome = Batch(options, policy).run();
  const fs::path out = options.out_dir;
  // summary.json last: the file a merge or a reader takes for the finished run.
  results::write_atomically((out / "summary.csv").string(), results::batch_summary_csv(outcome.entries));
  results::write_atomically((out / "summary.md").string(), results::batch_summary_markdown(outcome.identity, outcome.entries));
  results::write_batch_reports(out.string(), outcome.identity, outcome.entries);
  results::write_atomically((out / "summary.json").string(), dump(results::batch_summary_json(outcome.identity, outcome.entries)));
  return outcome;
}

}  // namespace kg::engine

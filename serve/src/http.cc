// kernelgate serve's HTTP layer (cpp-httplib): routes, tokens, body limits, JSON errors, and the
// signal that drains the service.
#include "service.h"
#include "tokens.h"

#include "kernelgate/serve.h"

#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

namespace kg::serve {
namespace {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& field, const std::string& message, int retry_after = 0) {
  if (retry_after > 0) res.set_header("Retry-After", std::to_string(retry_after));
  send_json(res, status, {{"error", {{"field", field}, {"message", message}}}});
}

// cpp-httplib listens with a backlog of 5 (Debian's is a compiled library, so its
// CPPHTTPLIB_LISTEN_BACKLOG cannot be changed from here): a trainer's clients opening connections
// at once overflowed it, and some were answered with a reset (seen at concurrency 16 on the H200,
// 128 at once on 2 cores; nstat's ListenOverflows counts them). Calling listen() again on the
// listening socket raises the backlog (the kernel caps it at net.core.somaxconn). False when no
// listening socket on `port` was found.
bool raise_listen_backlog(int port, int backlog) {
  bool raised = false;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) { continue; }
    struct stat st {};
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    else if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port && ::listen(fd, backlog) == 0) raised = true;
  }
  return raised;
}

class Api {
 public:
  Api(Service& service, const Tokens& tokens) : service_(service), tokens_(tokens) {}

  void install(httplib::Server& server) {
    server.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      timed(res, "/health", [&] { send_json(res, 200, service_.health()); });
    });
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      timed(res, "/metrics", [&] { res.set_content(service_.metrics_text(), "text/plain; version=0.0.4"); });
    });
    server.Post("/v1/evaluate", [this](const httplib::Request& req, httplib::Response& res) {
      authorised(req, res, "/v1/evaluate", [&](const std::string& token) { evaluate(req, res, token); });
    });
    server.Post("/v1/evaluate/batch", [this](const httplib::Request& req, httplib::Response& res) {
      authorised(req, res, "/v1/evaluate/batch", [&](const std::string& token) { evaluate_batch(req, res, token); });
    });
    server.Get(R"(/v1/tasks/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      authorised(req, res, "/v1/tasks/{id}", [&](const std::string&) {
        const json t = service_.task(req.matches[1]);
        if (t.is_null()) return send_error(res, 404, "task_id", "no task \"" + std::string(req.matches[1]) + "\"");
        send_json(res, 200, t);
      });
    });
    server.Delete(R"(/v1/tasks/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      authorised(req, res, "DELETE /v1/tasks/{id}", [&](const std::string&) {
        const json t = service_.cancel(req.matches[1]);
        if (t.is_null()) return send_error(res, 404, "task_id", "no task \"" + std::string(req.matches[1]) + "\"");
        send_json(res, 200, t);
      });
    });
    server.Get("/v1/workers", [this](const httplib::Request& req, httplib::Response& res) {
      authorised(req, res, "/v1/workers", [&](const std::string&) { send_json(res, 200, service_.workers()); });
    });
    // httplib's own refusals (413 over the body limit, 404 for an unknown path, 400 for a
    // malformed request line) in the same JSON shape.
    server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string message = res.status == 413   ? "the body is larger than the service accepts"
                            : res.status == 404 ? "no such path: " + req.path
                                                : "the request was refused";
      send_error(res, res.status, res.status == 413 ? "body" : "path", message);
    });
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) { what = std::string("internal error: ") + e.what(); } catch (...) {
      }
      send_error(res, 500, "", what);
    });
  }

 private:
  template <typename F>
  void timed(httplib::Response& res, const std::string& route, F f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    service_.metrics().request(route, res.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  template <typename F>
  void authorised(const httplib::Request& req, httplib::Response& res, const std::string& route, F f) {
    timed(res, route, [&] {
      const std::string token = tokens_.check(req.get_header_value("Authorization"));
      if (token.empty()) {
        res.set_header("WWW-Authenticate", "Bearer");
        return send_error(res, 401, "Authorization", "a bearer token from the service's token file is required");
      }
      try {
        f(token);
      } catch (const RequestError& e) { send_error(res, e.status, e.field, e.what()); }
    });
  }

  void answer_admission(httplib::Response& res, const Admission& a) {
    if (a.status == 202 || a.status == 200) return send_json(res, a.status, {{"task_id", a.task_id}, {"status", a.task_status}});
    send_error(res, a.status, a.status == 409 ? "task_id" : "", a.message, a.retry_after_s);
  }

  void evaluate(const httplib::Request& req, httplib::Response& res, const std::string& token) {
    const json body = parse_body(req.body, service_.limits());
    TaskRequest t = parse_request(body, service_.limits());
    service_.evaluator().check(t);
    answer_admission(res, service_.submit(std::move(t), token));
  }

  void evaluate_batch(const httplib::Request& req, httplib::Response& res, const std::string& token) {
    const json body = parse_body(req.body, service_.limits());
    if (!body.contains("tasks") || !body["tasks"].is_array()) throw RequestError(400, "tasks", "must be an array of task objects");
    if (body["tasks"].size() > 1024) throw RequestError(413, "tasks", "holds more than 1024 tasks");
    json out = json::array();
    int accepted = 0;
    for (size_t i = 0; i < body["tasks"].size(); ++i) {
      const std::string where = "tasks[" + std::to_string(i) + "].";
      try {
        TaskRequest t = parse_request(body["tasks"][i], service_.limits(), where);
        try {
          service_.evaluator().check(t);
        } catch (const RequestError& e) { throw RequestError(e.status, where + e.field, e.what()); }
        const Admission a = service_.submit(std::move(t), token);
        if (a.status == 202 || a.status == 200) {
          out.push_back({{"task_id", a.task_id}, {"status", a.task_status}});
          ++accepted;
        } else {
          json e = {{"error", {{"field", a.status == 409 ? where + "task_id" : where}, {"message", a.message}, {"status", a.status}}}};
          if (a.retry_after_s) e["retry_after"] = a.retry_after_s;
          out.push_back(e);
        }
      } catch (const RequestError& e) { out.push_back({{"error", {{"field", e.field}, {"message", e.what()}, {"status", e.status}}}}); }
    }
    send_json(res, accepted > 0 || out.empty() ? 202 : 400, {{"tasks", out}});
  }

  Service& service_;
  const Tokens& tokens_;
};

}  // namespace

int serve(const ServeOptions& given) {
  ServeOptions options = given;
  // SIGTERM and SIGINT wait in a thread of their own: blocked before any thread starts (the
  // runner pool's among them), so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::unique_ptr<Service> service;
  Tokens tokens;
  try {
    if (options.token_file.empty()) throw std::runtime_error("--token-file is required (bearer tokens, one a line)");
    if (options.state_dir.empty()) throw std::runtime_error("--state is required (the task database and task folders)");
    tokens = Tokens::from_file(options.token_file);
    std::filesystem::create_directories(options.state_dir);
    options.state_dir = std::filesystem::canonical(options.state_dir).string();  // runners bind folders under it by absolute path
    service = std::make_unique<Service>(options, make_evaluator(options));
  } catch (const std::exception& e) {
    std::cerr << "kernelgate serve: " << e.what() << "\n";
    return 2;
  }

  httplib::Server server;
  server.new_task_queue = [&options] { return new httplib::ThreadPool(static_cast<size_t>(std::max(4, options.http_threads))); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_keep_alive_max_count(100);
  server.set_keep_alive_timeout(2);
  server.set_read_timeout(10);
  server.set_write_timeout(10);
  Api api(*service, tokens);
  api.install(server);
  if (!server.bind_to_port(options.host.c_str(), options.port)) {
    std::cerr << "kernelgate serve: cannot listen on " << options.host << ":" << options.port
              << " (in use, or not an address of this host)\n";
    return 2;
  }
  if (!raise_listen_backlog(options.port, 1024))
    std::cerr << "kernelgate serve: warning: could not raise the listen backlog of port " << options.port
              << " (connections beyond 5 at once may be reset)\n";
  service->start();
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::cerr << "kernelgate serve: signal " << sig << ": draining (no new tasks; running ones get " << options.drain_s << " s)\n";
    service->drain();
    server.stop();
  });
  std::cerr << "kernelgate serve: listening on http://" << options.host << ":" << options.port << " (" << tokens.size()
            << " token(s), state " << options.state_dir << ")\n";
  const bool ok = server.listen_after_bind();
  if (signals.joinable()) {
    if (ok) signals.join();
    else signals.detach();
  }
  std::cerr << "kernelgate serve: stopped\n";
  return ok ? 0 : 2;
}

}  // namespace kg::serve

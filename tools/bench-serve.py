#!/usr/bin/env python3
"""Benchmark of `kernelgate serve` (docs/serve.md, "Benchmark"): load on 127.0.0.1 only, bounded in
count and time. Starts its own service on a free loopback port with a fresh state folder and
prints, per client concurrency (1, 16, 64 by default):

- evaluations/min: tasks submitted, all decided, over the wall time;
- task latency p50/p99: from the submit to the moment the poll saw it decided;
- HTTP latency p50/p99 of the submits and polls themselves (the service's answer, not the evaluation);
- service overhead per task: (finished - created) - queue wait - the evaluation's own wall time
  (the sum of the ops' eval_seconds), i.e. what the service adds around the engine: files written,
  database commits, JSON;

then an overload run: a burst of submissions past --queue-limit, counting 202s, 429s (each must
carry Retry-After), errors (anything else: must be 0) and lost tasks (accepted, never decided:
must be 0).

Every task is the same correct relu (the bundled example of --kind, by default the device's)
under a fresh task id: after the first, its build comes from the cache, so the figures are the
cached-build case; with --cold each task's source has a comment of its own, so each builds.

usage: bench-serve.py --kernelgate BUILD/bin/kernelgate [--device cpu|cuda] [--kind cpu|cuda|nvrtc] [--cold]
                      [--tasks N] [--concurrency 1,16,64] [--workers N] [--timing] [--policy NAME]
"""
import argparse
import concurrent.futures
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TOKEN = "bench-token-0123456789abcdef"
HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = {
    "cpu": ("examples/correct/relu__default/relu__default_implementation.cpp", "cpu"),
    "cuda": ("examples/cuda/correct/relu__default/relu__default_implementation.cu", "cuda"),
}
NVRTC = "examples/nvrtc/correct/relu__default"


def task_maker(kind, device, timing, cold):
    """The request of task i: the bundled relu of `kind`, the same source each time (its build
    cached after the first) or, cold, with a comment of its own (a build per task)."""
    tag = (lambda i: f"// task {i} {time.time_ns()}\n") if cold else (lambda i: "")
    if kind == "nvrtc":
        folder = os.path.join(HERE, "..", NVRTC)
        files = {f"relu__default/{name}": open(os.path.join(folder, name)).read() for name in sorted(os.listdir(folder))}
        src = "relu__default/relu__default_implementation.cu"

        def make(i):
            return {"files": dict(files, **{src: tag(i) + files[src]}), "timing": timing}
        return make
    path, kernel_kind = KERNELS[kind or device]
    source = open(os.path.join(HERE, "..", path)).read()
    return lambda i: {"source": tag(i) + source, "op": "relu.default", "kind": kernel_kind, "timing": timing}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


class Service:
    def __init__(self, kg, args, device, workers, queue_limit, policy):
        self.dir = tempfile.mkdtemp(prefix="kg-bench-serve-")
        self.port = free_port()
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            f.write(TOKEN + "\n")
        cmd = [kg, "serve", "--listen", f"127.0.0.1:{self.port}", "--token-file", tokens, "--state", os.path.join(self.dir, "state"),
               "--device", device, "--workers", str(workers), "--jobs", str(workers), "--queue-limit", str(queue_limit),
               "--token-tasks", str(queue_limit + workers), "--policy", policy] + args
        self.log = open(os.path.join(self.dir, "serve.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.call("GET", "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the service did not start")

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method, data=data,
                                     headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read()
                return r.status, json.loads(text), time.perf_counter() - t0, dict(r.headers)
        except urllib.error.HTTPError as e:
            text = e.read()
            return e.code, json.loads(text) if text.startswith(b"{") else {}, time.perf_counter() - t0, dict(e.headers)

    def log_tail(self, n=60):
        """The service's own output, for a failed run: its exit status when it died, and the log's end."""
        self.log.flush()
        state = "running" if self.proc.poll() is None else f"exited with status {self.proc.returncode}"
        with open(os.path.join(self.dir, "serve.log"), errors="replace") as f:
            lines = f.readlines()[-n:]
        return f"kernelgate serve {state}; last {len(lines)} lines of {self.dir}/serve.log:\n" + "".join(lines)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=300)
        self.log.close()


def one_task(svc, request, http_times, deadline):
    t0 = time.time()
    status, body, dt, _ = svc.call("POST", "/v1/evaluate", request)
    http_times.append(dt)
    if status != 202:
        raise RuntimeError(f"submit answered {status}: {body}")
    tid = body["task_id"]
    while time.time() < deadline:
        status, task, dt, _ = svc.call("GET", f"/v1/tasks/{tid}")
        http_times.append(dt)
        if task.get("status") in ("completed", "failed", "cancelled"):
            return time.time() - t0, task
        time.sleep(0.02)
    raise RuntimeError(f"task {tid} not decided in time")


def run_level(svc, make_request, n, concurrency, budget_s):
    http_times, latencies, overheads, verdicts = [], [], [], {}
    deadline = time.time() + budget_s
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = [pool.submit(one_task, svc, make_request(i), http_times, deadline) for i in range(n)]
        for f in concurrent.futures.as_completed(futures):
            latency, task = f.result()
            latencies.append(latency)
            reward = task.get("result", {}).get("reward", {})
            verdicts[reward.get("verdict", task["status"])] = verdicts.get(reward.get("verdict", task["status"]), 0) + 1
            ops = task.get("result", {}).get("ops", [])
            evaluation = sum(op.get("eval_seconds", 0) for op in ops)
            overheads.append((task["finished"] - task["started"]) - evaluation)
    wall = time.time() - t0
    return {"concurrency": concurrency, "tasks": n, "wall_s": wall, "evals_per_min": 60 * n / wall, "task_p50_s": pct(latencies, 0.5),
            "task_p99_s": pct(latencies, 0.99), "http_p50_ms": 1e3 * pct(http_times, 0.5), "http_p99_ms": 1e3 * pct(http_times, 0.99),
            "requests_per_s": len(http_times) / wall, "overhead_p50_ms": 1e3 * pct(overheads, 0.5),
            "overhead_p99_ms": 1e3 * pct(overheads, 0.99), "verdicts": verdicts}


def overload(svc, make_request, burst, queue_limit, budget_s):
    accepted, refused, errors = [], 0, 0
    retry_after_missing = 0

    def submit(i):
        return svc.call("POST", "/v1/evaluate", make_request(i))

    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        for status, body, _, headers in pool.map(submit, range(burst)):
            if status == 202:
                accepted.append(body["task_id"])
            elif status == 429:
                refused += 1
                retry_after_missing += "Retry-After" not in headers
            else:
                errors += 1
    deadline = time.time() + budget_s
    lost = 0
    for tid in accepted:
        while True:
            status, task, _, _ = svc.call("GET", f"/v1/tasks/{tid}")
            if status == 200 and task["status"] in ("completed", "failed", "cancelled"):
                break
            if time.time() > deadline:
                lost += 1
                break
            time.sleep(0.05)
    return {"burst": burst, "queue_limit": queue_limit, "accepted": len(accepted), "429": refused, "429_without_retry_after": retry_after_missing,
            "errors": errors, "lost": lost}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernelgate", required=True)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--tasks", type=int, default=64, help="tasks per concurrency level")
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--queue-limit", type=int, default=32)
    ap.add_argument("--overload-queue-limit", type=int, default=16,
                    help="queue limit of the overload run (one worker; every accepted task is run, so keep it small)")
    ap.add_argument("--timing", action="store_true", help="time each task (else correctness only)")
    ap.add_argument("--policy", default="rl-reward")
    ap.add_argument("--budget-s", type=float, default=900, help="per level")
    ap.add_argument("--kind", choices=["cpu", "cuda", "nvrtc"], default=None, help="the relu example's kind (default: the device's)")
    ap.add_argument("--cold", action="store_true", help="every task a source of its own, so every task builds (else cached builds)")
    a = ap.parse_args()
    if a.kind == "cpu" and a.device == "cuda" or a.kind in ("cuda", "nvrtc") and a.device == "cpu":
        ap.error(f"--kind {a.kind} does not run on --device {a.device}")
    make_request = task_maker(a.kind, a.device, a.timing, a.cold)
    svc = Service(a.kernelgate, [], a.device, a.workers, max(a.queue_limit, a.tasks), a.policy)
    try:
        # The first task starts what a service keeps (eager runner, pool); the toolchain's set-up
        # and, unless --cold, the one build every task reuses.
        one_task(svc, make_request(-1), [], time.time() + 600)
        print(f"kernelgate serve benchmark: device {a.device}, kind {a.kind or a.device}, workers {a.workers}, policy {a.policy}, "
              f"timing {'on' if a.timing else 'off'}, {a.tasks} {'cold-build' if a.cold else 'cached-build'} tasks per level, "
              f"{os.cpu_count()} cores")
        print(f"{'conc':>5} {'evals/min':>10} {'req/s':>8} {'task p50 s':>11} {'task p99 s':>11} {'http p50 ms':>12} {'http p99 ms':>12} "
              f"{'overhead p50 ms':>16} {'p99 ms':>8}  verdicts")
        for c in [int(x) for x in a.concurrency.split(",")]:
            r = run_level(svc, make_request, a.tasks, c, a.budget_s)
            print(f"{c:>5} {r['evals_per_min']:>10.1f} {r['requests_per_s']:>8.1f} {r['task_p50_s']:>11.3f} {r['task_p99_s']:>11.3f} "
                  f"{r['http_p50_ms']:>12.2f} {r['http_p99_ms']:>12.2f} {r['overhead_p50_ms']:>16.2f} {r['overhead_p99_ms']:>8.2f}  {r['verdicts']}")
            sys.stdout.flush()
    except Exception:
        print(svc.log_tail(), file=sys.stderr)
        raise
    finally:
        svc.stop()
    svc = Service(a.kernelgate, [], a.device, 1, a.overload_queue_limit, a.policy)
    try:
        no_timing = task_maker(a.kind, a.device, False, False)
        o = overload(svc, no_timing, 4 * a.overload_queue_limit, a.overload_queue_limit, a.budget_s)
        print(f"overload: {o['burst']} submissions at once, queue limit {o['queue_limit']}: {o['accepted']} accepted, {o['429']} answered 429 "
              f"({o['429_without_retry_after']} without Retry-After), {o['errors']} errors, {o['lost']} accepted tasks lost")
    except Exception:
        print(svc.log_tail(), file=sys.stderr)
        raise
    finally:
        svc.stop()
    return 0 if o["errors"] == 0 and o["lost"] == 0 and o["429_without_retry_after"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

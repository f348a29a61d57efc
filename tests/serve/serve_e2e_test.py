#!/usr/bin/env python3
"""kernelgate serve end to end, through real HTTP on loopback: each test class starts its own
`kernelgate serve` (a fresh token file and state folder) and talks to it with urllib.

usage: serve_e2e_test.py KERNELGATE_BINARY REPO_ROOT [unittest args]
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

KG = sys.argv[1] if len(sys.argv) > 1 else "build/bin/kernelgate"
ROOT = sys.argv[2] if len(sys.argv) > 2 else "."
TOKEN = "e2e-token-0123456789abcdef"
OTHER_TOKEN = "e2e-other-token-0123456789"

GOOD = open(os.path.join(ROOT, "examples/correct/relu__default/relu__default_implementation.cpp")).read()
# An honest bug (values in (0, 1] zeroed): a wrong answer, no rule. A kernel returning zeros
# whatever its input is caught computing nothing (trivial_output) and pays the rule penalty.
WRONG = GOOD.replace("o[i] = (v > scalar_t(0) || v != v) ? v : scalar_t(0);", "o[i] = (v > scalar_t(1) || v != v) ? v : scalar_t(0);")
TRIVIAL = GOOD.replace("o[i] = (v > scalar_t(0) || v != v) ? v : scalar_t(0);", "o[i] = scalar_t(0);")
SOFTMAX = open(os.path.join(ROOT, "examples/correct/_softmax__default/_softmax__default_implementation.cpp")).read()
SOFTMAX_HANG = SOFTMAX.replace("bool half_to_float) {", "bool half_to_float) {\n  volatile int spin = 0;\n  while (spin == 0) {\n  }", 1)
HANG = GOOD.replace("at::Tensor out = at::empty", "volatile int spin = 0;\n  while (spin == 0) {\n  }\n  at::Tensor out = at::empty")
CRASH = GOOD.replace("at::Tensor out = at::empty", "*reinterpret_cast<volatile int*>(8) = 1;\n  at::Tensor out = at::empty")
assert WRONG != GOOD and TRIVIAL != GOOD and HANG != GOOD and CRASH != GOOD and SOFTMAX_HANG != SOFTMAX
DECIDED = ("completed", "failed", "cancelled")
# A KernelBench pair (docs/kernelbench.md): ReLU, an honest numpy solution and one that calls torch.
KB_PROBLEM = open(os.path.join(ROOT, "tests/kernelbench-problems/19_ReLU.py")).read()
KB_SOLUTION = open(os.path.join(ROOT, "tests/legit-kernelbench/relu_numpy/solution.py")).read()
KB_FALLBACK = open(os.path.join(ROOT, "tests/exploits-kernelbench/fallback_functional_relu/solution.py")).read()
PYTHON_KIND = os.path.exists(os.path.join(os.path.dirname(KG), "libkg_runner_python.so"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `kernelgate serve` process; `start` again on the same state folder after a kill."""

    def __init__(self, *args, state=None):
        self.dir = tempfile.mkdtemp(prefix="kg-serve-e2e-")
        self.state = state or os.path.join(self.dir, "state")
        self.tokens = os.path.join(self.dir, "tokens")
        with open(self.tokens, "w") as f:
            f.write(f"# e2e tokens\n{TOKEN}\n{OTHER_TOKEN}\n")
        self.args = list(args)
        self.proc = None
        self.log = os.path.join(self.dir, "serve.log")

    def start(self):
        self.port = free_port()
        cmd = [KG, "serve", "--listen", f"127.0.0.1:{self.port}", "--token-file", self.tokens, "--state", self.state, "--device", "cpu"]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(cmd + self.args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kernelgate serve exited {self.proc.returncode}: {self.text()}")
            try:
                if self.call("GET", "/health", token=None)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("kernelgate serve did not answer /health within 60 s")

    def text(self):
        with open(self.log) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=120):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=timeout)
        return self.proc.returncode if self.proc else None

    def raw(self, method, path, body=b"", headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict(r.getheaders()), data

    def call(self, method, path, body=None, token=TOKEN, raw_body=None):
        data = raw_body if raw_body is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                text = r.read().decode()
                return r.status, (json.loads(text) if text.startswith(("{", "[")) else text), dict(r.headers)
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            return e.code, (json.loads(text) if text.startswith("{") else text), dict(e.headers)

    def submit(self, **request):
        status, body, _ = self.call("POST", "/v1/evaluate", request)
        if status not in (200, 202):
            raise AssertionError(f"submit answered {status}: {body}")
        return body["task_id"]

    def wait(self, task_id, timeout=180, statuses=DECIDED):
        deadline = time.time() + timeout
        while time.time() < deadline:
            status, body, _ = self.call("GET", f"/v1/tasks/{task_id}")
            assert status == 200, (status, body)
            if body["status"] in statuses:
                return body
            time.sleep(0.1)
        raise AssertionError(f"task {task_id} not in {statuses} after {timeout} s: {body}")


def relu(source, **extra):
    return dict(source=source, op="relu.default", **extra)


class WithServer(unittest.TestCase):
    """One service for the whole class, started with SERVER_ARGS; it must stop cleanly (exit 0)."""

    SERVER_ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.s = Server(*cls.SERVER_ARGS).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.s.stop() == 0, cls.s.text()


class Admission(WithServer):
    """Tokens, hostile bodies and paths: every refusal is a JSON error naming the field."""

    SERVER_ARGS = ("--max-body-bytes", "262144", "--max-file-bytes", "65536", "--max-files", "4")

    def refused(self, status, field, body=None, raw_body=None, token=TOKEN, path="/v1/evaluate"):
        got, answer, headers = self.s.call("POST", path, body, token=token, raw_body=raw_body)
        self.assertEqual(got, status, answer)
        self.assertIsInstance(answer, dict, answer)
        self.assertEqual(answer["error"]["field"], field, answer)
        self.assertTrue(answer["error"]["message"], answer)
        return answer

    def test_health_and_metrics_need_no_token(self):
        status, body, _ = self.s.call("GET", "/health", token=None)
        self.assertEqual((status, body["status"]), (200, "ok"))
        status, text, _ = self.s.call("GET", "/metrics", token=None)
        self.assertEqual(status, 200)
        self.assertIn("kernelgate_queue_depth", text)
        self.assertIn("kernelgate_http_requests_total", text)

    def test_many_connections_at_once_are_all_answered(self):
        # The listening socket's backlog is raised past cpp-httplib's 5 (ss shows it as Send-Q);
        # then 200 connections opened at once, before any is read, all get their answer.
        ss = subprocess.run(["ss", "-Hltn", f"sport = :{self.s.port}"], capture_output=True, text=True)
        self.assertEqual(ss.returncode, 0, ss.stderr)
        self.assertGreaterEqual(int(ss.stdout.split()[2]), 128, ss.stdout)  # LISTEN, Recv-Q, Send-Q (the backlog)
        conns = [http.client.HTTPConnection("127.0.0.1", self.s.port, timeout=60) for _ in range(200)]
        for c in conns:
            c.connect()
        for c in conns:
            c.request("GET", "/health")
        for c in conns:
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            r.read()
            c.close()

    def test_no_token_or_a_wrong_one_is_401(self):
        self.refused(401, "Authorization", relu(GOOD), token=None)
        self.refused(401, "Authorization", relu(GOOD), token="wrong-token-0123456789abcdef")
        status, body, headers = self.s.call("GET", "/v1/workers", token=None)
        self.assertEqual(status, 401)
        self.assertEqual(headers.get("WWW-Authenticate"), "Bearer")
        self.assertNotIn(TOKEN, self.s.text())  # tokens are never logged

    def test_malformed_json_binary_and_deep_nesting_are_400(self):
        self.refused(400, "body", raw_body=b'{"source": "x", ')
        self.refused(400, "body", raw_body=bytes(range(256)) * 8)
        self.refused(400, "body", raw_body=b"[" * 100000 + b"]" * 100000)
        self.refused(400, "body", raw_body=b'"just a string"')
        self.refused(400, "body", raw_body=b"")

    def test_fields_are_checked_and_named(self):
        self.refused(400, "colour", dict(relu(GOOD), colour="red"))
        self.refused(400, "op", dict(source=GOOD))
        self.refused(400, "op", dict(relu(GOOD), op="relu; rm -rf /"))
        self.refused(400, "kind", relu(GOOD, kind="fortran"))
        self.refused(400, "task_id", relu(GOOD, task_id="../escape"))
        self.refused(400, "timing", relu(GOOD, timing="yes"))
        self.refused(400, "priority", relu(GOOD, priority=1000))
        self.refused(400, "policy", relu(GOOD, policy="/etc/passwd"))
        self.refused(400, "policy", relu(GOOD, policy="no-such-profile"))
        self.refused(400, "suite", relu(GOOD, suite="no-such-suite"))
        self.refused(400, "source", dict(files={"a/b.cpp": "x"}, source=GOOD))
        self.refused(400, "files", {})
        self.refused(400, "solution", dict(problem=KB_PROBLEM))
        self.refused(400, "problem", dict(problem=5, solution=KB_SOLUTION))
        self.refused(400, "files", dict(problem=KB_PROBLEM, solution=KB_SOLUTION, files={"a/b.cpp": "x"}))
        self.refused(400, "ops", dict(problem=KB_PROBLEM, solution=KB_SOLUTION, ops=["relu.default"]))
        self.refused(400, "name", dict(problem=KB_PROBLEM, solution=KB_SOLUTION, name="../19_ReLU"))
        self.refused(400, "name", relu(GOOD, name="x"))

    def test_paths_cannot_leave_the_submission_folder(self):
        for path in ["../x.cpp", "/etc/passwd", "relu__default/../../x", ".hidden/x", "a//b", "a/./b", "a\\b", "a/b/c/d/e/f"]:
            with self.subTest(path=path):
                self.refused(400, f'files[{json.dumps(path)}]', dict(files={path: "int x;"}))
        self.refused(400, 'files["a.cpp"]', dict(files={"a.cpp": 5}))
        self.refused(400, 'files["a.cpp"]', dict(files={"a.cpp": "a\u0000b"}))

    def test_sizes_are_413(self):
        self.refused(413, "body", raw_body=json.dumps(relu(GOOD + "//" + "x" * 300000)).encode())
        self.refused(413, 'files["relu__default/x.cpp"]', dict(files={"relu__default/x.cpp": "y" * 70000}))
        self.refused(413, "files", dict(files={f"f{i}.cpp": "" for i in range(5)}))

    def test_unknown_task_and_path_are_404(self):
        status, body, _ = self.s.call("GET", "/v1/tasks/nothing-here")
        self.assertEqual((status, body["error"]["field"]), (404, "task_id"))
        status, body, _ = self.s.call("GET", "/v1/nowhere")
        self.assertEqual(status, 404)


class Results(WithServer):
    """Results, rewards, idempotency, batches, crashes and hangs, cancel, 429."""

    SERVER_ARGS = ("--workers", "1", "--queue-limit", "3", "--token-tasks", "3")

    def test_a_correct_kernel_is_rewarded_and_a_wrong_one_is_not(self):
        good = self.s.wait(self.s.submit(**relu(GOOD)))
        wrong = self.s.wait(self.s.submit(**relu(WRONG)))
        self.assertEqual(good["status"], "completed", good)
        r = good["result"]["reward"]
        self.assertEqual((r["compiled"], r["correct"], r["verdict"], r["rules"]), (1, 1, "pass", []), r)
        self.assertGreater(r["speedup"], 0)
        self.assertAlmostEqual(r["score"], 0.3 + min(r["speedup"], 10.0), places=9)
        self.assertEqual(good["result"]["ops"][0]["op"], "relu.default")
        self.assertEqual(good["result"]["ops"][0]["verdict"], "pass")
        self.assertEqual(wrong["status"], "completed", wrong)
        w = wrong["result"]["reward"]
        self.assertEqual((w["compiled"], w["correct"], w["verdict"], w["score"]), (1, 0, "fail", 0.0), w)
        self.assertEqual(wrong["result"]["ops"][0]["failures"][0]["category"], "value_mismatch")
        self.assertIn("relu.default", wrong["result"]["feedback"])
        trivial = self.s.wait(self.s.submit(**relu(TRIVIAL, timing=False)))
        t = trivial["result"]["reward"]
        self.assertEqual((t["verdict"], t["rules"], t["rule_penalty_applied"], t["score"]), ("rejected", ["trivial_output"], True, -1.0), t)
    def test_a_kernelbench_pair_is_judged_and_rewarded(self):
        if not PYTHON_KIND:
            self.skipTest("kernelgate was built without its python plugin")
        good = self.s.wait(self.s.submit(problem=KB_PROBLEM, solution=KB_SOLUTION, name="19_ReLU", timing=False))
        self.assertEqual(good["status"], "completed", good)
        op = good["result"]["ops"][0]
        self.assertEqual((op["op"], op["kind"], op["suite"], op["verdict"]), ("19_ReLU", "python", "kernelbench", "pass"), op)
        r = good["result"]["reward"]
        self.assertEqual((r["compiled"], r["correct"], r["verdict"]), (1, 1, "pass"), r)
        cheat = self.s.wait(self.s.submit(problem=KB_PROBLEM, solution=KB_FALLBACK, timing=False))
        c = cheat["result"]["reward"]
        self.assertEqual((c["verdict"], c["rules"], c["rule_penalty_applied"]), ("rejected", ["fallback_to_torch"], True), c)
        self.assertEqual(cheat["result"]["ops"][0]["op"], "problem")

    def test_a_task_id_is_idempotent(self):
        status, body, _ = self.s.call("POST", "/v1/evaluate", relu(GOOD, task_id="same-id", timing=False))
        self.assertEqual((status, body["task_id"]), (202, "same-id"))
        status, body, _ = self.s.call("POST", "/v1/evaluate", relu(GOOD, task_id="same-id", timing=False, priority=5))
        self.assertEqual(status, 200, body)  # the priority is not the content
        status, body, _ = self.s.call("POST", "/v1/evaluate", relu(WRONG, task_id="same-id", timing=False))
        self.assertEqual((status, body["error"]["field"]), (409, "task_id"))
        done = self.s.wait("same-id")
        self.assertEqual(done["result"]["reward"]["correct"], 1)
        self.assertIsNone(done["result"]["reward"]["speedup"])  # timing off: correctness only
        self.assertAlmostEqual(done["result"]["reward"]["score"], 0.3)

    def test_a_batch_answers_each_task(self):
        status, body, _ = self.s.call("POST", "/v1/evaluate/batch", {"tasks": [relu(GOOD, timing=False), {"files": {"../x": ""}}]})
        self.assertEqual(status, 202, body)
        self.assertEqual(body["tasks"][0]["status"], "queued")
        self.assertEqual(body["tasks"][1]["error"]["field"], 'tasks[1].files["../x"]')
        self.assertEqual(self.s.wait(body["tasks"][0]["task_id"])["status"], "completed")

    def test_a_crash_and_a_hang_cost_their_task_only(self):
        crash = self.s.wait(self.s.submit(**relu(CRASH, timing=False)))
        self.assertEqual(crash["status"], "completed", crash)
        self.assertEqual(crash["result"]["reward"]["correct"], 0)
        self.assertEqual(crash["result"]["ops"][0]["failures"][0]["category"], "crash", crash["result"]["ops"][0])
        hang_id = self.s.submit(**relu(HANG, timing=False))
        self.s.wait(hang_id, statuses=("running",))
        # While the one worker is stuck: the service answers, a second queued task can be
        # cancelled, the queue limit and the per-token quota answer 429 with Retry-After.
        self.assertEqual(self.s.call("GET", "/health", token=None)[0], 200)
        queued = self.s.submit(**relu(GOOD, timing=False))
        status, cancelled, _ = self.s.call("DELETE", f"/v1/tasks/{queued}")
        self.assertEqual((status, cancelled["status"]), (200, "cancelled"), cancelled)
        self.s.submit(**relu(GOOD, timing=False, task_id="q1"))
        self.s.submit(**relu(GOOD, timing=False, task_id="q2"))
        status, body, headers = self.s.call("POST", "/v1/evaluate", relu(GOOD, timing=False, task_id="q3"))
        self.assertEqual(status, 429, body)  # this token: the hang, q1 and q2 (quota 3)
        self.assertGreater(int(headers["Retry-After"]), 0)
        status, body, headers = self.s.call("POST", "/v1/evaluate", relu(GOOD, timing=False, task_id="o1"), token=OTHER_TOKEN)
        self.assertEqual(status, 202, body)
        status, body, headers = self.s.call("POST", "/v1/evaluate", relu(GOOD, timing=False, task_id="o2"), token=OTHER_TOKEN)
        self.assertEqual(status, 429, body)  # the queue: q1, q2, o1 (limit 3)
        self.assertIn("queue", body["error"]["message"])
        hang = self.s.wait(hang_id)
        self.assertEqual(hang["result"]["ops"][0]["failures"][0]["category"], "timeout", hang["result"]["ops"][0])
        for task in ("q1", "q2", "o1"):
            self.assertEqual(self.s.wait(task)["status"], "completed")
        self.assertEqual(self.s.wait(queued)["status"], "cancelled")
        status, text, _ = self.s.call("GET", "/metrics", token=None)
        self.assertIn('kernelgate_admission_refused_total{reason="queue_full"} 1', text)
        self.assertIn('kernelgate_admission_refused_total{reason="token_quota"} 1', text)
        self.assertIn('kernelgate_tasks_total{status="cancelled"} 1', text)

    def test_running_task_cancelled_inside_its_op(self):
        # The cancel comes while the op's first call hangs: once that call reaches the policy's
        # limit the op stops before its next sample, instead of running a second hanging call
        # and the rest of the op, and what it judged is not reported as its verdict.
        hang_id = self.s.submit(**relu(HANG, timing=False))
        self.s.wait(hang_id, statuses=("running",))
        time.sleep(1)  # the first call is under way
        status, body, _ = self.s.call("DELETE", f"/v1/tasks/{hang_id}")
        self.assertEqual(status, 200, body)
        done = self.s.wait(hang_id)
        self.assertEqual(done["status"], "cancelled", done)
        op = done["result"]["ops"][0]
        self.assertEqual(op["verdict"], "error", op)
        self.assertIn("not judged: cancelled by the client (stopped inside the op)", op["error"])
        self.assertFalse(op.get("failures"), op)

    def test_workers_report_the_device(self):
        status, body, _ = self.s.call("GET", "/v1/workers")
        self.assertEqual(status, 200)
        self.assertEqual(body["devices"][0]["device"], "cpu")
        for key in ("busy", "queued", "pool_size", "workers"):
            self.assertIn(key, body["devices"][0])


class Restart(unittest.TestCase):
    """kill -9 with tasks queued and running: nothing accepted is lost, nothing decided runs again."""

    def test_kill_9_then_restart(self):
        s = Server("--workers", "1").start()
        first = s.wait(s.submit(**relu(GOOD, timing=False, task_id="first")))
        self.assertEqual(first["status"], "completed")
        s.submit(**relu(HANG, timing=False, task_id="running"))
        s.submit(**relu(GOOD, timing=False, task_id="queued-1"))
        s.submit(**relu(WRONG, timing=False, task_id="queued-2"))
        s.wait("running", statuses=("running",))
        s.stop(signal.SIGKILL)
        s.start()
        again = s.wait("first")
        self.assertEqual(again, first)  # decided: not run again, same result, same times
        self.assertEqual(s.wait("running")["result"]["ops"][0]["failures"][0]["category"], "timeout")
        self.assertEqual(s.wait("queued-1")["result"]["reward"]["correct"], 1)
        self.assertEqual(s.wait("queued-2")["result"]["reward"]["correct"], 0)
        self.assertIn("queued again", s.text())
        self.assertEqual(s.stop(), 0)

    def test_sigterm_drains_and_requeues_what_did_not_finish(self):
        s = Server("--workers", "1", "--drain-s", "1").start()
        # Two ops: the first never returns (its call runs to the policy's limit), the drain's
        # deadline passes meanwhile, so the second is not started and the task goes back to the
        # queue; "after" never started. Both run after the restart.
        files = {"_softmax__default/_softmax__default_implementation.cpp": SOFTMAX_HANG,
                 "relu__default/relu__default_implementation.cpp": GOOD}
        s.submit(files=files, timing=False, task_id="two-ops")
        s.submit(**relu(GOOD, timing=False, task_id="after"))
        s.wait("two-ops", statuses=("running",))
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        status, body, headers = s.call("POST", "/v1/evaluate", relu(GOOD, timing=False))
        self.assertEqual(status, 503, body)
        self.assertIn("Retry-After", headers)
        self.assertEqual(s.call("GET", "/health", token=None)[1]["status"], "draining")
        self.assertEqual(s.proc.wait(timeout=120), 0)
        self.assertIn("draining", s.text())
        s.start()
        done = s.wait("two-ops")
        self.assertEqual(done["status"], "completed", done)
        verdicts = {op["op"]: op["verdict"] for op in done["result"]["ops"]}
        self.assertEqual(verdicts, {"_softmax.default": "fail", "relu.default": "pass"})
        self.assertEqual(s.wait("after")["status"], "completed")
        self.assertEqual(s.stop(), 0)


class PythonClient(unittest.TestCase):
    """clients/python's live tests (client, verl, TRL and OpenRLHF adapters) against a live server."""

    def test_clients_python_against_a_live_server(self):
        s = Server("--workers", "2").start()
        try:
            env = dict(os.environ, KERNELGATE_URL=f"http://127.0.0.1:{s.port}", KERNELGATE_TOKEN=TOKEN)
            p = subprocess.run([sys.executable, "test_client.py", "-v"], cwd=os.path.join(ROOT, "clients/python"), env=env,
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertNotIn("skipped", p.stderr.lower())
        finally:
            self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)

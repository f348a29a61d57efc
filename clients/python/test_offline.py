"""Offline tests: no kernelgate needed (a fake client and a fake HTTP service).

    python3 test_offline.py -v
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
import unittest
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernelgate_adapters as adapters  # noqa: E402
import kernelgate_client as kg  # noqa: E402

CODE = "#include <ATen/ATen.h>\nat::Tensor relu__default_kernel_impl(const at::Tensor& self);\n"


class ExtractCodeTest(unittest.TestCase):
    def test_plain_text_is_returned_as_is(self) -> None:
        self.assertEqual(kg.extract_code("int x;"), "int x;")
        self.assertEqual(kg.extract_code(""), "")
        self.assertEqual(kg.extract_code(None), "")

    def test_fenced_block_round_trips(self) -> None:
        for tag in ("cpp", "cuda", "c++", "", "CPP"):
            text = f"Sure.\n```{tag}\n{CODE}```\nThat is all."
            self.assertEqual(kg.extract_code(text), CODE, tag)

    def test_last_code_block_wins(self) -> None:
        text = f"```cpp\nfirst();\n```\nthen\n```cuda\n{CODE}```\n"
        self.assertEqual(kg.extract_code(text), CODE)

    def test_cpp_block_beats_a_later_block_of_another_language(self) -> None:
        text = f"```cpp\n{CODE}```\nTest it with:\n```python\nprint(1)\n```\n"
        self.assertEqual(kg.extract_code(text), CODE)

    def test_only_other_language_blocks(self) -> None:
        self.assertEqual(kg.extract_code("```python\nprint(1)\n```"), "print(1)\n")

    def test_blocks_after_reasoning_win(self) -> None:
        text = f"<think>\n```cpp\ndraft();\n```\n</think>\n```cpp\n{CODE}```"
        self.assertEqual(kg.extract_code(text), CODE)
        text = "<think>\n```cpp\ndraft();\n```\n</think>\nno code here"
        self.assertEqual(kg.extract_code(text), "draft();\n")

    def test_unclosed_block_runs_to_the_end(self) -> None:
        self.assertEqual(kg.extract_code("```cpp\nint a;\nint b;"), "int a;\nint b;\n")

    def test_longer_fences_and_indentation(self) -> None:
        text = "````cpp\nauto s = \"```\";\n````\n"
        self.assertEqual(kg.extract_code(text), 'auto s = "```";\n')
        self.assertEqual(kg.extract_code("  ```cpp\n  int a;\n  ```"), "  int a;\n")


class HelpersTest(unittest.TestCase):
    def test_op_name(self) -> None:
        cases = {
            "relu.default": "relu.default",
            "relu__default": "relu.default",
            "add___Tensor": "add_.Tensor",
            "_softmax__default": "_softmax.default",
            "sum__dim_IntList": "sum.dim_IntList",
            "__and____Tensor": "__and__.Tensor",
            "aten::mm": "aten::mm",
            "mm": "mm",
            " relu__default ": "relu.default",
        }
        for given, expected in cases.items():
            self.assertEqual(kg.op_name(given), expected, given)

    def test_op_from_label(self) -> None:
        self.assertEqual(adapters.op_from_label("relu__default"), "relu.default")
        self.assertEqual(adapters.op_from_label({"op": "mm.default"}), "mm.default")
        self.assertEqual(adapters.op_from_label('{"op": "add__Tensor"}'), "add.Tensor")
        self.assertEqual(adapters.op_from_label(None, {"op": "relu.default"}), "relu.default")
        self.assertEqual(adapters.op_from_label("", {"op": "relu.default"}), "relu.default")
        self.assertIsNone(adapters.op_from_label(None, {}))

    def test_score_of(self) -> None:
        done = {"status": "completed", "result": {"reward": {"score": 0.75}}}
        self.assertEqual(kg.score_of(done), 0.75)
        self.assertEqual(kg.score_of({"status": "failed", "error": "boom"}), 0.0)
        self.assertEqual(kg.score_of({"status": "cancelled"}, failure_score=-1.0), -1.0)
        self.assertEqual(kg.score_of({"status": "completed", "result": {}}, failure_score=-0.5), -0.5)
        with self.assertRaises(ValueError):
            kg.score_of({"status": "running"})

    def test_completion_text(self) -> None:
        self.assertEqual(adapters.completion_text("x"), "x")
        self.assertEqual(adapters.completion_text([{"role": "assistant", "content": "y"}]), "y")
        self.assertEqual(adapters.completion_text({"role": "assistant", "content": "z"}), "z")

    def test_build_request(self) -> None:
        body = kg.Client.build_request(source="s", op="relu__default", kind="cpu", timing=False, priority=2)
        self.assertEqual(body, {"source": "s", "op": "relu.default", "kind": "cpu", "timing": False, "priority": 2})
        with self.assertRaises(ValueError):
            kg.Client.build_request(source="s")
        with self.assertRaises(ValueError):
            kg.Client.build_request(op="relu.default")

    def test_content_task_id(self) -> None:
        a = adapters.content_task_id({"source": "s", "op": "relu.default"})
        self.assertEqual(a, adapters.content_task_id({"op": "relu.default", "source": "s", "task_id": "x"}))
        self.assertNotEqual(a, adapters.content_task_id({"source": "t", "op": "relu.default"}))
        self.assertNotEqual(a, adapters.content_task_id({"source": "s", "op": "relu.default"}, salt="1"))
        self.assertRegex(a, r"^[A-Za-z0-9._-]{1,128}$")


# ---- the client against a fake service ---------------------------------------------------------


class FakeService(BaseHTTPRequestHandler):
    """Scripted answers: POST /v1/evaluate is refused `busy` times with 429 first."""

    state: dict = {}

    def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        s = self.state
        if self.path == "/health":
            self._send(200, {"status": "ok", "version": "test", "queued": 0, "running": 0})
            return
        if self.headers.get("Authorization") != "Bearer secret":
            self._send(401, {"error": {"field": "Authorization", "message": "missing or wrong token"}})
            return
        if self.path.startswith("/v1/tasks/"):
            task_id = self.path.rsplit("/", 1)[1]
            s["polls"] = s.get("polls", 0) + 1
            status = "completed" if s["polls"] >= s.get("finish_after", 1) else "running"
            self._send(200, {"task_id": task_id, "status": status, "result": {"reward": {"score": 0.5}}})
        elif self.path == "/v1/workers":
            self._send(200, {"devices": [{"device": "cpu", "busy": 0}], "running": []})
        else:
            self._send(404, {"error": {"field": "path", "message": "no such path"}})

    def do_POST(self) -> None:  # noqa: N802
        s = self.state
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        s.setdefault("posts", []).append(body)
        if s.get("busy", 0) > 0:
            s["busy"] -= 1
            self._send(429, {"error": {"field": None, "message": "queue full"}}, {"Retry-After": "0"})
            return
        if body.get("task_id") == "taken":
            self._send(409, {"error": {"field": "task_id", "message": "task_id exists with other content"}})
            return
        self._send(202, {"task_id": body.get("task_id", "t1"), "status": "queued"})

    def log_message(self, *args) -> None:
        pass


class ClientTransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), FakeService)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d/" % cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self) -> None:
        FakeService.state = {}
        self.client = kg.Client(self.url, "secret", timeout_s=5, max_retries=2)

    def test_health_and_workers(self) -> None:
        self.assertEqual(kg.Client(self.url).health()["status"], "ok")
        self.assertEqual(self.client.workers()["devices"][0]["device"], "cpu")

    def test_401_becomes_kernelgate_error(self) -> None:
        with self.assertRaises(kg.KernelgateError) as caught:
            kg.Client(self.url).workers()
        self.assertEqual((caught.exception.status, caught.exception.field), (401, "Authorization"))

    def test_409_carries_field_and_message(self) -> None:
        with self.assertRaises(kg.KernelgateError) as caught:
            self.client.evaluate(source="x", op="relu.default", task_id="taken")
        e = caught.exception
        self.assertEqual((e.status, e.field), (409, "task_id"))
        self.assertIn("other content", e.message)

    def test_429_is_retried_then_succeeds(self) -> None:
        FakeService.state["busy"] = 2
        self.assertEqual(self.client.evaluate(source="x", op="relu__default"), "t1")
        posts = FakeService.state["posts"]
        self.assertEqual(len(posts), 3)
        self.assertEqual(posts[-1], {"source": "x", "op": "relu.default"})

    def test_retries_are_bounded(self) -> None:
        FakeService.state["busy"] = 10
        with self.assertRaises(kg.KernelgateError) as caught:
            self.client.evaluate(source="x", op="relu.default")
        self.assertEqual(caught.exception.status, 429)
        self.assertEqual(len(FakeService.state["posts"]), 3)  # 1 + max_retries

    def test_wait_polls_until_final(self) -> None:
        FakeService.state["finish_after"] = 3
        task = self.client.wait("t1", timeout_s=10, poll_s=0.01)
        self.assertEqual(task["status"], "completed")
        self.assertEqual(FakeService.state["polls"], 3)

    def test_wait_timeout_names_the_task(self) -> None:
        FakeService.state["finish_after"] = 10**9
        with self.assertRaises(TimeoutError) as caught:
            self.client.wait("slow-task", timeout_s=0.2, poll_s=0.05)
        self.assertIn("slow-task", str(caught.exception))

    def test_connection_refused_is_a_kernelgate_error(self) -> None:
        client = kg.Client("http://127.0.0.1:1", "secret", timeout_s=1, max_retries=0)
        with self.assertRaises(kg.KernelgateError) as caught:
            client.task("t1")
        self.assertEqual(caught.exception.status, 0)


# ---- the adapters against a fake client --------------------------------------------------------


class FakeClient:
    """Records calls; a task's score is 1.0 when its source contains "good", else 0.2."""

    def __init__(self, finish_after_polls: int = 1, refuse: str | None = None) -> None:
        self.calls: list[tuple] = []
        self.requests: dict[str, dict] = {}
        self.polls: dict[str, int] = {}
        self.finish_after_polls = finish_after_polls
        self.refuse = refuse
        self.cancelled: list[str] = []

    def evaluate_batch(self, requests):
        self.calls.append(("batch", len(requests)))
        entries = []
        for r in requests:
            if self.refuse and self.refuse in r["source"]:
                entries.append({"error": {"field": "source", "message": "too large"}})
            else:
                self.requests[r["task_id"]] = r
                entries.append({"task_id": r["task_id"], "status": "queued"})
        return entries

    def poll(self, task_ids):
        self.calls.append(("poll", len(task_ids)))
        done = {}
        for t in task_ids:
            self.polls[t] = self.polls.get(t, 0) + 1
            if self.polls[t] >= self.finish_after_polls:
                good = "good" in self.requests[t]["source"]
                reward = {"score": 1.0 if good else 0.2, "correct": int(good), "compiled": 1, "verdict": "pass" if good else "fail"}
                done[t] = {"task_id": t, "status": "completed", "result": {"reward": reward}}
        return done

    def cancel(self, task_id):
        self.cancelled.append(task_id)
        return {"task_id": task_id, "status": "cancelled"}


def fenced(code: str) -> str:
    return f"Reasoning...\n```cpp\n{code}\n```\n"


class AdapterTest(unittest.TestCase):
    def scorer(self, client: FakeClient, **config) -> adapters.RewardScorer:
        config.setdefault("poll_s", 0.001)
        scorer = adapters.RewardScorer(client, adapters.AdapterConfig(**config))
        adapters.reset_default_scorer(scorer)
        return scorer

    def tearDown(self) -> None:
        adapters.reset_default_scorer(None)

    def test_requests_are_built_from_completions(self) -> None:
        client = FakeClient()
        self.scorer(client, kind="cuda", policy="rl-reward", timing=True)
        adapters.kernelgate_reward(prompts=["p"], completions=[fenced("good_kernel();")], op=["relu__default"])
        (request,) = client.requests.values()
        self.assertEqual(request["source"], "good_kernel();\n")
        self.assertEqual(request["op"], "relu.default")
        self.assertEqual(request["kind"], "cuda")
        self.assertEqual(request["policy"], "rl-reward")
        self.assertTrue(request["timing"])
        self.assertRegex(request["task_id"], r"^[A-Za-z0-9._-]{1,128}$")

    def test_all_submitted_before_any_wait_and_duplicates_once(self) -> None:
        client = FakeClient(finish_after_polls=2)
        self.scorer(client, batch_size=2)
        completions = [fenced("good_a();"), fenced("bad_b();"), fenced("good_a();"), fenced("bad_c();"), fenced("good_d();")]
        rewards = adapters.kernelgate_reward(prompts=["p"] * 5, completions=completions, op=["relu.default"] * 5)
        self.assertEqual(rewards, [1.0, 0.2, 1.0, 0.2, 1.0])
        kinds = [c[0] for c in client.calls]
        self.assertEqual(kinds[:2], ["batch", "batch"])  # 4 distinct requests in chunks of 2
        self.assertNotIn("batch", kinds[2:])
        self.assertEqual(len(client.requests), 4)
        self.assertEqual(client.calls[2], ("poll", 4))  # one round polls them all

    def test_trl_async_and_conversational(self) -> None:
        self.scorer(FakeClient())
        completions = [[{"role": "assistant", "content": fenced("good();")}], [{"role": "assistant", "content": "no code"}]]
        rewards = asyncio.run(adapters.kernelgate_reward_async(prompts=["p", "p"], completions=completions, op="relu.default"))
        self.assertEqual(rewards, [1.0, 0.2])
        self.assertTrue(asyncio.iscoroutinefunction(adapters.kernelgate_reward_async))

    def test_trl_without_op_column(self) -> None:
        self.scorer(FakeClient())
        with self.assertRaises(ValueError):
            adapters.kernelgate_reward(prompts=["p"], completions=["x"])

    def test_verl_forms(self) -> None:
        self.scorer(FakeClient())
        self.assertEqual(adapters.compute_score("kg", fenced("good();"), "relu.default"), 1.0)
        self.assertEqual(adapters.compute_score("kg", fenced("bad();"), None, {"op": "relu__default"}), 0.2)
        self.assertEqual(asyncio.run(adapters.compute_score_async("kg", fenced("good();"), "relu__default")), 1.0)
        scores = adapters.compute_score_batch(["kg", "kg"], [fenced("good();"), fenced("bad();")], ["relu.default"] * 2)
        self.assertEqual(scores, [1.0, 0.2])
        info = adapters.compute_score_with_info("kg", fenced("good();"), "relu.default")
        self.assertEqual((info["score"], info["correct"]), (1.0, 1.0))

    def test_refused_and_empty_samples_get_the_failure_score(self) -> None:
        self.scorer(FakeClient(refuse="huge"), failure_score=-1.0)
        with self.assertLogs("kernelgate.adapters", "WARNING"):
            rewards = adapters.kernelgate_reward(
                prompts=["p"] * 3, completions=[fenced("huge();"), "", fenced("good();")], op=["relu.default"] * 3
            )
        self.assertEqual(rewards, [-1.0, -1.0, 1.0])

    def test_timeout_cancels_and_raises_or_scores(self) -> None:
        client = FakeClient(finish_after_polls=10**9)
        self.scorer(client, timeout_s=0.05)
        with self.assertRaises(TimeoutError):
            adapters.kernelgate_reward(prompts=["p"], completions=[fenced("good();")], op=["relu.default"])
        self.assertEqual(len(client.cancelled), 1)
        self.scorer(FakeClient(finish_after_polls=10**9), timeout_s=0.05, on_service_error="score", failure_score=-2.0)
        with self.assertLogs("kernelgate.adapters", "ERROR"):
            rewards = adapters.kernelgate_reward(prompts=["p"], completions=["x"], op=["relu.default"])
        self.assertEqual(rewards, [-2.0])

    def test_content_task_ids_repeat(self) -> None:
        client = FakeClient()
        self.scorer(client, task_ids="content", task_id_salt="s")
        adapters.kernelgate_reward(prompts=["p"], completions=[fenced("good();")], op=["relu.default"])
        adapters.kernelgate_reward(prompts=["p"], completions=[fenced("good();")], op=["relu__default"])
        self.assertEqual(len(client.requests), 1)

    def test_openrlhf_reward_func_and_server(self) -> None:
        self.scorer(FakeClient())
        prompt = "Write relu. Example:\n```cpp\nbad_example();\n```\n"
        queries = [prompt + fenced("good();"), prompt + "I cannot."]
        answer = adapters.openrlhf_rewards(queries, [prompt, prompt], ["relu.default", "relu__default"])
        self.assertEqual(answer["rewards"], [1.0, 0.2])
        self.assertEqual(answer["scores"], [1.0, 0.0])

        server = adapters.make_openrlhf_server("127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = "http://127.0.0.1:%d/get_reward" % server.server_address[1]
            body = json.dumps({"query": queries, "prompts": [prompt, prompt], "labels": ["relu.default"] * 2}).encode()
            request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as response:
                self.assertEqual(json.loads(response.read())["rewards"], [1.0, 0.2])
            bad = urllib.request.Request(url, data=b'{"query": ["x"]}', headers={"Content-Type": "application/json"})
            with self.assertRaises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(bad, timeout=10)
            self.assertEqual(caught.exception.code, 400)
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()

"""Tests against a LIVE ``kernelgate serve``.

    KERNELGATE_URL=http://127.0.0.1:8080 KERNELGATE_TOKEN=... python3 test_client.py -v

Without those variables every test is skipped. Two kernels are evaluated (a correct and a wrong
cpu relu); the adapter tests reuse those tasks through content-derived task ids, so the whole
run costs about two evaluations. KERNELGATE_POLICY, if set, is sent with every request.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import unittest
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kernelgate_adapters as adapters  # noqa: E402
from kernelgate_client import Client, KernelgateError, extract_code, score_of  # noqa: E402

URL = os.environ.get("KERNELGATE_URL", "").strip()
TOKEN = os.environ.get("KERNELGATE_TOKEN", "").strip()
SKIP_REASON = (
    "no live kernelgate service: set KERNELGATE_URL (e.g. http://127.0.0.1:8080) and "
    "KERNELGATE_TOKEN to run these tests against `kernelgate serve`"
)
WAIT_S = float(os.environ.get("KERNELGATE_TEST_WAIT_S", "300"))

# The correct cpu relu of examples/correct/relu__default (NaN propagated, any strides), and the
# same kernel with an honest bug (values in (0, 1] zeroed): a wrong answer, no cheat rule.
_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "correct", "relu__default",
                        "relu__default_implementation.cpp")
with open(_EXAMPLE) as _f:
    CORRECT_RELU = _f.read()
WRONG_RELU = CORRECT_RELU.replace("(v > scalar_t(0) || v != v)", "(v > scalar_t(1) || v != v)")
assert WRONG_RELU != CORRECT_RELU

PROMPT = (
    "Write relu.default for CPU tensors as\n```cpp\n"
    "at::Tensor relu__default_kernel_impl(const at::Tensor& self);\n```\n"
)


def completion(code: str) -> str:
    """A fake LLM completion holding `code` as a fenced block."""
    return f"<think>A strided loop will do.</think>\nHere is the kernel:\n\n```cpp\n{code}```\n\nDone."


GOOD_COMPLETION = completion(CORRECT_RELU)
BAD_COMPLETION = completion(WRONG_RELU)
REWARD_KEYS = ("score", "preset", "compiled", "correct", "correct_fraction", "speedup", "rules", "verdict")


@unittest.skipUnless(URL and TOKEN, SKIP_REASON)
class LiveServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Client(URL, TOKEN, timeout_s=60)
        cls.salt = "test-" + uuid.uuid4().hex  # this run's tasks only
        cls.config = adapters.AdapterConfig.from_env(kind="cpu", task_ids="content", task_id_salt=cls.salt)
        cls.scorer = adapters.RewardScorer(cls.client, cls.config)
        adapters.reset_default_scorer(cls.scorer)

        # Built exactly as the adapters build them, so that they find these very tasks again.
        cls.good_request = cls.scorer.build_request(extract_code(GOOD_COMPLETION), "relu.default")
        cls.bad_request = cls.scorer.build_request(extract_code(BAD_COMPLETION), "relu.default")
        cls.good_id = adapters.content_task_id(cls.good_request, cls.salt)
        cls.bad_id = adapters.content_task_id(cls.bad_request, cls.salt)
        submitted = [
            cls.client.evaluate(task_id=cls.good_id, **cls.good_request),
            cls.client.evaluate(task_id=cls.bad_id, **cls.bad_request),
        ]
        assert submitted == [cls.good_id, cls.bad_id], submitted
        tasks = cls.client.wait_many(submitted, timeout_s=WAIT_S)
        cls.good_task, cls.bad_task = tasks[cls.good_id], tasks[cls.bad_id]
        cls.good_score = score_of(cls.good_task)
        cls.bad_score = score_of(cls.bad_task)

    @classmethod
    def tearDownClass(cls) -> None:
        adapters.reset_default_scorer(None)

    def describe(self, task: dict) -> str:
        return json.dumps(task, indent=1)[:4000]

    # ---- the service ----

    def test_health_needs_no_token(self) -> None:
        health = Client(URL, token=None).health()
        self.assertEqual(health.get("status"), "ok", health)
        for key in ("version", "queued", "running"):
            self.assertIn(key, health)

    def test_v1_without_token_is_401(self) -> None:
        with self.assertRaises(KernelgateError) as caught:
            Client(URL, token=None).workers()
        self.assertEqual(caught.exception.status, 401)
        with self.assertRaises(KernelgateError) as caught:
            Client(URL, token="not-" + TOKEN).task(self.good_id)
        self.assertEqual(caught.exception.status, 401)

    def test_correct_relu_is_rewarded(self) -> None:
        task = self.good_task
        self.assertEqual(task.get("status"), "completed", self.describe(task))
        reward = task["result"]["reward"]
        for key in REWARD_KEYS:
            self.assertIn(key, reward, self.describe(task))
        self.assertEqual(reward["compiled"], 1, self.describe(task))
        self.assertEqual(reward["correct"], 1, self.describe(task))
        self.assertGreater(self.good_score, 0.0, self.describe(task))
        self.assertIn(reward["verdict"], ("pass", "fail", "rejected", "error"))

    def test_wrong_relu_scores_lower(self) -> None:
        task = self.bad_task
        self.assertEqual(task.get("status"), "completed", self.describe(task))
        reward = task["result"]["reward"]
        self.assertEqual(reward["correct"], 0, self.describe(task))
        self.assertLess(self.bad_score, self.good_score, self.describe(task))

    def test_task_id_is_idempotent(self) -> None:
        again = self.client.evaluate(task_id=self.good_id, **self.good_request)
        self.assertEqual(again, self.good_id)
        self.assertEqual(self.client.task(self.good_id).get("status"), "completed")
        with self.assertRaises(KernelgateError) as caught:
            self.client.evaluate(task_id=self.good_id, **self.bad_request)
        self.assertEqual(caught.exception.status, 409, caught.exception)

    # ---- the adapters ----

    def test_verl_compute_score(self) -> None:
        score = adapters.compute_score("kernelgate", GOOD_COMPLETION, "relu.default", {"index": 0})
        self.assertIsInstance(score, float)
        self.assertEqual(score, self.good_score)

    def test_trl_reward_functions(self) -> None:
        rewards = adapters.kernelgate_reward(
            prompts=[PROMPT, PROMPT],
            completions=[GOOD_COMPLETION, BAD_COMPLETION],
            op=["relu.default", "relu__default"],
        )
        self.assertEqual(len(rewards), 2)
        self.assertTrue(all(isinstance(r, float) for r in rewards), rewards)
        self.assertEqual(rewards, [self.good_score, self.bad_score])

        conversational = [[{"role": "assistant", "content": c}] for c in (GOOD_COMPLETION, BAD_COMPLETION)]
        rewards_async = asyncio.run(
            adapters.kernelgate_reward_async(prompts=[PROMPT, PROMPT], completions=conversational, op=["relu__default"] * 2)
        )
        self.assertEqual(rewards_async, rewards)

    def test_openrlhf_server(self) -> None:
        env = dict(
            os.environ,
            KERNELGATE_URL=URL,
            KERNELGATE_TOKEN=TOKEN,
            KERNELGATE_KIND="cpu",
            KERNELGATE_TASK_IDS="content",
            KERNELGATE_TASK_ID_SALT=self.salt,
        )
        server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "kernelgate_adapters.py"), "openrlhf-server", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            first_line: list[str] = []
            reader = threading.Thread(target=lambda: first_line.append(server.stdout.readline()), daemon=True)
            reader.start()
            reader.join(timeout=30)
            self.assertTrue(first_line and "http://" in first_line[0], f"server did not start: {first_line}")
            base = first_line[0].strip().rsplit(" ", 1)[-1]
            body = {
                "query": [PROMPT + GOOD_COMPLETION, PROMPT + BAD_COMPLETION],
                "prompts": [PROMPT, PROMPT],
                "labels": ["relu.default", "relu__default"],
            }
            request = urllib.request.Request(
                base + "/get_reward",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=WAIT_S) as response:
                self.assertEqual(response.status, 200)
                answer = json.loads(response.read())
            self.assertEqual(len(answer["rewards"]), 2, answer)
            self.assertTrue(all(isinstance(r, float) for r in answer["rewards"]), answer)
            self.assertEqual(answer["rewards"], [self.good_score, self.bad_score])
            self.assertEqual(answer["scores"], [1.0, 0.0])
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            for stream in (server.stdout, server.stderr):
                stream.close()


if __name__ == "__main__":
    unittest.main()

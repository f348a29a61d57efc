"""Reward-function adapters that score LLM-written kernels with kernelgate.

One module, three frameworks (standard library only; nothing here imports a framework):

- verl: ``compute_score`` / ``compute_score_async`` / ``compute_score_batch``
  (custom_reward_function.path=<this file>, custom_reward_function.name=<one of them>).
- TRL GRPOTrainer: ``kernelgate_reward`` (sync) and ``kernelgate_reward_async`` (async def),
  used as ``reward_funcs=[...]``; the op comes from a dataset column named "op".
- OpenRLHF: ``reward_func(queries, prompts, labels)`` for ``--remote_rm_url <this file>``, and
  ``python3 kernelgate_adapters.py openrlhf-server --listen HOST:PORT`` for
  ``--remote_rm_url http://HOST:PORT/get_reward``.

Configuration (environment): KERNELGATE_URL, KERNELGATE_TOKEN or KERNELGATE_TOKEN_FILE,
KERNELGATE_POLICY (optional), KERNELGATE_KIND (default "cpu"); optionally KERNELGATE_TIMEOUT_S
(wait per call, default 1200), KERNELGATE_FAILURE_SCORE (default 0.0), KERNELGATE_TIMING,
KERNELGATE_PRIORITY, KERNELGATE_BATCH_SIZE (requests per batch POST, default 32),
KERNELGATE_TASK_IDS ("random", or "content": the same request reuses the same task; with
KERNELGATE_TASK_ID_SALT), KERNELGATE_ON_SERVICE_ERROR ("raise" or "score").

The op being implemented ("relu.default" or its folder spelling "relu__default") comes from
verl's ground_truth, OpenRLHF's labels, or TRL's "op" column; the kernel is
``extract_code(completion)``. Many completions are submitted together and then waited for
together.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Optional, Sequence

try:
    import kernelgate_client as kg
except ImportError:  # loaded by path (verl, OpenRLHF): the client sits next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernelgate_client as kg

log = logging.getLogger("kernelgate.adapters")

__all__ = [
    "AdapterConfig",
    "Outcome",
    "RewardScorer",
    "default_scorer",
    "reset_default_scorer",
    "completion_text",
    "op_from_label",
    "content_task_id",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "compute_score_with_info",
    "kernelgate_reward",
    "kernelgate_reward_async",
    "reward_func",
    "make_openrlhf_server",
]


# ---- configuration ---------------------------------------------------------------------------


def _env_bool(name: str) -> Optional[bool]:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return None
    return value in ("1", "true", "yes", "on")


def _env_int(name: str) -> Optional[int]:
    value = os.environ.get(name, "").strip()
    return int(value) if value else None


@dataclasses.dataclass
class AdapterConfig:
    """What every adapter call sends and how long it waits."""

    kind: str = "cpu"
    policy: Optional[str] = None
    timing: Optional[bool] = None
    priority: Optional[int] = None
    timeout_s: float = 1200.0
    poll_s: float = 0.5
    failure_score: float = 0.0
    batch_size: int = 32
    task_ids: str = "random"  # "random": a fresh id per submission; "content": a hash of the request
    task_id_salt: str = ""  # mixed into content ids: another salt, other tasks
    on_service_error: str = "raise"  # "raise", or "score": failure_score for every sample

    @classmethod
    def from_env(cls, **overrides: Any) -> "AdapterConfig":
        env = os.environ
        config = cls(
            kind=env.get("KERNELGATE_KIND", "").strip() or "cpu",
            policy=env.get("KERNELGATE_POLICY", "").strip() or None,
            timing=_env_bool("KERNELGATE_TIMING"),
            priority=_env_int("KERNELGATE_PRIORITY"),
            timeout_s=float(env.get("KERNELGATE_TIMEOUT_S", "") or 1200.0),
            failure_score=float(env.get("KERNELGATE_FAILURE_SCORE", "") or 0.0),
            batch_size=int(env.get("KERNELGATE_BATCH_SIZE", "") or 32),
            task_ids=env.get("KERNELGATE_TASK_IDS", "").strip() or "random",
            task_id_salt=env.get("KERNELGATE_TASK_ID_SALT", ""),
            on_service_error=env.get("KERNELGATE_ON_SERVICE_ERROR", "").strip() or "raise",
        )
        config = dataclasses.replace(config, **overrides)
        if config.task_ids not in ("random", "content"):
            raise ValueError(f"KERNELGATE_TASK_IDS must be 'random' or 'content', not {config.task_ids!r}")
        if config.on_service_error not in ("raise", "score"):
            raise ValueError(f"KERNELGATE_ON_SERVICE_ERROR must be 'raise' or 'score', not {config.on_service_error!r}")
        return config


# ---- inputs ----------------------------------------------------------------------------------


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, a chat message {"content": ...}, or a list of
    messages (the assistant's, or else the last, content)."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return completion_text(completion.get("content", ""))
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in messages if m.get("role") in (None, "assistant")]
        chosen = assistant or messages
        if chosen:
            return "\n".join(completion_text(m.get("content", "")) for m in chosen)
        return "\n".join(completion_text(c) for c in completion)
    return str(completion)


def op_from_label(label: Any, extra_info: Any = None) -> Optional[str]:
    """The op named by a label: "relu.default", "relu__default", {"op": ...}, or a JSON
    object with "op"; else extra_info["op"]. None when neither names one."""
    value = label
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict):
        value = value.get("op")
    if (value is None or (isinstance(value, str) and not value.strip())) and isinstance(extra_info, dict):
        value = extra_info.get("op")
    if value is None:
        return None
    value = str(value).strip()
    return kg.op_name(value) if value else None


def content_task_id(request: dict, salt: str = "") -> str:
    """A task id derived from the request's content: the same request gets the same task."""
    canonical = json.dumps({k: v for k, v in request.items() if k != "task_id"}, sort_keys=True)
    return "kg-" + hashlib.sha256((salt + "\n" + canonical).encode("utf-8")).hexdigest()[:48]


# ---- scoring ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """What kernelgate said about one completion."""

    score: float
    correct: Optional[int] = None
    compiled: Optional[int] = None
    verdict: Optional[str] = None
    speedup: Optional[float] = None
    status: Optional[str] = None
    task_id: Optional[str] = None
    error: Optional[str] = None
    feedback: Optional[str] = None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class _Plan:
    """Completions turned into distinct requests (identical ones are evaluated once)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []  # distinct requests, each with a task_id
        self.slot_of_item: list[Optional[int]] = []  # item -> index into requests (None: not sent)
        self.item_errors: dict[int, str] = {}  # item -> why it was not sent
        self.task_ids: list[Optional[str]] = []  # per request, as the service answered
        self.submit_errors: dict[int, str] = {}  # request -> the service's error for it
        self.tasks: dict[str, dict] = {}  # task_id -> final task


class RewardScorer:
    """Scores (completion, op) pairs through one kernelgate Client."""

    def __init__(self, client: Optional[kg.Client] = None, config: Optional[AdapterConfig] = None):
        self.client = client if client is not None else kg.Client.from_env()
        self.config = config if config is not None else AdapterConfig.from_env()

    # -- building and submitting --

    def build_request(self, source: str, op: str) -> dict:
        """The request for one kernel (without task_id)."""
        c = self.config
        return kg.Client.build_request(
            source=source, op=op, kind=c.kind, policy=c.policy, timing=c.timing, priority=c.priority
        )

    def _task_id(self, request: dict) -> str:
        if self.config.task_ids == "content":
            return content_task_id(request, self.config.task_id_salt)
        return "kg-" + uuid.uuid4().hex

    def _plan(self, completions: Sequence[Any], ops: Sequence[Any]) -> _Plan:
        if len(completions) != len(ops):
            raise ValueError(f"{len(completions)} completions but {len(ops)} ops")
        plan = _Plan()
        slot_by_content: dict[str, int] = {}
        for item, (completion, op) in enumerate(zip(completions, ops)):
            op = op_from_label(op)
            source = kg.extract_code(completion_text(completion))
            if not op:
                raise ValueError(f"sample {item} names no op (expected e.g. 'relu.default' or 'relu__default')")
            if not source.strip():
                plan.slot_of_item.append(None)
                plan.item_errors[item] = "empty completion"
                continue
            request = self.build_request(source, op)
            key = json.dumps(request, sort_keys=True)
            if key not in slot_by_content:
                slot_by_content[key] = len(plan.requests)
                plan.requests.append(dict(request, task_id=self._task_id(request)))
            plan.slot_of_item.append(slot_by_content[key])
        plan.task_ids = [None] * len(plan.requests)
        return plan

    def _submit_chunk(self, plan: _Plan, indices: list[int]) -> None:
        try:
            entries = self.client.evaluate_batch([plan.requests[i] for i in indices])
        except kg.KernelgateError as e:
            if e.status == 413 and len(indices) > 1:  # too large for one POST: halve it
                half = len(indices) // 2
                self._submit_chunk(plan, indices[:half])
                self._submit_chunk(plan, indices[half:])
                return
            raise
        for i, entry in zip(indices, entries):
            if isinstance(entry, dict) and entry.get("task_id") and "error" not in entry:
                plan.task_ids[i] = entry["task_id"]
            else:
                error = entry.get("error") if isinstance(entry, dict) else entry
                plan.submit_errors[i] = json.dumps(error) if not isinstance(error, str) else error
                log.warning("kernelgate refused a submission: %s", plan.submit_errors[i])

    def _submit(self, plan: _Plan) -> None:
        size = max(1, self.config.batch_size)
        for start in range(0, len(plan.requests), size):
            self._submit_chunk(plan, list(range(start, min(start + size, len(plan.requests)))))

    def _pending(self, plan: _Plan) -> list[str]:
        return [t for t in plan.task_ids if t and t not in plan.tasks]

    def _cancel_pending(self, plan: _Plan) -> None:
        for task_id in self._pending(plan):
            try:
                self.client.cancel(task_id)
            except kg.KernelgateError as e:
                log.warning("could not cancel kernelgate task %s: %s", task_id, e)

    def _timeout(self, plan: _Plan) -> TimeoutError:
        pending = self._pending(plan)
        shown = ", ".join(pending[:5]) + (" ..." if len(pending) > 5 else "")
        return TimeoutError(
            f"{len(pending)} kernelgate task(s) did not finish within {self.config.timeout_s:g} s: {shown}"
        )

    # -- results --

    def _outcomes(self, plan: _Plan) -> list[Outcome]:
        fail = self.config.failure_score
        outcomes = []
        for item, slot in enumerate(plan.slot_of_item):
            if slot is None:
                outcomes.append(Outcome(score=fail, error=plan.item_errors.get(item)))
                continue
            if slot in plan.submit_errors:
                outcomes.append(Outcome(score=fail, error=plan.submit_errors[slot]))
                continue
            task_id = plan.task_ids[slot]
            task = plan.tasks.get(task_id)
            if task is None:
                outcomes.append(Outcome(score=fail, task_id=task_id, error="not finished"))
                continue
            reward = (task.get("result") or {}).get("reward") or {}
            outcomes.append(
                Outcome(
                    score=kg.score_of(task, fail),
                    correct=reward.get("correct"),
                    compiled=reward.get("compiled"),
                    verdict=reward.get("verdict"),
                    speedup=reward.get("speedup"),
                    status=task.get("status"),
                    task_id=task_id,
                    error=task.get("error"),
                    feedback=(task.get("result") or {}).get("feedback"),
                )
            )
        return outcomes

    def _service_failure(self, count: int, error: BaseException) -> list[Outcome]:
        if self.config.on_service_error == "raise":
            raise error
        log.error("kernelgate unavailable, scoring %d sample(s) %g: %s", count, self.config.failure_score, error)
        return [Outcome(score=self.config.failure_score, error=str(error)) for _ in range(count)]

    # -- entry points --

    def evaluate(self, completions: Sequence[Any], ops: Sequence[Any]) -> list[Outcome]:
        """Submit every completion, then wait for all; one Outcome per completion."""
        plan = self._plan(completions, ops)
        try:
            self._submit(plan)
            deadline = time.monotonic() + self.config.timeout_s
            interval = self.config.poll_s
            while self._pending(plan):
                plan.tasks.update(self.client.poll(self._pending(plan)))
                if not self._pending(plan):
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._cancel_pending(plan)
                    raise self._timeout(plan)
                time.sleep(min(interval, remaining))
                interval = min(interval * 1.5, 5.0)
        except (kg.KernelgateError, TimeoutError) as e:
            return self._service_failure(len(completions), e)
        return self._outcomes(plan)

    async def evaluate_async(self, completions: Sequence[Any], ops: Sequence[Any]) -> list[Outcome]:
        """evaluate() for an event loop: HTTP calls run in threads, waits are asyncio sleeps."""
        plan = self._plan(completions, ops)
        try:
            await asyncio.to_thread(self._submit, plan)
            deadline = time.monotonic() + self.config.timeout_s
            interval = self.config.poll_s
            while self._pending(plan):
                plan.tasks.update(await asyncio.to_thread(self.client.poll, self._pending(plan)))
                if not self._pending(plan):
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    await asyncio.to_thread(self._cancel_pending, plan)
                    raise self._timeout(plan)
                await asyncio.sleep(min(interval, remaining))
                interval = min(interval * 1.5, 5.0)
        except (kg.KernelgateError, TimeoutError) as e:
            return self._service_failure(len(completions), e)
        return self._outcomes(plan)

    def scores(self, completions: Sequence[Any], ops: Sequence[Any]) -> list[float]:
        return [o.score for o in self.evaluate(completions, ops)]

    async def scores_async(self, completions: Sequence[Any], ops: Sequence[Any]) -> list[float]:
        return [o.score for o in await self.evaluate_async(completions, ops)]


_default_lock = threading.Lock()
_default: Optional[RewardScorer] = None


def default_scorer() -> RewardScorer:
    """The scorer the module-level functions use, built from the environment on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = RewardScorer()
        return _default


def reset_default_scorer(scorer: Optional[RewardScorer] = None) -> None:
    """Replace the module's scorer (None: rebuild it from the environment on next use)."""
    global _default
    with _default_lock:
        _default = scorer


def _ops_column(kwargs: dict, count: int) -> list:
    for name in ("op", "ground_truth", "label"):
        column = kwargs.get(name)
        if column is not None:
            if isinstance(column, (str, bytes, dict)):
                return [column] * count
            return list(column)
    raise ValueError('kernelgate reward: the dataset needs an "op" column (e.g. "relu.default")')


# ---- verl ------------------------------------------------------------------------------------


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any) -> float:
    """verl custom reward function (one sample). The op is ground_truth (or extra_info["op"])."""
    op = op_from_label(ground_truth, extra_info)
    return default_scorer().scores([solution_str], [op])[0]


async def compute_score_async(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any
) -> float:
    """compute_score as a coroutine, for verl's reward loop (many samples in flight at once)."""
    op = op_from_label(ground_truth, extra_info)
    return (await default_scorer().scores_async([solution_str], [op]))[0]


def compute_score_with_info(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any
) -> dict:
    """compute_score returning {"score", "correct", "compiled", "speedup"} for verl's extra logs."""
    op = op_from_label(ground_truth, extra_info)
    outcome = default_scorer().evaluate([solution_str], [op])[0]
    return _verl_info(outcome)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Optional[Sequence[Any]] = None,
    **kwargs: Any,
) -> list[float]:
    """verl batch reward manager form: every sample submitted at once, then waited for."""
    extra_infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    ops = [op_from_label(gt, info) for gt, info in zip(ground_truths, extra_infos)]
    return default_scorer().scores(list(solution_strs), ops)


def _verl_info(outcome: Outcome) -> dict:
    return {
        "score": outcome.score,
        "correct": float(outcome.correct or 0),
        "compiled": float(outcome.compiled or 0),
        "speedup": float(outcome.speedup) if outcome.speedup is not None else 0.0,
    }


# ---- TRL -------------------------------------------------------------------------------------


def kernelgate_reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """TRL GRPOTrainer reward function; the op comes from the dataset's "op" column."""
    return default_scorer().scores(list(completions), _ops_column(kwargs, len(completions)))


async def kernelgate_reward_async(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """kernelgate_reward as a coroutine (TRL runs async reward functions concurrently)."""
    return await default_scorer().scores_async(list(completions), _ops_column(kwargs, len(completions)))


# ---- OpenRLHF --------------------------------------------------------------------------------


def _response_of(query: str, prompt: Optional[str]) -> str:
    """The generated part of an OpenRLHF query (prompt + response)."""
    query = "" if query is None else str(query)
    if prompt:
        if query.startswith(prompt):
            return query[len(prompt) :]
        at = query.rfind(prompt)
        if at >= 0:
            return query[at + len(prompt) :]
    return query


def openrlhf_rewards(queries: Sequence[str], prompts: Optional[Sequence[str]], labels: Sequence[Any]) -> dict:
    """{"rewards": [...], "scores": [...], "extra_logs": {...}} as plain lists.

    rewards are kernelgate's reward scores; scores are 1.0 for a kernel judged correct, else
    0.0 (the 0-1 value OpenRLHF's dynamic filtering reads).
    """
    queries = list(queries)
    prompts = list(prompts) if prompts is not None else [None] * len(queries)
    if labels is None:
        raise ValueError("OpenRLHF sent no labels: run with --label_key naming the op column")
    labels = list(labels)
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(f"{len(queries)} queries, {len(prompts)} prompts, {len(labels)} labels")
    responses = [_response_of(q, p) for q, p in zip(queries, prompts)]
    outcomes = default_scorer().evaluate(responses, labels)
    return {
        "rewards": [o.score for o in outcomes],
        "scores": [float(o.correct or 0) for o in outcomes],
        "extra_logs": {
            "kernelgate_correct": [float(o.correct or 0) for o in outcomes],
            "kernelgate_compiled": [float(o.compiled or 0) for o in outcomes],
        },
    }


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> dict:
    """OpenRLHF python-file reward function (--remote_rm_url /path/to/kernelgate_adapters.py)."""
    answer = openrlhf_rewards(queries, prompts, labels)
    try:
        import torch  # OpenRLHF expects tensors; torch is always there when it runs
    except ImportError:
        return answer
    return {
        "rewards": torch.tensor(answer["rewards"], dtype=torch.float32),
        "scores": torch.tensor(answer["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in answer["extra_logs"].items()},
    }


class _OpenRLHFHandler(BaseHTTPRequestHandler):
    server_version = "kernelgate-openrlhf/1"
    max_body_bytes = 256 * 1024 * 1024

    def _answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path.rstrip("/") in ("", "/health"):
            self._answer(200, {"status": "ok"})
        else:
            self._answer(404, {"error": "POST the OpenRLHF request to any path; GET /health"})

    def do_POST(self) -> None:  # noqa: N802
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > self.max_body_bytes:
            self._answer(413 if length > 0 else 411, {"error": "bad or missing Content-Length"})
            return
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(request, dict):
                raise ValueError("the body must be a JSON object")
            queries = request.get("query", request.get("queries"))
            if not isinstance(queries, list):
                raise ValueError('the body needs "query": [prompt + response, ...]')
            answer = openrlhf_rewards(queries, request.get("prompts"), request.get("labels"))
        except ValueError as e:
            self._answer(400, {"error": str(e)})
            return
        except (kg.KernelgateError, TimeoutError) as e:
            log.error("kernelgate failed: %s", e)
            self._answer(502, {"error": str(e)})  # OpenRLHF retries a failed request
            return
        self._answer(200, answer)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.info("%s %s", self.address_string(), format % args)


def make_openrlhf_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An OpenRLHF remote reward server (not yet serving); port 0 picks a free one."""
    server = ThreadingHTTPServer((host, port), _OpenRLHFHandler)
    server.daemon_threads = True
    return server


def _parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--listen wants HOST:PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kernelgate_adapters.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("openrlhf-server", help="an OpenRLHF --remote_rm_url server forwarding to kernelgate")
    serve.add_argument("--listen", type=_parse_listen, default=("127.0.0.1", 5000), help="HOST:PORT (port 0: any free one)")
    serve.add_argument("--kind", help="override KERNELGATE_KIND")
    serve.add_argument("--policy", help="override KERNELGATE_POLICY")
    serve.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(message)s")
    overrides = {k: v for k, v in (("kind", args.kind), ("policy", args.policy)) if v}
    reset_default_scorer(RewardScorer(config=AdapterConfig.from_env(**overrides)))
    server = make_openrlhf_server(*args.listen)
    host, port = server.server_address[:2]
    print(f"kernelgate OpenRLHF reward server listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

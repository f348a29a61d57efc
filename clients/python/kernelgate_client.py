"""A small client for the kernelgate reward service (``kernelgate serve``, API v1).

Standard library only. Typical use::

    from kernelgate_client import Client, extract_code, score_of

    client = Client("http://127.0.0.1:8080", token="...")
    task = client.evaluate_and_wait(source=extract_code(completion), op="relu.default", kind="cpu")
    reward = score_of(task)
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Optional

__all__ = [
    "Client",
    "KernelgateError",
    "FINAL_STATUSES",
    "extract_code",
    "score_of",
    "op_name",
]

__version__ = "1.0"

FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
RETRYABLE_STATUSES = frozenset({429, 503})


class KernelgateError(Exception):
    """An error answer from the service (or a transport failure, status 0).

    ``status`` is the HTTP status, ``field`` the request field the service blames (or None),
    ``message`` its explanation.
    """

    def __init__(self, status: int, field: Optional[str], message: str):
        self.status = status
        self.field = field
        self.message = message
        where = f" (field {field!r})" if field else ""
        super().__init__(f"kernelgate answered {status}{where}: {message}")


def _error_from_body(status: int, body: bytes) -> KernelgateError:
    text = body.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict):
        return KernelgateError(status, error.get("field"), str(error.get("message", "")))
    if isinstance(error, str):
        return KernelgateError(status, None, error)
    return KernelgateError(status, None, text.strip()[:500] or "(empty body)")


def _retry_after_seconds(value: Optional[str], default: float) -> float:
    """Retry-After as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return default
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    if when is None:
        return default
    return max(0.0, when.timestamp() - time.time())


class Client:
    """Blocking client for one kernelgate service. Safe to share between threads.

    ``token`` may be None (only ``health()`` works then). Requests answered 429 or 503 are
    retried up to ``max_retries`` times, waiting what Retry-After says (capped by
    ``max_retry_wait_s``). Connection failures are retried the same way for requests that
    are safe to repeat (GET, DELETE, and submissions that carry a task_id).
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        timeout_s: float = 30.0,
        max_retries: int = 5,
        max_retry_wait_s: float = 60.0,
    ):
        if not base_url:
            raise ValueError("kernelgate base_url is empty")
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        self.token = token or None
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.max_retry_wait_s = float(max_retry_wait_s)

    @classmethod
    def from_env(cls, **kwargs: Any) -> "Client":
        """Client from KERNELGATE_URL and KERNELGATE_TOKEN (or KERNELGATE_TOKEN_FILE)."""
        url = os.environ.get("KERNELGATE_URL", "").strip()
        if not url:
            raise ValueError("KERNELGATE_URL is not set (e.g. http://127.0.0.1:8080)")
        return cls(url, token_from_env(), **kwargs)

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, token={'set' if self.token else 'none'})"

    # ---- transport ---------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        auth: bool = True,
        repeatable: Optional[bool] = None,
        parse_json: bool = True,
    ) -> tuple[int, Any]:
        """One API call with bounded retries; returns (status, parsed body)."""
        url = self.base_url + path
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json", "User-Agent": f"kernelgate-python/{__version__}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if repeatable is None:
            repeatable = method in ("GET", "DELETE")

        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    status = response.status
                    raw = response.read()
            except urllib.error.HTTPError as e:
                raw = e.read() if e.fp is not None else b""
                if e.code in RETRYABLE_STATUSES and attempt < self.max_retries:
                    attempt += 1
                    wait = _retry_after_seconds(e.headers.get("Retry-After"), default=float(attempt))
                    time.sleep(min(wait, self.max_retry_wait_s))
                    continue
                raise _error_from_body(e.code, raw) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                if repeatable and attempt < self.max_retries:
                    attempt += 1
                    time.sleep(min(0.5 * 2 ** (attempt - 1) + random.random() * 0.2, self.max_retry_wait_s))
                    continue
                raise KernelgateError(0, None, f"{method} {url} failed: {reason}") from e
            if not parse_json:
                return status, raw.decode("utf-8", "replace")
            try:
                return status, json.loads(raw.decode("utf-8")) if raw else {}
            except ValueError:
                raise KernelgateError(status, None, f"{method} {url}: answer is not JSON: {raw[:200]!r}") from None

    @staticmethod
    def _task_path(task_id: str) -> str:
        if not task_id:
            raise ValueError("task_id is empty")
        return "/v1/tasks/" + urllib.parse.quote(str(task_id), safe="")

    # ---- API ---------------------------------------------------------------------------------

    def health(self) -> dict:
        """GET /health (no token needed): {"status", "version", "queued", "running"}."""
        return self._request("GET", "/health", auth=False)[1]

    @staticmethod
    def build_request(
        files: Optional[dict] = None,
        source: Optional[str] = None,
        op: Optional[str] = None,
        kind: Optional[str] = None,
        task_id: Optional[str] = None,
        suite: Optional[str] = None,
        ops: Optional[Iterable[str]] = None,
        policy: Optional[str] = None,
        timing: Optional[bool] = None,
        priority: Optional[int] = None,
        extra: Optional[dict] = None,
    ) -> dict:
        """The JSON body of one evaluation request; fields left as None are omitted."""
        body: dict[str, Any] = {}
        if task_id is not None:
            body["task_id"] = str(task_id)
        if files is not None:
            body["files"] = dict(files)
        if source is not None:
            body["source"] = source
        if op is not None:
            body["op"] = op_name(op)
        if kind is not None:
            body["kind"] = kind
        if suite is not None:
            body["suite"] = suite
        if ops is not None:
            body["ops"] = [op_name(o) for o in ops]
        if policy is not None:
            body["policy"] = policy
        if timing is not None:
            body["timing"] = bool(timing)
        if priority is not None:
            body["priority"] = int(priority)
        if extra:
            body.update(extra)
        if "files" not in body and "source" not in body:
            raise ValueError("an evaluation needs files= or source= (with op=)")
        if "source" in body and "op" not in body:
            raise ValueError("source= needs op= (e.g. op='relu.default')")
        return body

    def evaluate(self, *args: Any, **kwargs: Any) -> str:
        """POST /v1/evaluate with build_request's arguments; returns the task id (an identical
        existing task's id, too)."""
        body = self.build_request(*args, **kwargs)
        _, answer = self._request("POST", "/v1/evaluate", body, repeatable="task_id" in body)
        return answer["task_id"]

    def evaluate_batch(self, requests: list[dict]) -> list[dict]:
        """POST /v1/evaluate/batch with request bodies (see build_request).

        Returns one entry per request, in order: {"task_id", "status"} or {"error": {...}}.
        """
        requests = list(requests)
        if not requests:
            return []
        repeatable = all("task_id" in r for r in requests)
        _, answer = self._request("POST", "/v1/evaluate/batch", {"tasks": requests}, repeatable=repeatable)
        entries = answer.get("tasks")
        if not isinstance(entries, list) or len(entries) != len(requests):
            raise KernelgateError(200, None, f"batch answer has {len(entries or [])} entries for {len(requests)} requests")
        return entries

    def task(self, task_id: str) -> dict:
        """GET /v1/tasks/{id}: {"task_id", "status", "result"?, "error"?}."""
        return self._request("GET", self._task_path(task_id))[1]

    def cancel(self, task_id: str) -> dict:
        """DELETE /v1/tasks/{id}: {"task_id", "status"} (the final status if already decided)."""
        return self._request("DELETE", self._task_path(task_id))[1]

    def workers(self) -> dict:
        """GET /v1/workers: per device its busy, queued and pool sizes ("devices"), the running task ids."""
        return self._request("GET", "/v1/workers")[1]

    def metrics_text(self) -> str:
        """GET /metrics: Prometheus text."""
        return self._request("GET", "/metrics", parse_json=False)[1]

    # ---- waiting -----------------------------------------------------------------------------

    def wait(self, task_id: str, timeout_s: float = 600.0, poll_s: float = 0.5, max_poll_s: float = 5.0) -> dict:
        """Poll a task until it is completed, failed or cancelled; returns the task.

        The interval starts at ``poll_s`` and grows to ``max_poll_s``. Raises TimeoutError
        naming the task when ``timeout_s`` passes first (the task is left running).
        """
        deadline = time.monotonic() + timeout_s
        interval = poll_s
        while True:
            task = self.task(task_id)
            status = task.get("status")
            if status in FINAL_STATUSES:
                return task
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"kernelgate task {task_id!r} did not finish within {timeout_s:g} s (last status: {status!r})"
                )
            time.sleep(min(interval, remaining))
            interval = min(interval * 1.5, max_poll_s)

    def poll(self, task_ids: Iterable[str], threads: int = 8) -> dict[str, dict]:
        """GET each task once (a few at a time); returns {task_id: task} for those finished."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        if len(ids) == 1 or threads <= 1:
            tasks = [self.task(i) for i in ids]
        else:
            with ThreadPoolExecutor(max_workers=min(threads, len(ids))) as pool:
                tasks = list(pool.map(self.task, ids))
        return {i: t for i, t in zip(ids, tasks) if t.get("status") in FINAL_STATUSES}

    def wait_many(
        self, task_ids: Iterable[str], timeout_s: float = 600.0, poll_s: float = 0.5, max_poll_s: float = 5.0
    ) -> dict[str, dict]:
        """Wait for several tasks at once; returns {task_id: final task}.

        Raises TimeoutError naming the unfinished tasks when ``timeout_s`` passes.
        """
        pending = list(dict.fromkeys(task_ids))
        done: dict[str, dict] = {}
        deadline = time.monotonic() + timeout_s
        interval = poll_s
        while pending:
            done.update(self.poll(pending))
            pending = [i for i in pending if i not in done]
            if not pending:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                shown = ", ".join(repr(i) for i in pending[:5]) + (" ..." if len(pending) > 5 else "")
                raise TimeoutError(
                    f"{len(pending)} kernelgate task(s) did not finish within {timeout_s:g} s: {shown}"
                )
            time.sleep(min(interval, remaining))
            interval = min(interval * 1.5, max_poll_s)
        return done

    def evaluate_and_wait(self, timeout_s: float = 600.0, poll_s: float = 0.5, **request: Any) -> dict:
        """evaluate(**request), then wait(); returns the final task."""
        return self.wait(self.evaluate(**request), timeout_s=timeout_s, poll_s=poll_s)


# ---- helpers ---------------------------------------------------------------------------------


def token_from_env() -> Optional[str]:
    """KERNELGATE_TOKEN, else the contents of KERNELGATE_TOKEN_FILE, else None."""
    token = os.environ.get("KERNELGATE_TOKEN", "").strip()
    if token:
        return token
    path = os.environ.get("KERNELGATE_TOKEN_FILE", "").strip()
    if path:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    return None


def op_name(op: str) -> str:
    """An op as the service names it: "relu.default"; folder spellings ("relu__default",
    "add___Tensor") are turned back, the last "__" separating name and overload."""
    op = str(op).strip()
    if "." in op or "::" in op:
        return op
    sep = op.rfind("__")
    if sep > 0 and sep + 2 < len(op):
        return op[:sep] + "." + op[sep + 2 :]
    return op


_CODE_LANGUAGES = frozenset({"", "cpp", "c++", "cxx", "cc", "cuda", "cu", "c", "h", "hpp", "cuh"})
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`\n]*$")


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of each fenced block, in order; an unclosed last block runs to the end."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, language = opening.group(1), opening.group(2).lower()
        body = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            body.append(lines[i])
            i += 1
        blocks.append((language, "\n".join(body) + "\n"))
        i += 1
    return blocks


def extract_code(text: str) -> str:
    """The last fenced code block of an LLM completion (```cpp, ```cuda, ```c++ or plain ```),
    else the last fenced block of another language, else the text itself.

    When the completion has a reasoning section closed by ``</think>``, blocks after it win.
    """
    if text is None:
        return ""
    text = str(text)
    candidates = []
    if "</think>" in text:
        candidates.append(text.rsplit("</think>", 1)[1])
    candidates.append(text)
    for part in candidates:
        blocks = _fenced_blocks(part)
        code_blocks = [code for language, code in blocks if language in _CODE_LANGUAGES]
        if code_blocks:
            return code_blocks[-1]
        if blocks:
            return blocks[-1][1]
    return text


def score_of(task: dict, failure_score: float = 0.0) -> float:
    """result["reward"]["score"] of a finished task; ``failure_score`` when the task failed,
    was cancelled, or carries no reward. Raises ValueError for a task still queued/running."""
    status = task.get("status")
    if status not in FINAL_STATUSES:
        raise ValueError(f"task {task.get('task_id')!r} is not finished (status {status!r})")
    if status != "completed":
        return float(failure_score)
    reward = (task.get("result") or {}).get("reward") or {}
    score = reward.get("score")
    if score is None:
        return float(failure_score)
    return float(score)

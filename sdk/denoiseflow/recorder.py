"""The provenance recorder: nodes, fuse decisions and reviews, sent in batches.

`record()` only encodes the event and appends it to a bounded in-memory buffer;
a background thread posts batches to `/api/v1/ingest`. The agent is never
blocked and never sees an exception from here: while the dashboard is down the
thread retries (honoring Retry-After on 429/503), and when the buffer is full
new events are dropped and counted rather than growing memory without bound.
Event ids are fixed when an event is recorded, so a retry can never store
anything twice. A field that cannot be serialized (a `__str__` that raises, a
cycle, NaN) is replaced by a marker and counted as `unserializable`.
"""

import atexit
import gzip
import json
import logging
import os
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime

from denoiseflow import retry
from denoiseflow.costs import llm_fields
from denoiseflow.serialization import Encoding
from denoiseflow.transport import HttpTransport, TransportError
from denoiseflow.version import USER_AGENT

logger = logging.getLogger("denoiseflow")

DEFAULT_URL = "http://127.0.0.1:8000"
INGEST_PATH = "/api/v1/ingest"
# The server refuses more than 1,000 events or 5 MiB per request.
MAX_BATCH_EVENTS = 1000
MAX_BATCH_BYTES = 4 * 1024 * 1024
GZIP_ABOVE_BYTES = 64 * 1024


@dataclass(frozen=True)
class NodeRef:
    """What `record()` returns: enough to name the node as someone's parent,
    and for a consumer's fuse to judge it."""

    trace_id: str
    product_id: str
    agent_id: str = ""
    confidence: float | None = None  # normalized, when the scale was numeric

    def __str__(self):
        return self.product_id


def new_id(prefix: str = "") -> str:
    """128 random bits as 32 hex digits, like uuid4().hex at a fraction of its cost."""
    return prefix + os.urandom(16).hex()


class _ProductIds:
    """Default product ids a person can read where the dashboard shows them:
    `<trace>:<step>:<n>-<tag>`, the n-th node of that step (or agent) in that
    trace made by this process. The tag, drawn per process (and again after a
    fork, or when the counters are forgotten), keeps two processes writing one
    trace from ever taking the same id; ids are unique per project as traces are."""

    TRACES_REMEMBERED = 10_000  # a long-running agent's counters stay bounded

    def __init__(self):
        self._lock = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        self._tag = os.urandom(3).hex()

    def next(self, trace_id, step) -> str:
        # The server keeps 255 characters: a long trace id or step is clipped, the count and tag never.
        key = (str(trace_id or "")[:150], str(step or "node")[:80])
        with self._lock:
            if key not in self._counts and len(self._counts) >= self.TRACES_REMEMBERED:
                self._forget()
            count = self._counts[key] = self._counts.get(key, 0) + 1
            tag = self._tag
        return f"{key[0]}:{key[1]}:{count}-{tag}"


_product_ids = _ProductIds()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_product_ids._forget)


def new_product_id(trace_id, step) -> str:
    """The default id of a node of `step` (its agent's id when it has no step) in `trace_id`."""
    return _product_ids.next(trace_id, step)


def iso(timestamp) -> str:
    if timestamp is None:
        return datetime.now(UTC).isoformat()
    if isinstance(timestamp, datetime):
        return (timestamp if timestamp.tzinfo else timestamp.replace(tzinfo=UTC)).isoformat()
    return str(timestamp)


def normalized(confidence, scale) -> float | None:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        return None
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0):
        return None
    return confidence / (scale or 1)


def fuse_body(fuse) -> dict | None:
    """An inline fuse from a `FuseResult` (see `denoiseflow.fuse`) or a plain dict."""
    if fuse is None:
        return None
    return fuse.as_fuse() if hasattr(fuse, "as_fuse") else dict(fuse)


class Recorder:
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        batch_size: int = 500,
        flush_interval: float = 0.5,
        max_buffer: int = 10_000,
        timeout: float = 10.0,
        backoff_base: float = 0.5,
        max_backoff: float = 30.0,
        max_attempts_on_error: int = 5,
        transport=None,
    ):
        self.url = (url or os.environ.get("DENOISE_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("DENOISE_API_KEY", "")
        self.endpoint = self.url + INGEST_PATH
        self.batch_size = max(1, min(batch_size, MAX_BATCH_EVENTS))
        self.flush_interval = flush_interval
        self.max_buffer = max_buffer
        self.backoff_base, self.max_backoff = backoff_base, max_backoff
        self.max_attempts_on_error = max_attempts_on_error
        self.transport = transport or HttpTransport(timeout)

        self._queue: deque[bytes] = deque()
        self._in_flight = 0
        self._cond = threading.Condition()
        self._waiting = 0  # flushes waiting: send without waiting for a full batch
        self._closing = False
        self._abandon = threading.Event()  # close() gave up: stop retrying
        self._thread: threading.Thread | None = None
        self._counts = {"recorded": 0, "sent": 0, "rejected": 0, "dropped": 0, "failed": 0, "retries": 0,
                        "unserializable": 0}
        atexit.register(_close_at_exit, weakref.ref(self))

    # -- what agents call ------------------------------------------------------

    def record(
        self,
        trace_id: str,
        agent_id: str,
        content=None,
        *,
        step: str = "",
        source_type: str = "",
        parent_ids=(),
        confidence: float | None = None,
        confidence_scale: float | None = None,
        round: int | None = None,
        status: str | None = None,
        raw_input=None,
        metrics: dict | None = None,
        fuse=None,
        metadata: dict | None = None,
        product_id: str | None = None,
        timestamp=None,
        event_id: str | None = None,
        environment: str | None = None,
        duration_ms: float | None = None,
        model: str | None = None,
        usage: dict | None = None,
        cost_usd: float | None = None,
        llm=None,
    ) -> NodeRef:
        """Buffers one node (one artifact of one agent step) and returns its ref.
        A fixed `event_id` makes a re-run of the same work store nothing twice.
        `llm`: a model response (OpenAI, Anthropic, LangChain) whose model and
        token usage the node carries, unless `model` / `usage` say otherwise.
        Never raises: whatever cannot be encoded is replaced and counted."""
        product_id = product_id or new_product_id(trace_id, step or agent_id)
        try:
            if llm is not None:
                implied = llm_fields(llm)
                model = model or implied.get("model")
                usage = usage or implied.get("usage")
            encoding = Encoding()
            body = {"trace_id": trace_id, "product_id": product_id, "agent_id": agent_id,
                    "parent_ids": [encoding.text(p) for p in parent_ids or ()]}
            optional = {
                "step": step or None, "source_type": source_type or None,
                "content": None if content is None else encoding.text(content),
                "raw_input": None if raw_input is None else encoding.text(raw_input),
                "confidence": confidence, "confidence_scale": confidence_scale, "round": round, "status": status,
                "metrics": metrics or None, "fuse": fuse_body(fuse), "metadata": metadata or None,
                "environment": environment, "duration_ms": duration_ms, "model": model, "usage": usage,
                "cost_usd": cost_usd,
            }
            body.update({k: v for k, v in optional.items() if v is not None})
            self.emit("node", body, timestamp, event_id, encoding)
        except Exception:  # an agent's odd arguments must not break the agent
            logger.exception("denoiseflow: could not record a node; dropped")
            self._count("dropped")
        return NodeRef(trace_id, product_id, agent_id, normalized(confidence, confidence_scale))

    def fuse(self, node, decision, reason: str = "", threshold: float | None = None, *,
             trace_id: str | None = None, by_agent_id: str = "", reason_code: str = "",
             policy_version: int | None = None, timestamp=None, event_id: str | None = None) -> None:
        """A consumer's decision about an upstream node: accept, downweight or block.
        `decision` may be a `FuseResult` from a `ConfidenceFuse` (or anything with
        `as_fuse()`); `reason_code` is a short stable code such as `judge_rejected`."""
        if hasattr(decision, "as_fuse"):
            fields = dict(decision.as_fuse())
        else:
            fields = {"decision": decision, "reason": reason, "threshold": threshold}
        if reason_code:
            fields["reason_code"] = reason_code
        if policy_version is not None:
            fields["policy_version"] = policy_version
        trace_id = trace_id or getattr(node, "trace_id", None)
        encoding = Encoding()
        self.emit("fuse", {"trace_id": trace_id, "product_id": encoding.text(node), "by_agent_id": by_agent_id,
                           **fields}, timestamp, event_id, encoding)

    def review(self, trace_id: str, verdict: str, product_id=None, comment: str = "", timestamp=None,
               event_id: str | None = None) -> None:
        """A human or ground-truth verdict (`correct`/`incorrect`) on an answer."""
        encoding = Encoding()
        body = {"trace_id": trace_id, "verdict": verdict, "comment": comment}
        if product_id is not None:
            body["product_id"] = encoding.text(product_id)
        self.emit("review", body, timestamp, event_id, encoding)

    def emit(self, kind: str, body: dict, timestamp=None, event_id: str | None = None,
             encoding: Encoding | None = None) -> bool:
        """Buffers one event; False if the buffer was full and it was dropped."""
        with self._cond:
            self._counts["recorded"] += 1
            if not self._has_room():
                return False
        encoding = encoding or Encoding()
        try:
            data = encoding.dumps({"id": event_id or new_id("evt-"), "type": kind,
                                   "timestamp": iso(timestamp), "body": body})
        except Exception:  # e.g. a timestamp whose str() raises: the agent still goes on
            logger.exception("denoiseflow: could not encode a %s event; dropped", kind)
            self._count("dropped")
            return False
        with self._cond:
            self._counts["unserializable"] += encoding.replaced
            if not self._has_room():  # filled up while this event was encoded
                return False
            self._queue.append(data)
            self._ensure_thread()
            # Wake the sender only when it has something new to do: a first
            # event to wait on, or a full batch. A wake-up per event costs the
            # agent a thread switch per record().
            if len(self._queue) == 1 or len(self._queue) == self.batch_size:
                self._cond.notify_all()
        return True

    def _has_room(self) -> bool:
        """Under the lock: True if one more event fits, else counts it dropped."""
        if not self._closing and len(self._queue) + self._in_flight < self.max_buffer:
            return True
        self._counts["dropped"] += 1
        dropped = self._counts["dropped"]
        if dropped == 1 or dropped % 1000 == 0:
            logger.warning("denoiseflow: buffer full or closed, %d events dropped so far", dropped)
        return False

    def flush(self, timeout: float | None = None) -> bool:
        """Waits until everything buffered so far is delivered (or refused by the
        server); False if that did not happen within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
            self._cond.notify_all()
            try:
                while self._queue or self._in_flight:
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return False
                    self._cond.wait(remaining)
                return True
            finally:
                self._waiting -= 1

    def close(self, timeout: float = 5.0) -> bool:
        """Flushes, then stops the sender. What could not be delivered within
        `timeout` is dropped and counted; True if nothing was."""
        delivered = self.flush(timeout)
        with self._cond:
            self._closing = True
            # The batch in flight, if any, is counted by the sender when it gives up.
            self._counts["dropped"] += len(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        self._abandon.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        return delivered

    def stats(self) -> dict:
        """Counters: recorded, sent, rejected (refused by the server), dropped
        (buffer full or given up at close), failed, retries, and pending."""
        with self._cond:
            return {**self._counts, "pending": len(self._queue) + self._in_flight}

    # -- the sender thread -----------------------------------------------------

    def _count(self, name: str, amount: int = 1) -> None:
        with self._cond:
            self._counts[name] += amount

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="denoiseflow-sender", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                self._cond.wait_for(
                    lambda: len(self._queue) >= self.batch_size or self._waiting or self._closing,
                    timeout=self.flush_interval,
                )
                batch, size = [], 0
                while self._queue and len(batch) < self.batch_size and size + len(self._queue[0]) < MAX_BATCH_BYTES:
                    size += len(self._queue[0]) + 1
                    batch.append(self._queue.popleft())
                if not batch:  # one event larger than a batch may be: the server judges it
                    batch.append(self._queue.popleft())
                self._in_flight = len(batch)
            try:
                if not self._deliver(batch):
                    self._count("dropped", len(batch))
            except Exception:  # never let the sender die: count and go on
                logger.exception("denoiseflow: delivery failed unexpectedly")
                self._count("failed", len(batch))
            with self._cond:
                self._in_flight = 0
                self._cond.notify_all()

    def _deliver(self, batch: list[bytes]) -> bool:
        """Posts until the server has judged the batch (True), or close() gave up (False)."""
        attempt = errors = 0
        while not self._abandon.is_set():
            try:
                reply = self._post(batch)
            except TransportError as error:
                delay = retry.backoff(attempt, self.backoff_base, self.max_backoff)
                logger.info("denoiseflow: dashboard unreachable (%s); retrying in %.1fs", error, delay)
            else:
                if reply.status == 207:
                    self._settle(batch, reply)
                    return True
                if reply.status == 413 and len(batch) > 1:
                    half = len(batch) // 2
                    for part in (batch[:half], batch[half:]):
                        if not self._deliver(part):
                            self._count("dropped", len(part))
                    return True
                if reply.status in retry.RETRY_LATER:
                    delay = retry.retry_after(reply.header("Retry-After"))
                    if delay is None:
                        delay = retry.backoff(attempt, self.backoff_base, self.max_backoff)
                elif reply.status >= 500:
                    errors += 1
                    if errors >= self.max_attempts_on_error:
                        logger.error("denoiseflow: %d events failed after %d server errors (%d)",
                                     len(batch), errors, reply.status)
                        self._count("failed", len(batch))
                        return True
                    delay = retry.backoff(attempt, self.backoff_base, self.max_backoff)
                else:
                    # 400/401/403/413: resending the same request cannot succeed.
                    logger.error("denoiseflow: the dashboard refused %d events (%d): %s",
                                 len(batch), reply.status, reply.body[:300].decode(errors="replace"))
                    self._count("rejected", len(batch))
                    return True
            attempt += 1
            self._count("retries")
            self._abandon.wait(delay)
        return False

    def _post(self, batch: list[bytes]):
        body = b'{"batch":[' + b",".join(batch) + b"]}"
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}",
                   "User-Agent": USER_AGENT}
        if len(body) > GZIP_ABOVE_BYTES:
            body = gzip.compress(body, compresslevel=5)
            headers["Content-Encoding"] = "gzip"
        return self.transport.post(self.endpoint, body, headers)

    def _settle(self, batch: list[bytes], reply) -> None:
        try:
            result = json.loads(reply.body)
            errors = result.get("errors") or []
        except (ValueError, AttributeError):
            errors = []
        for error in errors[:5]:
            logger.warning("denoiseflow: event %s refused: %s", error.get("id"), error.get("message"))
        with self._cond:
            self._counts["rejected"] += len(errors)
            self._counts["sent"] += len(batch) - len(errors)


def _close_at_exit(ref) -> None:
    recorder = ref()
    if recorder is not None and recorder._thread is not None:
        recorder.close(timeout=float(os.environ.get("DENOISE_EXIT_FLUSH_SECONDS", "2")))


# -- a process-wide default recorder, configured once -------------------------

_default: Recorder | None = None
_default_lock = threading.Lock()


def configure(url: str | None = None, api_key: str | None = None, **options) -> Recorder:
    """Sets the recorder the module-level functions use (default: from the
    DENOISE_URL and DENOISE_API_KEY environment variables)."""
    global _default
    with _default_lock:
        previous, _default = _default, Recorder(url, api_key, **options)
    if previous is not None:
        previous.close(timeout=1.0)
    return _default


def get_recorder() -> Recorder:
    global _default
    with _default_lock:
        if _default is None:
            _default = Recorder()
        return _default


def record(trace_id: str, agent_id: str, content=None, **fields) -> NodeRef:
    return get_recorder().record(trace_id, agent_id, content, **fields)


def fuse(node, decision, reason: str = "", threshold: float | None = None, **fields) -> None:
    get_recorder().fuse(node, decision, reason, threshold, **fields)


def review(trace_id: str, verdict: str, product_id=None, comment: str = "", timestamp=None) -> None:
    get_recorder().review(trace_id, verdict, product_id, comment, timestamp)


def flush(timeout: float | None = None) -> bool:
    return get_recorder().flush(timeout)

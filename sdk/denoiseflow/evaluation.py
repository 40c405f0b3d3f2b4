"""Evaluation runs from the agent side: run a task over a truth set, each case
in its own recorded trace, and let the dashboard judge the answers.

    import denoiseflow as df
    df.configure("http://127.0.0.1:8000", api_key="dd_...")

    def answer(question):
        case = df.current_case()        # item id, trace id, input node
        final = case.record("answer_agent", "42", source_type="final_answer", confidence=0.9)
        return df.Answer(42, escalated=False, node=final)   # or just: return 42

    summary = df.evaluate("ticket-stats", answer, name="prompt-v8")
    print(summary["accuracy"])

Each case runs inside trace `eval-<run>-<item>`, in the `evaluation`
environment: an input node is recorded first (the task's nodes can name it as
their parent), and unless the task names its own final node an answer node is
recorded after it, so every result opens onto a provenance DAG on the
dashboard. The summary's results carry each case's `cost_usd` (its trace's
nodes), and the run its `cost_usd`, `cost_per_passed` and `p95_latency_ms`.
Standard library only.
"""

import contextvars
import json
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from denoiseflow.recorder import NodeRef, Recorder, get_recorder
from denoiseflow.transport import HttpTransport, TransportError
from denoiseflow.version import USER_AGENT

AGENT_ID = "evaluation"
# The environment of every case's trace: evaluation traffic never moves production's figures.
ENVIRONMENT = "evaluation"
MAX_RESULTS_PER_CALL = 1000


class EvaluationError(Exception):
    """The dashboard refused a call of the evaluation, or could not be reached."""


@dataclass(frozen=True)
class Case:
    """The case a task is running, from `current_case()`."""

    run_id: int
    item_id: str
    trace_id: str
    input: Any
    tags: tuple = ()
    input_node: NodeRef | None = None
    recorder: Recorder | None = None

    def record(self, agent_id: str, content=None, **fields) -> NodeRef:
        """Records a node of this case's trace (consuming the input node unless
        `parent_ids` says otherwise), through the evaluation's recorder."""
        fields.setdefault("parent_ids", [self.input_node] if self.input_node else [])
        fields.setdefault("environment", ENVIRONMENT)
        return (self.recorder or get_recorder()).record(self.trace_id, agent_id, content, **fields)


@dataclass(frozen=True)
class Answer:
    """What a task may return instead of the bare answer: the answer, whether a
    person had to step in, the node that holds the final answer, and what the
    case took (`latency_ms`; default: the task call's wall time), for a task
    that knows better than the clock: a replay or a simulation that records
    its steps' `duration_ms` without spending them."""

    actual: Any
    escalated: bool = False
    node: NodeRef | str | None = None
    latency_ms: float | None = None


_current: contextvars.ContextVar[Case | None] = contextvars.ContextVar("denoiseflow_case", default=None)


def current_case() -> Case | None:
    return _current.get()


class Client:
    """The few JSON calls of the evaluation API, over the recorder's URL and key."""

    def __init__(self, url: str, api_key: str, timeout: float = 30.0):
        self.url, self.api_key = url.rstrip("/"), api_key
        self.transport = HttpTransport(timeout)

    def call(self, method: str, path: str, body=None, query: dict | None = None):
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json",
                   "User-Agent": USER_AGENT}
        data = None
        if body is not None:
            data = json.dumps(body, default=str).encode()
            headers["Content-Type"] = "application/json"
        try:
            reply = self.transport.request(method, url, data, headers)
        except TransportError as error:
            raise EvaluationError(f"{method} {path}: the dashboard could not be reached ({error})") from None
        try:
            answer = json.loads(reply.body) if reply.body else None
        except ValueError:
            answer = None
        if reply.status >= 400 and reply.status != 207:
            message = answer.get("error") if isinstance(answer, dict) else reply.body[:200].decode(errors="replace")
            raise EvaluationError(f"{method} {path}: {reply.status} {message}")
        return answer


def _json_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _run_case(recorder: Recorder, run_id: int, item: dict, task) -> dict:
    trace_id = f"eval-{run_id}-{item['id']}"
    input_node = recorder.record(
        trace_id, AGENT_ID, _json_text(item.get("input")), step="eval_input", source_type="user_input",
        product_id=f"{trace_id}:input", event_id=f"node:{trace_id}:input", metadata={"eval_item": item["id"]},
        environment=ENVIRONMENT,
    )
    case = Case(run_id, item["id"], trace_id, item.get("input"), tuple(item.get("tags") or ()), input_node, recorder)
    token = _current.set(case)
    started = time.perf_counter()
    error = ""
    try:
        outcome = task(item.get("input"))
    except Exception as exc:  # a failing case is a failed result, not a failed run
        outcome, error = None, f"{type(exc).__name__}: {exc}"
    finally:
        latency_ms = (time.perf_counter() - started) * 1000
        _current.reset(token)
    answer = outcome if isinstance(outcome, Answer) else Answer(outcome)
    if answer.latency_ms is not None:
        latency_ms = float(answer.latency_ms)
    node = answer.node
    if node is None:
        node = recorder.record(
            trace_id, AGENT_ID, error or _json_text(answer.actual), step="eval_answer", source_type="final_answer",
            parent_ids=[input_node], product_id=f"{trace_id}:answer", event_id=f"node:{trace_id}:answer",
            status="error" if error else None, environment=ENVIRONMENT,
        )
    result = {"item_id": item["id"], "actual": answer.actual, "trace_id": trace_id, "product_id": str(node),
              "latency_ms": round(latency_ms, 3), "escalated": bool(answer.escalated)}
    if error:
        result["error"] = error
    return result


def evaluate(dataset: str, task, name: str = "", *, concurrency: int = 4, only=None, dataset_version: int | None = None,
             metadata: dict | None = None, recorder: Recorder | None = None, flush_timeout: float = 60.0) -> dict:
    """Runs `task(input)` over the items of `dataset` (its newest version unless
    `dataset_version` is given; only the items `only` names, for a single-case
    debug run), posts the answers, finishes the run and returns its summary
    (the `GET /api/v1/runs/{id}` document)."""
    recorder = recorder or get_recorder()
    client = Client(recorder.url, recorder.api_key)
    query = {"version": dataset_version} if dataset_version is not None else None
    found = client.call("GET", f"/api/v1/datasets/{urllib.parse.quote(dataset, safe='')}", query=query)
    items = found["items"]
    if only is not None:
        wanted = [only] if isinstance(only, str) else list(only)
        known = {item["id"] for item in items}
        unknown = [item_id for item_id in wanted if item_id not in known]
        if unknown:
            raise EvaluationError(f"not in {dataset} version {found['version']}: {', '.join(unknown)}")
        items = [item for item in items if item["id"] in set(wanted)]
    run_metadata = {**(metadata or {}), **({"only": [item["id"] for item in items]} if only is not None else {})}
    run = client.call("POST", "/api/v1/runs", {"dataset": dataset, "name": name, "dataset_version": found["version"],
                                                "metadata": run_metadata})
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="denoiseflow-eval") as pool:
        results = list(pool.map(lambda item: _run_case(recorder, run["id"], item, task), items))
    # The traces are on the dashboard before the run says it is finished.
    recorder.flush(timeout=flush_timeout)
    for start in range(0, len(results), MAX_RESULTS_PER_CALL):
        answers = client.call("POST", f"/api/v1/runs/{run['id']}/results",
                              {"results": results[start: start + MAX_RESULTS_PER_CALL]})
        refused = [a for a in answers if a.get("status", 0) >= 400]
        if refused:
            raise EvaluationError(f"{len(refused)} results refused, first: {refused[0].get('message')}")
    return client.call("POST", f"/api/v1/runs/{run['id']}/finish")


def previous_run(dataset: str, run_id: int, recorder: Recorder | None = None) -> dict | None:
    """The newest finished run of `dataset` before `run_id`, with its figures
    (the `GET /api/v1/runs/{id}` document: cost per passed case included)."""
    recorder = recorder or get_recorder()
    client = Client(recorder.url, recorder.api_key)
    for run in client.call("GET", "/api/v1/runs", query={"dataset": dataset, "limit": 100}):
        if run["id"] != run_id and run["status"] == "finished" and run["id"] < run_id:
            return client.call("GET", f"/api/v1/runs/{run['id']}")
    return None

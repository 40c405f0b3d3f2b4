"""Timed steps: a node recorded with the wall time of the work that made it.

    with df.step(trace_id, "retrieval_agent", step="retrieval", source_type="retrieval") as s:
        docs = search(question)
        s.content = docs
        s.confidence = best_score(docs)
    answer_parents = [s.node]

    @df.step("reasoning_agent", step="answer")          # trace: the current evaluation case's
    def answer(question):
        return llm.invoke(question)                      # content, model and usage from the response

`s.node` (a `NodeRef`) is known from the start, so work inside the block can
already name it. On leaving the block the node is recorded with
`duration_ms`; an exception records it with `status: "error"` and the error as
its content, and is raised on. `s.llm(response)` takes the model and token
usage of a model response (see `denoiseflow.costs`); as a decorator the
function's return value is the content, and read as a response too.
"""

import functools
import time

from denoiseflow.costs import llm_fields
from denoiseflow.evaluation import current_case
from denoiseflow.recorder import NodeRef, get_recorder, new_product_id


class Step:
    def __init__(self, trace_id: str | None, agent_id: str, *, recorder=None, **fields):
        self.trace_id, self.agent_id = trace_id, agent_id
        self.recorder = recorder
        self.fields = fields
        self.content = fields.pop("content", None)
        self.confidence = fields.pop("confidence", None)
        self.node: NodeRef | None = None
        self.duration_ms: float | None = None
        self._started = None

    # -- what the block sets ---------------------------------------------------

    def llm(self, response) -> None:
        """Takes the model and token usage of a model response for this node."""
        self.fields.update(llm_fields(response))

    def set(self, **fields) -> None:
        """Any other `record()` field: metrics, metadata, fuse, cost_usd…"""
        self.fields.update(fields)

    # -- the context manager ---------------------------------------------------

    def __enter__(self) -> "Step":
        trace_id = self.trace_id or _current_trace()
        product_id = (self.fields.pop("product_id", None)
                      or new_product_id(trace_id, self.fields.get("step") or self.agent_id))
        self.node = NodeRef(trace_id, product_id, self.agent_id)
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        self.duration_ms = round((time.perf_counter() - self._started) * 1000, 3)
        fields = dict(self.fields)
        if error is not None:
            fields["status"] = "error"
            content = f"{kind.__name__}: {error}"
        else:
            content = self.content
        recorder, case = self.recorder, current_case()
        if case is not None and case.trace_id == self.node.trace_id:
            # A step of an evaluation case: through its recorder, consuming its input unless told otherwise.
            recorder = recorder or case.recorder
            if "parent_ids" not in fields and case.input_node is not None:
                fields["parent_ids"] = [case.input_node]
        recorder = recorder or get_recorder()
        recorder.record(self.node.trace_id, self.agent_id, content, confidence=self.confidence,
                        duration_ms=self.duration_ms, product_id=self.node.product_id, **fields)
        return False

    # -- the decorator ---------------------------------------------------------

    def __call__(self, function):
        trace_id, agent_id, recorder, fields = self.trace_id, self.agent_id, self.recorder, dict(self.fields)

        @functools.wraps(function)
        def timed(*args, **kwargs):
            with Step(trace_id, agent_id, recorder=recorder, **fields) as current:
                result = function(*args, **kwargs)
                current.content = _text_of(result)
                implied = llm_fields(result)
                for name, value in implied.items():
                    current.fields.setdefault(name, value)
            return result

        return timed


def step(trace_id_or_agent: str, agent_id: str | None = None, **fields) -> Step:
    """`step(trace_id, agent_id, ...)`, or `step(agent_id, ...)` inside an
    evaluation case (the trace is the case's)."""
    if agent_id is None:
        return Step(None, trace_id_or_agent, **fields)
    return Step(trace_id_or_agent, agent_id, **fields)


def _current_trace() -> str:
    case = current_case()
    if case is None:
        raise ValueError("step(agent_id) without a trace id runs only inside an evaluation case; "
                         "pass step(trace_id, agent_id, ...)")
    return case.trace_id


def _text_of(result):
    """A response's text when it is a model response (LangChain's `content`,
    OpenAI's first choice), else the value itself."""
    content = getattr(result, "content", None)
    if isinstance(content, str):
        return content
    choices = getattr(result, "choices", None)
    if isinstance(choices, list) and choices:
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if isinstance(text, str):
            return text
    return result

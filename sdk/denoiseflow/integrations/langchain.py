"""A LangChain callback handler: chain, LLM, tool and retriever runs become nodes.

Optional extra: `pip install 'denoiseflow[langchain]'` (langchain-core).

Provenance follows the data, using the run tree LangChain reports through
`parent_run_id`: a run that contains other runs produced its output from them,
so it lists as parents its child runs that no sibling consumed; a run consumed
the output of the sibling that finished just before it started (a sequence
step), or else what its enclosing run consumed (the first step, or a branch of
a parallel map, which LangChain tags `map:key:…`). A failed run is recorded
with `status: error`.

    handler = DenoiseCallbackHandler(recorder, trace_id="ticket-42")
    chain.invoke(inputs, config={"callbacks": [handler]})

Per-run hints go in LangChain's run metadata: `denoise_agent_id`, `denoise_step`,
`denoise_source_type`, `denoise_confidence` (`denoise_keep: True` keeps a run
that would be skipped). LLM runs whose generations carry token log
probabilities get exp(mean log probability) as their confidence. Every node
carries its run's `duration_ms`; LLM runs their `model` and `usage`
(`llm_output`'s token usage, else the messages' `usage_metadata`).

Pure plumbing is skipped by default, so the DAG shows agent steps rather than
framework internals: chain runs under LangChain's own names (`RunnableLambda`
for an anonymous lambda, `RunnablePassthrough`, `RunnableParallel<…>`, nested
`RunnableSequence`s, output parsers, prompt templates) and chain runs that
return their input unchanged. A failed run is never skipped; a skipped run's
consumers are linked to what it carried, so provenance stays whole. `keep_plumbing=True` records every run.
"""

import itertools
import math
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "denoiseflow.integrations.langchain needs langchain-core: pip install 'denoiseflow[langchain]'"
    ) from error

from denoiseflow.recorder import Recorder, get_recorder

SOURCE_TYPES = {"llm": "reasoning", "tool": "tool_result", "retriever": "retrieval", "chain": ""}
MAX_TEXT = 20_000
PLUMBING_PREFIXES = ("Runnable",)
PLUMBING_SUFFIXES = ("OutputParser", "Parser", "PromptTemplate")


@dataclass
class Output:
    """What a finished child run handed on: its own node, or, skipped, what it carried."""

    order: int
    ids: tuple[str, ...]
    consumed: bool = False  # a later sibling started from it


@dataclass
class Run:
    kind: str
    name: str
    parent: UUID | None
    trace_id: str
    inputs: object
    started: int  # position in the handler's event order
    started_at: datetime
    metadata: dict
    inherited: list[str]  # what this run consumed, before any child output
    finished_children: list[Output] = field(default_factory=list)


def text(value) -> str:
    return str(value)[:MAX_TEXT]


def name_of(serialized: dict | None, kwargs: dict, default: str) -> str:
    if kwargs.get("name"):
        return kwargs["name"]
    serialized = serialized or {}
    if serialized.get("name"):
        return serialized["name"]
    ids = serialized.get("id") or []
    return ids[-1] if ids else default


def logprob_confidence(response) -> float | None:
    """exp(mean token log probability) of the first generation, when reported."""
    try:
        info = response.generations[0][0].generation_info or {}
    except (AttributeError, IndexError):
        return None
    logprobs = info.get("logprobs") or {}
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
    values = [t["logprob"] for t in tokens or [] if isinstance(t, dict) and isinstance(t.get("logprob"), (int, float))]
    return math.exp(sum(values) / len(values)) if values else None


def llm_text(response) -> str:
    try:
        return "\n".join(g.text for g in response.generations[0])
    except (AttributeError, IndexError, TypeError):
        return text(response)


class DenoiseCallbackHandler(BaseCallbackHandler):
    # A failure to record must never fail the chain.
    raise_error = False

    def __init__(self, recorder: Recorder | None = None, *, trace_id: str | None = None, agent_prefix: str = "",
                 keep_plumbing: bool = False):
        self.recorder = recorder or get_recorder()
        self.trace_id = trace_id
        self.agent_prefix = agent_prefix
        self.keep_plumbing = keep_plumbing
        self._runs: dict[UUID, Run] = {}
        self._order = itertools.count()
        self._lock = threading.Lock()

    # -- starts --------------------------------------------------------------

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs):
        self._start("chain", run_id, parent_run_id, name_of(serialized, kwargs, "chain"), inputs, kwargs)

    def on_llm_start(self, serialized, prompts, *, run_id, parent_run_id=None, **kwargs):
        self._start("llm", run_id, parent_run_id, name_of(serialized, kwargs, "llm"), prompts, kwargs)

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, **kwargs):
        self._start("llm", run_id, parent_run_id, name_of(serialized, kwargs, "chat_model"), messages, kwargs)

    def on_tool_start(self, serialized, input_str, *, run_id, parent_run_id=None, **kwargs):
        self._start("tool", run_id, parent_run_id, name_of(serialized, kwargs, "tool"), input_str, kwargs)

    def on_retriever_start(self, serialized, query, *, run_id, parent_run_id=None, **kwargs):
        self._start("retriever", run_id, parent_run_id, name_of(serialized, kwargs, "retriever"), query, kwargs)

    # -- ends ----------------------------------------------------------------

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        self._end(run_id, text(outputs))

    def on_llm_end(self, response, *, run_id, **kwargs):
        self._end(run_id, llm_text(response), confidence=logprob_confidence(response), llm=response)

    def on_tool_end(self, output, *, run_id, **kwargs):
        self._end(run_id, text(output))

    def on_retriever_end(self, documents, *, run_id, **kwargs):
        self._end(run_id, text([getattr(d, "page_content", d) for d in documents]))

    def on_chain_error(self, error, *, run_id, **kwargs):
        self._end(run_id, f"{type(error).__name__}: {error}", status="error")

    on_llm_error = on_tool_error = on_retriever_error = on_chain_error

    # -- bookkeeping -----------------------------------------------------------

    def _start(self, kind, run_id, parent_run_id, name, inputs, options):
        branch = any(str(tag).startswith("map:key:") for tag in options.get("tags") or ())
        with self._lock:
            parent = self._runs.get(parent_run_id) if parent_run_id else None
            order = next(self._order)
            if parent is None:
                trace_id, inherited = self.trace_id or str(run_id), []
            else:
                trace_id = parent.trace_id
                before = [output for output in parent.finished_children if output.order < order]
                if before and not branch:
                    before[-1].consumed = True
                    inherited = list(before[-1].ids)
                else:
                    inherited = list(parent.inherited)
            self._runs[run_id] = Run(kind, name, parent_run_id, trace_id, inputs, order, datetime.now(UTC),
                                     dict(options.get("metadata") or {}), inherited)

    def _end(self, run_id, output: str, *, status: str | None = None, confidence: float | None = None, llm=None):
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            product_id = str(run_id)
            own = [pid for handed in run.finished_children if not handed.consumed for pid in handed.ids]
            parents = list(dict.fromkeys(own or run.inherited))
            parent = self._runs.get(run.parent) if run.parent else None
            is_root = run.parent is None or parent is None
            skipped = not is_root and status is None and self.is_plumbing(run, output)
            if parent is not None:
                parent.finished_children.append(Output(next(self._order), tuple(parents) if skipped else (product_id,)))
        if skipped:
            return
        hints = run.metadata
        self.recorder.record(
            run.trace_id,
            hints.get("denoise_agent_id") or f"{self.agent_prefix}{run.name}",
            output,
            step=hints.get("denoise_step") or run.name,
            source_type=hints.get("denoise_source_type") or ("final_answer" if is_root else SOURCE_TYPES[run.kind]),
            parent_ids=parents,
            confidence=hints.get("denoise_confidence", confidence),
            status=status,
            raw_input=text(run.inputs),
            metadata={"langchain_run_type": run.kind},
            duration_ms=round((datetime.now(UTC) - run.started_at).total_seconds() * 1000, 3),
            llm=llm,  # an LLM run's model and token usage (llm_output, else its messages' usage_metadata)
            product_id=product_id,
        )

    def is_plumbing(self, run: Run, output: str) -> bool:
        if self.keep_plumbing or run.kind != "chain" or run.metadata.get("denoise_keep"):
            return False
        if run.name.startswith(PLUMBING_PREFIXES) or run.name.endswith(PLUMBING_SUFFIXES):
            return True
        return output == text(run.inputs)  # handed its input on unchanged

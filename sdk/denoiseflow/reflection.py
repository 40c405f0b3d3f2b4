"""The reflection loop: draft, critique, revise — with a stop.

`generate()` makes the first draft, `critique(draft)` finds its faults,
`revise(draft, critique)` makes the next draft. The loop stops at the round
limit (`max_rounds` drafts in all), when two consecutive drafts are at least
`converged` similar (the model keeps producing the same answer, so another
round buys nothing), or when the critique finds nothing (None or empty).

With a `trace_id`, each draft is recorded as a node (`round` = its number)
whose parents are the draft it revised and the critique it answered; each
critique is a `verification` node on its draft. The DAG shows the loop.

What it cost: each call is timed (the node's `duration_ms`), and a call that
returns `df.Priced` says its model, usage or cost. Every critique and every
draft after the first is the loop's expensive path:
`metadata.expensive_path = "reflection_round"`, `expensive_path_of` = the
first draft's product id.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from denoiseflow.costs import REFLECTION_ROUND, marked, unwrap
from denoiseflow.recorder import NodeRef, get_recorder
from denoiseflow.redundancy import as_text
from denoiseflow.similarity import text_similarity

CONVERGED, ROUND_LIMIT, NO_CRITIQUE = "converged", "round_limit", "no_critique"


@dataclass
class Reflection:
    answer: Any  # the last draft
    drafts: list
    critiques: list
    stopped: str  # "converged", "round_limit" or "no_critique"
    similarities: list[float] = field(default_factory=list)  # of each draft to the one before
    nodes: list[NodeRef] = field(default_factory=list)  # the drafts' nodes, when recorded

    @property
    def rounds(self) -> int:
        return len(self.drafts)

    @property
    def converged(self) -> bool:
        return self.stopped == CONVERGED


class Loop:
    """Records the loop's nodes as it goes, when there is a trace to record to."""

    def __init__(self, trace_id, agent_id, recorder, parent_ids, step):
        self.trace_id, self.agent_id, self.step = trace_id, agent_id, step
        self.recorder = (recorder or get_recorder()) if trace_id else None
        self.parents = list(parent_ids)
        self.drafts: list[NodeRef] = []

    def draft(self, draft, round_: int, similarity: float | None, critique_node, stopped: str | None,
              call: dict | None = None):
        if self.recorder is None:
            return
        parents = [self.drafts[-1], critique_node] if self.drafts else self.parents
        metrics = {"draft_similarity": round(similarity, 4)} if similarity is not None else None
        metadata = self.marks({"reflection_stopped": stopped} if stopped else None)
        self.drafts.append(self.recorder.record(
            self.trace_id, self.agent_id, as_text(draft), step=self.step, source_type="reasoning",
            parent_ids=[p for p in parents if p is not None], round=round_, metrics=metrics, metadata=metadata,
            **(call or {})))

    def critique(self, note, round_: int, stopped: str | None, call: dict | None = None):
        if self.recorder is None:
            return None
        return self.recorder.record(
            self.trace_id, f"{self.agent_id}_critic", as_text(note) or "", step=f"{self.step}_critique",
            source_type="verification", parent_ids=self.drafts[-1:], round=round_,
            metadata=self.marks({"reflection_stopped": stopped} if stopped else None), **(call or {}))

    def marks(self, metadata: dict | None) -> dict | None:
        """After the first draft, everything the loop records is its expensive path."""
        if not self.drafts:
            return metadata
        return marked(metadata, REFLECTION_ROUND, self.drafts[0])


def timed_call(function, *args) -> tuple:
    """(the call's value, {"duration_ms", and what a `Priced` value said})."""
    started = time.perf_counter()
    value, fields = unwrap(function(*args))
    return value, {"duration_ms": round((time.perf_counter() - started) * 1000, 3), **fields}


def reflect(
    generate: Callable[[], Any],
    critique: Callable[[Any], Any],
    revise: Callable[[Any, Any], Any],
    max_rounds: int = 3,
    converged: float = 0.95,
    *,
    similarity: Callable[[Any, Any], float] = text_similarity,
    trace_id: str | None = None,
    agent_id: str = "reflection",
    step: str = "draft",
    parent_ids: Sequence = (),
    recorder=None,
) -> Reflection:
    """Runs the loop; exceptions from the three callables propagate (they are
    the agent's own). `similarity(a, b) -> [0, 1]` judges convergence
    (default: text similarity over canonical forms, so equal JSON is equal)."""
    if max_rounds < 1:
        raise ValueError("max_rounds must be at least 1")
    loop = Loop(trace_id, agent_id, recorder, parent_ids, step)
    draft, call = timed_call(generate)
    drafts, critiques, similarities = [draft], [], []
    stopped = ROUND_LIMIT if max_rounds == 1 else None
    loop.draft(draft, 1, None, None, stopped, call)
    while stopped is None:
        note, call = timed_call(critique, draft)
        critiques.append(note)
        if note is None or (isinstance(note, str) and not note.strip()):
            stopped = NO_CRITIQUE
            loop.critique(note, len(drafts), stopped, call)
            break
        critique_node = loop.critique(note, len(drafts), None, call)
        revised, call = timed_call(revise, draft, note)
        likeness = similarity(draft, revised)
        similarities.append(likeness)
        drafts.append(revised)
        if likeness >= converged:
            stopped = CONVERGED
        elif len(drafts) >= max_rounds:
            stopped = ROUND_LIMIT
        loop.draft(revised, len(drafts), likeness, critique_node, stopped, call)
        draft = revised
    return Reflection(draft, drafts, critiques, stopped, similarities, loop.drafts)

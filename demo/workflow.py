"""The simulated customer-ticket workflow, instrumented with the denoiseflow SDK.

Intent (redundant votes) → entity extraction → order lookup → retrieval →
reasoning → verification, with a backflow to a second retrieval and reasoning
round when verification fails, then summary and final answer. Every consumer
gates what it consumes through a confidence fuse and drops blocked inputs,
which is the reliability practice the dashboard observes: its normal traffic
consumes nothing fused and leaves no node unlinked, so the DAG health check
finds only the faults `planted_faults` plants. Some answers are
reviewed against the ground truth the fake LLM keeps.
"""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from demo.fake_llm import Artifact, FakeLLM
from demo.step_costs import step_fields
from denoiseflow import ConfidenceFuse, NodeRef, Recorder, Thresholds, run_redundant

FUSE = ConfidenceFuse(
    by_agent_type={"retrieval": Thresholds(accept=0.75, block=0.5), "entity_extractor": Thresholds(accept=0.8, block=0.55)}
)
TEMPERATURES = (0.2, 0.4, 0.6, 0.8, 1.0)
TOOL_INTENTS = {"refund_status", "delivery_delay", "damaged_item", "double_charge"}


@dataclass(frozen=True)
class Ticket:
    trace_id: str
    started_at: datetime
    noise: float
    drift: float
    # QA reviews every answer that went out, and spot-checks some extractions:
    # enough verdicts for Calibration's figures to hold from one load to the next.
    review_share: float = 1.0
    spot_check_share: float = 0.08


@dataclass
class Outcome:
    final: NodeRef
    correct: bool
    rounds: int


class TraceWriter:
    """Records one trace's nodes, fuse decisions and reviews with ids derived
    from the trace, so recording the same ticket twice stores it once."""

    def __init__(self, recorder: Recorder, trace_id: str, started_at: datetime, rng: random.Random):
        self.recorder, self.trace_id, self.rng = recorder, trace_id, rng
        self.clock = started_at

    def tick(self, low: float = 0.2, high: float = 1.5) -> datetime:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return self.clock

    def node(self, name: str, agent_id: str, content, *, parents=(), seconds=(0.2, 1.5), **fields) -> NodeRef:
        product_id = f"{self.trace_id}:{name}"
        # What the step took and cost (demo.step_costs); a second round serves the first round's reasoning.
        costs = step_fields(self.trace_id, name, fields.get("step", ""), fields.get("round"),
                            f"{self.trace_id}:reasoning:r1", fields.get("metadata"))
        merged = {**costs, **fields}
        if "metadata" in costs:  # the node's own metadata with the marks
            merged["metadata"] = costs["metadata"]
        return self.recorder.record(self.trace_id, agent_id, content, parent_ids=list(parents), product_id=product_id,
                                    event_id=f"node:{product_id}", timestamp=self.tick(*seconds), **merged)

    def consume(self, consumer: str, inputs, fuse: ConfidenceFuse = FUSE) -> list[NodeRef]:
        """The consumer's fuse over its inputs: blocked ones are left out."""
        kept = []
        for ref in inputs:
            if ref is None:
                continue
            if ref.confidence is None:
                kept.append(ref)
                continue
            verdict = fuse.gate(ref, by_agent_id=consumer, recorder=self.recorder, timestamp=self.clock,
                                event_id=f"fuse:{consumer}:{ref.product_id}")
            if not verdict.blocked:
                kept.append(ref)
        return kept

    def review(self, final: NodeRef, correct: bool, comment: str) -> None:
        self.recorder.review(self.trace_id, "correct" if correct else "incorrect", final, comment,
                             timestamp=self.tick(60, 600), event_id=f"review:{self.trace_id}")


def run_ticket(recorder: Recorder, ticket: Ticket) -> Outcome:
    llm = FakeLLM(ticket.trace_id, ticket.noise)
    rng = random.Random(f"{ticket.trace_id}:flow")
    w = TraceWriter(recorder, ticket.trace_id, ticket.started_at, rng)

    question = w.node("input", "gateway", llm.ticket, step="user_input", source_type="user_input", seconds=(0, 0))

    vote = run_redundant(llm.classify, n=len(TEMPERATURES), agreement=0.6, fallback=lambda _: "needs_human",
                         variants=lambda i: {"temperature": TEMPERATURES[i], "sample": i})
    intent_ok = vote.agreed and vote.answer == llm.intent
    intent = w.node("intent", "intent_classifier_v3", step="intent", source_type="reasoning", parents=[question],
                    round=1, raw_input=llm.ticket, **vote.node_fields())

    extracted = llm.extract()
    entities = w.node("entities", "entity_extractor_v2", extracted.content, step="entity_extraction",
                      source_type="reasoning", parents=[question], round=1,
                      confidence=None if extracted.failed else extracted.confidence,
                      status="error" if extracted.failed else None,
                      metrics={} if extracted.failed else {"self_consistency_score": round(extracted.confidence, 3)})
    entities = None if extracted.failed else entities

    lookup = None
    if llm.intent in TOOL_INTENTS and entities is not None:
        result = llm.tool()
        # With the extraction blocked, the lookup works from the ticket text itself.
        ref = w.node("order_lookup", "order_api", result.content, step="order_lookup", source_type="tool_result",
                     parents=w.consume("order_api", [entities]) or [question], status="error" if result.failed else None,
                     metrics={"tool_reliability": 0.0 if result.failed else 0.99})
        lookup = None if result.failed else ref

    feedback: list[NodeRef] = []
    rounds = 0
    for round_ in (1, 2):
        rounds = round_
        # The retriever always reads the ticket: with intent and entities both
        # blocked it still searches from the question, never from nothing.
        basis = (w.consume("retrieval_agent_v2", [intent, entities]) + feedback) or [question]
        fragments = llm.retrieve(3 if round_ == 1 else 2, ticket.drift)
        refs = [
            w.node(f"fragment{k}:r{round_}", "retrieval_agent_v2", fragment.content, step="retrieval",
                   source_type="retrieval", parents=basis, round=round_, confidence=fragment.confidence,
                   metrics={"retrieval_similarity": round(fragment.confidence, 3)}, seconds=(0.05, 0.3))
            for k, fragment in enumerate(fragments, start=1)
        ]
        used = w.consume("reasoning_agent", [intent, entities, lookup, *refs])
        used_fragments = [(r, f) for r, f in zip(refs, fragments) if r in used]
        support = (sum(r.confidence for r, _ in used_fragments) / len(used_fragments)) if used_fragments else 0.2
        inputs_correct = (
            intent_ok and entities is not None and extracted.correct
            and any(f.correct for _, f in used_fragments)
            and not any(not f.correct and r.confidence >= 0.75 for r, f in used_fragments)
        )
        conclusion = llm.reason(inputs_correct, support, round_)
        reasoning = w.node(f"reasoning:r{round_}", "reasoning_agent", conclusion.content, step="reasoning",
                           source_type="reasoning", parents=used or [question], round=round_,
                           confidence=conclusion.confidence,
                           seconds=(1.0, 4.0))
        check = llm.verify(conclusion)
        if not w.consume("verifier", [reasoning]):
            # The verifier's own fuse blocked the conclusion: it checks nothing it
            # would not use, and the ticket goes round again from the question.
            verification, feedback = None, []
            continue
        verification = w.node(f"verification:r{round_}", "verifier", check.content, step="verification",
                              source_type="verification", parents=[reasoning], round=round_,
                              confidence=check.confidence)
        if check.correct:
            break
        feedback = [verification]  # the backflow: round 2 retrieves with the verifier's objection

    trusted = w.consume("summarizer", [reasoning, verification])
    if reasoning in trusted:
        summary_artifact = llm.summarize(conclusion)
    else:
        # The fuse held: no answer built on a blocked conclusion; a person takes over.
        summary_artifact = Artifact("Summary: not enough trusted evidence; hand over to a human agent.", 0.9, True)
    # Handing over consumes nothing blocked: the summary then stands on the question alone.
    summary = w.node("summary", "summarizer", summary_artifact.content, step="summary", source_type="summary",
                     parents=trusted or [question], round=rounds, confidence=summary_artifact.confidence)
    answer = llm.answer(summary_artifact) if reasoning in trusted else Artifact(
        "Hello, a colleague will look into your request personally within one working day.", 0.9, True)
    final = w.node("final", "responder", answer.content, step="final_answer", source_type="final_answer",
                   parents=[summary], round=rounds, confidence=answer.confidence)
    if reasoning in trusted and rng.random() < ticket.review_share:
        w.review(final, answer.correct, "matches the order record" if answer.correct else
                 "answer contradicts the order record")
    if entities is not None and rng.random() < ticket.spot_check_share:
        # A spot check of the extraction itself: how the miscalibrated agent is caught.
        w.recorder.review(w.trace_id, "correct" if extracted.correct else "incorrect", entities.product_id,
                          "order id checked against the order record", timestamp=w.tick(60, 600),
                          event_id=f"review:{w.trace_id}:entities")
    return Outcome(final, answer.correct, rounds)

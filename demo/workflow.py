"""The simulated customer-ticket workflow, instrumented with the denoiseflow SDK.

Intent (redundant votes) → entity extraction → order lookup → retrieval →
reasoning → verification, with a backflow to a second retrieval and reasoning
round when verification fails, then summary and final answer. Every consumer
gates what it consumes through a confidence fuse whose thresholds come from the
project's central policy (the SDK's policy client, by ETag: `fuse`), and drops
blocked inputs; each retrieved fragment goes through `guard()`, so a fragment
the reasoning agent blocks is retrieved again with the fuse's reason, and a
person is called after repeated fuses. That is the reliability practice the
dashboard observes: the normal traffic consumes nothing fused and leaves no
node unlinked, so the DAG health check finds only the faults `planted_faults`
plants.

What the policy lets through is used, with care: a doubtful input (below the
project's high-uncertainty threshold, yet above the block threshold) may
mislead the step that uses it, and the answers it spoils are the ones "Why
answers go wrong" traces back to it. A stricter retrieval threshold blocks
those fragments, so the retriever's share of the wrong answers falls after
the demo's policy change (demo.policy_story). Some answers are reviewed
against the ground truth the fake LLM keeps.
"""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from demo.fake_llm import Artifact, FakeLLM
from demo.step_costs import step_fields
from denoiseflow import ConfidenceFuse, NodeRef, Output, Recorder, guard, run_redundant
from denoiseflow.ladder import ACCEPTED

TEMPERATURES = (0.2, 0.4, 0.6, 0.8, 1.0)
TOOL_INTENTS = {"refund_status", "delivery_delay", "damaged_item", "double_charge"}
# How often a wrong fragment that was only downweighted still misleads the reasoning that used it.
MISLED_BY_DOUBT = 0.2


@dataclass(frozen=True)
class Ticket:
    trace_id: str
    started_at: datetime
    noise: float
    drift: float
    # QA reviews every answer that went out, and spot-checks some extractions:
    # enough verdicts for Calibration's figures to hold from one load to the next.
    review_share: float = 1.0
    spot_check_share: float = 0.12
    # Support has judged what this ticket escalated (closing it); else it waits in the inbox.
    escalations_judged: bool = False


@dataclass
class Outcome:
    final: NodeRef
    correct: bool
    rounds: int


class TraceWriter:
    """Records one trace's nodes, fuse decisions and reviews with ids derived
    from the trace, so recording the same ticket twice stores it once (the
    attempts `guard` records carry its own ids: a ticket is recorded whole or
    not at all, history.fill skips the ones stored). `fuse` is the consumers'
    fuse: the policy client's in the workflow."""

    def __init__(self, recorder: Recorder, trace_id: str, started_at: datetime, rng: random.Random,
                 fuse: ConfidenceFuse, escalations_judged: bool = False):
        self.recorder, self.trace_id, self.rng, self.fuse = recorder, trace_id, rng, fuse
        self.clock = started_at
        self.escalations_judged = escalations_judged

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

    def consume(self, consumer: str, inputs) -> list[NodeRef]:
        """The consumer's fuse over its inputs: blocked ones are left out."""
        kept = []
        for ref in inputs:
            if ref is None:
                continue
            if ref.confidence is None:
                kept.append(ref)
                continue
            verdict = self.fuse.gate(ref, by_agent_id=consumer, recorder=self.recorder, timestamp=self.clock,
                                     event_id=f"fuse:{consumer}:{ref.product_id}")
            if not verdict.blocked:
                kept.append(ref)
        return kept

    def retrieved(self, name: str, fragment: Artifact, again, parents, round_: int) -> "Retrieved":
        """One fragment through `guard()`, judged by the reasoning agent's fuse:
        a blocked one is retrieved again (`again()`, the narrowed query the
        fuse's reason asks for) until the policy's retries run out or a person
        is called; what it took and cost is recorded per attempt."""
        made: list[Artifact] = []

        def produce(feedback):
            made.append(fragment if feedback is None else again())
            artifact = made[-1]
            costs = step_fields(self.trace_id, f"{name}:a{len(made)}", "retrieval")
            return Output(artifact.content, artifact.confidence,
                          metrics={"retrieval_similarity": round(artifact.confidence, 3)},
                          duration_ms=costs["duration_ms"], model=costs.get("model"), usage=costs.get("usage"))

        result = guard(produce, consumer="reasoning_agent", trace_id=self.trace_id, agent_id="retrieval_agent_v2",
                       step="retrieval", source_type="retrieval", parent_ids=parents, fuse=self.fuse, round=round_,
                       recorder=self.recorder, clock=lambda: self.tick(0.05, 0.3))
        if result.needs_person and self.escalations_judged:
            # Support judges the fragment the fuse held back; the verdict closes the escalation.
            self.recorder.review(self.trace_id, "correct" if made[-1].correct else "incorrect", result.node,
                                 "checked by support after escalation", timestamp=self.tick(120, 900),
                                 event_id=f"review:{result.node.product_id}")
        return Retrieved(result.node if result.ok else None, made[-1], result.outcome == ACCEPTED, result.needs_person)

    def review(self, final: NodeRef, correct: bool, comment: str) -> None:
        self.recorder.review(self.trace_id, "correct" if correct else "incorrect", final, comment,
                             timestamp=self.tick(60, 600), event_id=f"review:{self.trace_id}")


@dataclass(frozen=True)
class Retrieved:
    node: NodeRef | None  # None: fused for good, the reasoning never sees it
    artifact: Artifact
    accepted: bool  # else downweighted: used with care
    escalated: bool

    def misleads(self, rng: random.Random) -> bool:
        """A wrong fragment the reasoning used: taken as fact when the fuse
        accepted it, now and then when it was only downweighted."""
        return self.node is not None and not self.artifact.correct and (self.accepted or rng.random() < MISLED_BY_DOUBT)


def run_ticket(recorder: Recorder, ticket: Ticket, fuse: ConfidenceFuse) -> Outcome:
    llm = FakeLLM(ticket.trace_id, ticket.noise)
    rng = random.Random(f"{ticket.trace_id}:flow")
    w = TraceWriter(recorder, ticket.trace_id, ticket.started_at, rng, fuse, ticket.escalations_judged)

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
        found = []
        for k, fragment in enumerate(llm.retrieve(3 if round_ == 1 else 2, ticket.drift), start=1):
            found.append(w.retrieved(f"fragment{k}:r{round_}", fragment, lambda: llm.retrieve_again(ticket.drift),
                                     basis, round_))
            if found[-1].escalated:
                break  # a person was called on this search: the retriever stops here for the round
        usable = [r for r in found if r.node is not None]
        used = w.consume("reasoning_agent", [intent, entities, lookup]) + [r.node for r in usable]
        support = (sum(r.node.confidence for r in usable) / len(usable)) if usable else 0.2
        inputs_correct = (intent_ok and entities is not None and extracted.correct
                          and any(r.artifact.correct for r in usable))
        misled = any(r.misleads(rng) for r in usable)
        conclusion = llm.reason(inputs_correct and not misled, support, round_, fluent=misled)
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

"""A hand-built corpus whose root causes are known, for the aggregate's tests
(`GET /api/v1/root-causes`): one trace per case, each sent as an agent would,
some of it late (a cross-trace parent that arrives after its consumer, a
review replaced by a later one)."""

from datetime import timedelta

from tests.support.events import BASE_TIME, fuse_event, node_event

WINDOW = (BASE_TIME - timedelta(hours=1), BASE_TIME + timedelta(hours=1))


def iso(seconds: float) -> str:
    return (BASE_TIME + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def review(trace_id: str, verdict: str, seconds: float, product_id: str | None = None, tag: str = "") -> dict:
    body = {"trace_id": trace_id, "verdict": verdict}
    if product_id:
        body["product_id"] = product_id
    return {"id": f"review-{trace_id}-{verdict}-{seconds}{tag}", "type": "review", "timestamp": iso(seconds),
            "body": body}


def n(product_id, trace_id, agent_id, step, seconds, parents=(), confidence=0.9, **body):
    return node_event(product_id, trace_id, parents=parents, seconds=seconds, agent_id=agent_id, step=step,
                      confidence=confidence, **body)


def final(product_id, trace_id, seconds, parents, confidence=0.8, **body):
    return n(product_id, trace_id, "summarizer", "answer", seconds, parents, confidence,
             source_type="final_answer", **body)


def first_batch() -> list[dict]:
    return [
        # Fused retrieval → reasoning → final: the fused fragment is the cause.
        n("f-frag", "t-fused", "retriever", "retrieval", 10),
        n("f-concl", "t-fused", "reasoner", "reasoning", 11, ["f-frag"], 0.8),
        final("f-final", "t-fused", 12, ["f-concl"]),
        fuse_event("f-frag", trace_id="t-fused"),
        review("t-fused", "incorrect", 13),
        # A failed tool call.
        n("e-tool", "t-error", "tooler", "tool_call", 20, status="error"),
        final("e-final", "t-error", 21, ["e-tool"]),
        review("t-error", "incorrect", 22),
        # A doubtful fragment (below the 0.5 threshold); its consumer is confident.
        n("l-frag", "t-low", "retriever", "retrieval", 30, confidence=0.3),
        final("l-final", "t-low", 31, ["l-frag"]),
        review("t-low", "incorrect", 32),
        # Wrong with no anomaly anywhere: unexplained.
        n("u-a", "t-none", "retriever", "retrieval", 40),
        final("u-final", "t-none", 41, ["u-a"]),
        review("t-none", "incorrect", 42),
        # Shared ancestors: one fused fragment feeds two branches that meet
        # again, and a second fused fragment of the same agent and step feeds
        # one of them: the group counts the answer once.
        n("s-frag", "t-shared", "retriever", "retrieval", 50),
        n("s-frag2", "t-shared", "retriever", "retrieval", 50.5),
        n("s-a", "t-shared", "reasoner", "reasoning", 51, ["s-frag"]),
        n("s-b", "t-shared", "verifier", "verification", 52, ["s-frag", "s-frag2"]),
        final("s-final", "t-shared", 53, ["s-a", "s-b"]),
        fuse_event("s-frag", trace_id="t-shared"),
        fuse_event("s-frag2", trace_id="t-shared"),
        review("t-shared", "incorrect", 54),
        # A cross-trace parent that has not arrived yet (it comes in the second batch).
        final("c-final", "t-cross", 61, ["x-frag"]),
        review("t-cross", "incorrect", 62),
        # Reviewed incorrect, then correct: not wrong any more.
        n("r-frag", "t-replaced", "retriever", "retrieval", 70, confidence=0.2),
        final("r-final", "t-replaced", 71, ["r-frag"]),
        review("t-replaced", "incorrect", 72),
        # Reviewed correct, then incorrect (of the node itself).
        n("v-check", "t-flip", "verifier", "verification", 80, confidence=0.4),
        final("v-final", "t-flip", 81, ["v-check"]),
        review("t-flip", "correct", 82),
        # Only an intermediate node was reviewed incorrect: the answer was not.
        n("i-frag", "t-node-review", "retriever", "retrieval", 90, confidence=0.2),
        final("i-final", "t-node-review", 91, ["i-frag"]),
        review("t-node-review", "incorrect", 92, product_id="i-frag"),
        # The run ended in a fuse (no final_answer node; its last node fused): no answer.
        n("z-a", "t-no-answer", "retriever", "retrieval", 100),
        n("z-b", "t-no-answer", "reasoner", "reasoning", 101, ["z-a"]),
        fuse_event("z-b", trace_id="t-no-answer"),
        review("t-no-answer", "incorrect", 102),
        # The final answer itself fused (answers=fused).
        n("g-frag", "t-fused-answer", "retriever", "retrieval", 110),
        final("g-final", "t-fused-answer", 111, ["g-frag"], 0.9),
        fuse_event("g-final", trace_id="t-fused-answer"),
        # A doubtful final answer, never reviewed (answers=low_confidence).
        n("d-frag", "t-low-answer", "retriever", "retrieval", 120),
        final("d-final", "t-low-answer", 121, ["d-frag"], 0.3),
        # Outside the window.
        n("o-frag", "t-old", "retriever", "retrieval", -7200, confidence=0.1),
        final("o-final", "t-old", -7199, ["o-frag"]),
        review("t-old", "incorrect", -7198),
    ]


def second_batch() -> list[dict]:
    return [
        # The late cross-trace parent, from a trace of its own.
        n("x-frag", "t-source", "retriever", "retrieval", 60, confidence=0.2),
        n("x-other", "t-source", "summarizer", "answer", 60.5, ["x-frag"], source_type="final_answer"),
        review("t-replaced", "correct", 73),
        review("t-flip", "incorrect", 83, product_id="v-final"),
    ]


EXPECTED_INCORRECT = {
    "answers": 7,
    "unexplained": 1,
    "causes": [
        {"agent_id": "retriever", "step": "retrieval", "reason": "fused", "count": 2, "share": 2 / 7,
         "examples": ["t-shared", "t-fused"]},
        {"agent_id": "retriever", "step": "retrieval", "reason": "low_confidence", "count": 2, "share": 2 / 7,
         "examples": ["t-cross", "t-low"]},
        {"agent_id": "tooler", "step": "tool_call", "reason": "error", "count": 1, "share": 1 / 7,
         "examples": ["t-error"]},
        {"agent_id": "verifier", "step": "verification", "reason": "low_confidence", "count": 1, "share": 1 / 7,
         "examples": ["t-flip"]},
    ],
}

# The verdicts the corpus ends with, per trace (newest review of the final answer or of its trace).
INCORRECT_TRACES = {"t-fused", "t-error", "t-low", "t-none", "t-shared", "t-cross", "t-flip", "t-old"}


def load(ingest) -> None:
    for batch in (first_batch(), second_batch()):
        result = ingest(*batch)
        assert result["errors"] == [], result["errors"]


def environments_and_models() -> list[dict]:
    """Wrong answers across two environments and two answer models; the
    causes' nodes name the other model, so a filter on the cause's model
    would pick the wrong answers."""
    events = []
    for trace_id, environment, model, cause_agent, seconds in (
        ("m-prod-a", "production", "model-a", "retriever", 200),
        ("m-prod-b", "production", "model-b", "reasoner", 210),
        ("m-stage-a", "staging", "model-a", "retriever", 220),
    ):
        other = "model-b" if model == "model-a" else "model-a"
        events += [
            n(f"{trace_id}-cause", trace_id, cause_agent, cause_agent[:-2] + "ing", seconds,
              environment=environment, model=other),
            final(f"{trace_id}-final", trace_id, seconds + 1, [f"{trace_id}-cause"], environment=environment,
                  model=model),
            fuse_event(f"{trace_id}-cause", trace_id=trace_id),
            review(trace_id, "incorrect", seconds + 2),
        ]
    return events

"""What the demo's steps take and cost: realistic durations (retrieval
200–800 ms, reasoning 1–4 s), token counts per step, the fake models that
make them and the price table the demo project charges them at.

Each node's figures are drawn from its own seed (trace and node name), never
from the workflow's random stream, so adding them changed no other figure of
the demo. The expensive path costs visibly more: the intent vote pays for its
five samples (tokens × 5, the wall time of the slowest), and a ticket's second
round (the backflow after a failed verification) is marked as the reflection
round it is.
"""

import random

from denoiseflow.costs import REFLECTION_ROUND, marked

# USD per million tokens, as the demo project's settings hold them.
PRICES = {
    "fake-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
    "fake-large": {"input_per_mtok": 2.5, "output_per_mtok": 10.0},
    "fake-embed": {"input_per_mtok": 0.02, "output_per_mtok": 0.0},
}
# step -> (model, duration range ms, input tokens, output tokens); None: a step without a model.
STEPS = {
    "user_input": (None, (0, 0), None, None),
    "intent": ("fake-mini", (250, 700), (180, 320), (4, 12)),
    "entity_extraction": ("fake-mini", (300, 900), (200, 360), (30, 80)),
    "order_lookup": (None, (80, 400), None, None),
    "retrieval": ("fake-embed", (200, 800), (40, 120), (0, 0)),
    "reasoning": ("fake-large", (1000, 4000), (1200, 2600), (150, 420)),
    "verification": ("fake-mini", (400, 1200), (600, 1100), (20, 80)),
    "summary": ("fake-mini", (300, 900), (500, 900), (40, 120)),
    "final_answer": ("fake-large", (600, 1800), (300, 600), (60, 160)),
}
VOTE_SAMPLES = {"intent": 5}
# What a second round repeats (its summary and answer would be made anyway).
ROUND_STEPS = {"retrieval", "reasoning", "verification"}


def step_fields(trace_id: str, name: str, step: str, round_: int | None = None, first_round_node: str | None = None,
                metadata: dict | None = None, model: str | None = None) -> dict:
    """`duration_ms`, `model`, `usage` (and the expensive-path marks) for one
    demo node; `model` overrides the step's own."""
    default, (low, high), input_range, output_range = STEPS.get(step, (None, (50, 300), None, None))
    model = model if default is not None and model is not None else default
    rng = random.Random(f"{trace_id}:{name}:cost")
    samples = VOTE_SAMPLES.get(step, 1)
    durations = [rng.uniform(low, high) for _ in range(samples)]
    fields = {"duration_ms": round(max(durations), 1)}
    if model is not None:
        fields["model"] = model
        fields["usage"] = {"input_tokens": sum(rng.randint(*input_range) for _ in range(samples)),
                           "output_tokens": sum(rng.randint(*output_range) for _ in range(samples))}
    if round_ is not None and round_ > 1 and first_round_node is not None and step in ROUND_STEPS:
        fields["metadata"] = marked(metadata, REFLECTION_ROUND, first_round_node)
    return fields

"""The demo's truth set for the ticket workflow, and two evaluation runs of it.

`ticket-triage` holds support tickets with their known answers: the intent
(label), the policy's number of days (number) and the extracted entities
(exact). Two prompts answer it through `denoiseflow.evaluate`, so every case is
a recorded trace: `prompt-v1` (older, noisier) and `prompt-v2` (newer, better
overall, yet it breaks a few cases v1 got right) — the comparison page shows
what a release would fix and break at first sight. A wrong answer is built on a
low-confidence retrieval fragment, so "Why is this wrong?" finds it. v2 buys
its accuracy with the large model for reasoning and the answer, which the
comparison's trade-off table prices (demo.step_costs). Each case reports the
time its steps took (retrieval 200–800 ms, reasoning 1–4 s, the answer), as
recorded on its nodes: the run's latency is the steps', not the fake's
microseconds.

The runs' traces are stamped hours back (v1 a day ago, v2 two hours ago), so
they stay out of the 15-minute windows the demo's alert rules watch.
Idempotent: once the dataset has its two runs, loading again does nothing.
"""

import random
from datetime import UTC, datetime, timedelta

from demo.fake_llm import TICKETS, FakeLLM
from demo.step_costs import step_fields
from denoiseflow import Answer, Recorder, current_case, evaluate
from denoiseflow.evaluation import Client

DATASET = "ticket-triage"
PROMPTS = (("prompt-v1", 0.34, 26), ("prompt-v2", 0.14, 2))  # (name, share of wrong answers, hours ago)
# The model each prompt reasons and answers with.
MODELS = {"prompt-v1": "fake-mini", "prompt-v2": "fake-large"}
INTENTS = [intent for intent, _, _ in TICKETS]
POLICY_DAYS = {"refund_status": 14, "delivery_delay": 10, "double_charge": 5, "login_problem": 1,
               "cancel_subscription": 0, "damaged_item": 7}


def truth_items() -> list[dict]:
    items = []
    for n in range(1, 25):
        llm = FakeLLM(f"truth-{n:02d}", 0.0)
        origin = "production" if n % 3 else "synthetic"
        items.append({"id": f"intent-{n:02d}", "input": {"ticket": llm.ticket, "ask": "intent"},
                      "expected": llm.intent, "kind": "label", "tags": ["intent", llm.intent], "origin": origin})
        if n <= 8:
            items.append({"id": f"days-{n:02d}", "input": {"ticket": llm.ticket, "ask": "policy_days"},
                          "expected": POLICY_DAYS[llm.intent], "tags": ["policy"], "origin": origin})
        if n <= 6:
            items.append({"id": f"entities-{n:02d}", "input": {"ticket": llm.ticket, "ask": "entities"},
                          "expected": {"order": llm.order, "item": llm.item}, "kind": "exact",
                          "tags": ["entities"], "origin": origin})
    return items


def _answerer(prompt: str, wrong_share: float, truth: dict):
    def answer(question):
        case = current_case()
        rng = random.Random(f"{case.item_id}:{prompt}")

        spent = []

        def costs(name: str, step: str) -> dict:
            spent.append(step_fields(case.trace_id, name, step, model=MODELS[prompt] if step != "retrieval" else None))
            return spent[-1]

        expected = truth[case.item_id]
        wrong = rng.random() < wrong_share
        fragment = case.record(
            "retrieval_agent_v2", "Orders shipped outside the EU are not eligible for refunds (policy of 2019)."
            if wrong else "Refunds are issued within 14 days of the return reaching the warehouse.",
            step="retrieval", source_type="retrieval", confidence=round(rng.uniform(0.22, 0.4) if wrong
                                                                        else rng.uniform(0.78, 0.95), 2),
            metadata={"prompt": prompt}, **costs("fragment", "retrieval"))
        if wrong:
            kind = case.item_id.split("-")[0]
            if kind == "intent":
                actual = rng.choice([i for i in INTENTS if i != expected])
            elif kind == "days":
                actual = expected + rng.choice([3, 7, 30])
            else:
                actual = {**expected, "order": f"A-{rng.randint(1000, 9999)}"}
        else:
            actual = expected.upper() if isinstance(expected, str) and rng.random() < 0.3 else expected
        reasoning = case.record("reasoning_agent", f"conclusion: {actual}", step="reasoning", source_type="reasoning",
                                parent_ids=[case.input_node, fragment], confidence=round(rng.uniform(0.6, 0.9), 2),
                                **costs("reasoning", "reasoning"))
        final = case.record("responder", str(actual), step="final_answer", source_type="final_answer",
                            parent_ids=[reasoning], confidence=round(rng.uniform(0.55, 0.9), 2),
                            **costs("final", "final_answer"))
        # The case took what its steps took (recorded, never slept): retrieval, then reasoning, then the answer.
        took = sum(step["duration_ms"] for step in spent)
        return Answer(actual, escalated=wrong and rng.random() < 0.5, node=final, latency_ms=took)

    return answer


class _Backdated(Recorder):
    """Stamps every event it is given without a timestamp `hours` back."""

    def __init__(self, url: str, api_key: str, hours: float):
        super().__init__(url, api_key, flush_interval=0.05)
        self.at = datetime.now(UTC) - timedelta(hours=hours)

    def emit(self, kind: str, body: dict, timestamp=None, *args, **kwargs) -> bool:
        if timestamp is None:
            self.at += timedelta(milliseconds=40)
            timestamp = self.at
        return super().emit(kind, body, timestamp, *args, **kwargs)


def load(recorder: Recorder) -> int:
    """Creates the truth set and runs both prompts over it; the number of runs made."""
    client = Client(recorder.url, recorder.api_key)
    names = {d["name"] for d in client.call("GET", "/api/v1/datasets", query={"limit": 1000})}
    if DATASET in names:
        existing = client.call("GET", "/api/v1/runs", query={"dataset": DATASET})
    else:
        client.call("POST", "/api/v1/datasets", {
            "name": DATASET, "description": "Support tickets with their known intent, policy days and entities."})
        existing = []
    if len(existing) >= len(PROMPTS):
        return 0
    items = truth_items()
    client.call("POST", f"/api/v1/datasets/{DATASET}/items", {"items": items})
    truth = {item["id"]: item["expected"] for item in items}
    done = {run["name"] for run in existing}
    made = 0
    for prompt, wrong_share, hours_ago in PROMPTS:
        if prompt not in done:
            backdated = _Backdated(recorder.url, recorder.api_key, hours_ago)
            try:
                evaluate(DATASET, _answerer(prompt, wrong_share, truth), name=prompt, recorder=backdated,
                         concurrency=1, metadata={"prompt": prompt, "model": "fake-llm"})
            finally:
                backdated.close(timeout=30)
            made += 1
    return made

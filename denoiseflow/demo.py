"""`python -m denoiseflow.demo`: the toolkit against a fake model, in a minute.

Prints a redundant vote, a reflection loop and a guarded retry. With
`DENOISE_URL` and `DENOISE_API_KEY` set it records them to that dashboard
(three traces, named at the end); without, events are kept in memory and
counted, and nothing leaves the process.
"""

import json
import os
import random
import sys
import uuid

from denoiseflow.fuse import ConfidenceFuse, Thresholds
from denoiseflow.recorder import Recorder
from denoiseflow.redundancy import run_redundant
from denoiseflow.reflection import reflect
from denoiseflow.transport import Reply

INTENTS = ("refund_status", "billing", "shipping")


class FakeLLM:
    """Seeded per call, so the demo prints the same story every run."""

    def __init__(self, seed: int = 42):
        self.seed = seed

    def classify(self, question: str, temperature: float, perspective: str = "") -> str:
        rng = random.Random(f"{self.seed}|{question}|{temperature}|{perspective}")
        return "refund_status" if rng.random() > 0.35 * temperature else rng.choice(INTENTS[1:])

    def write(self, draft: str | None, critique: str | None) -> str:
        revisions = {None: "Refunds take a while.",
                     "Refunds take a while.": "Refunds are paid within 14 days of approval.",
                     "Refunds are paid within 14 days of approval.": "Refunds are paid within 14 days of approval!"}
        return revisions.get(draft, draft)

    def retrieve(self, query: str, attempt: int) -> tuple[str, float]:
        if attempt == 1:
            return "Refund policy (2019): refunds take 90 days.", 0.31
        return "Refund policy (2026): refunds are paid within 14 days.", 0.92


class InMemory:
    """Stands in for the dashboard when none is configured: accepts and keeps."""

    def __init__(self):
        self.events = []

    def post(self, url, body, headers):
        batch = json.loads(body)["batch"]
        self.events.extend(batch)
        return Reply(207, {}, json.dumps({"successes": [{"id": e["id"], "status": 201} for e in batch],
                                          "errors": []}).encode())


def vote(llm: FakeLLM, recorder: Recorder, trace_id: str) -> None:
    question = "Where is my refund for order 17?"
    asked = recorder.record(trace_id, "gateway", question, source_type="user_input")
    result = run_redundant(lambda temperature, perspective: llm.classify(question, temperature, perspective), n=7)
    print("1. Redundant vote: 7 samples at temperatures 0.7-1.0 with rotating perspectives")
    print(f"   samples:       {result.samples}")
    print(f"   cluster sizes: {[c.size for c in result.clusters]}  vote_ratio {result.vote_ratio:.2f}  "
          f"agreed: {result.agreed}")
    print(f"   answer:        {result.answer}  (confidence {result.confidence:.2f}, "
          f"semantic entropy {result.semantic_entropy:.2f})")
    result.record(trace_id, "intent_agent", step="intent", parent_ids=[asked], recorder=recorder)


def reflection(llm: FakeLLM, recorder: Recorder, trace_id: str) -> None:
    critic = {"Refunds take a while.": "Vague: say how long.",
              "Refunds are paid within 14 days of approval.": "Good; end firmly."}
    loop = reflect(lambda: llm.write(None, None), lambda draft: critic.get(draft, "Fine."),
                   lambda draft, critique: llm.write(draft, critique), max_rounds=4, trace_id=trace_id,
                   agent_id="writer", recorder=recorder)
    print("2. Reflection loop (stops at 4 drafts or when two drafts in a row are >= 95% alike)")
    for number, draft in enumerate(loop.drafts, 1):
        similarity = f"  ({loop.similarities[number - 2]:.0%} like the one before)" if number > 1 else ""
        print(f"   draft {number}: {draft}{similarity}")
    print(f"   stopped: {loop.stopped} after {loop.rounds} drafts")


def guarded_retry(llm: FakeLLM, recorder: Recorder, trace_id: str) -> bool:
    """The guard (retry upstream with the fuse's reason, then escalate) is the
    policy side's `denoiseflow.ladder.guard`; without it this step says so."""
    try:
        from denoiseflow.ladder import guard
    except ImportError:
        print("3. Guarded retry: not in this build (denoiseflow.ladder.guard is missing); skipped")
        return False

    def fetch(feedback):
        attempt = 1 if feedback is None else feedback.attempt
        if feedback is not None:
            print(f"   retry {attempt}: told why -> {feedback.reason} [{feedback.reason_code}]")
        return llm.retrieve("refund policy", attempt)

    fuse = ConfidenceFuse(by_agent_type={"retrieval": Thresholds(accept=0.8, block=0.5)})
    print("3. Guarded retry: a low-confidence fragment is blocked, retried with the reason, then accepted")
    result = guard(fetch, consumer="reasoning_agent", trace_id=trace_id, agent_id="retrieval_agent",
                   step="retrieval", source_type="retrieval", fuse=fuse, max_retries=2, recorder=recorder)
    print(f"   outcome: {result.outcome} after {result.attempts} attempts: {result.content}")
    return True


def main() -> int:
    url, key = os.environ.get("DENOISE_URL"), os.environ.get("DENOISE_API_KEY", "")
    local = None if url else InMemory()
    recorder = Recorder(url, key, transport=local, flush_interval=0.05)
    run = uuid.uuid4().hex[:6]
    traces = {name: f"sdk-demo-{name}-{run}" for name in ("vote", "reflect", "retry")}
    llm = FakeLLM()
    vote(llm, recorder, traces["vote"])
    print()
    reflection(llm, recorder, traces["reflect"])
    print()
    used = [traces["vote"], traces["reflect"]]
    if guarded_retry(llm, recorder, traces["retry"]):
        used.append(traces["retry"])
    print()
    delivered = recorder.flush(timeout=15)
    stats = recorder.stats()
    recorder.close()
    if local is not None:
        print(f"{len(local.events)} events kept in memory; set DENOISE_URL and DENOISE_API_KEY to record them.")
        return 0
    print(f"Recorded to {url}: {stats['sent']} events sent, {stats['rejected']} refused; "
          f"traces {', '.join(used)}")
    return 0 if delivered and not stats["rejected"] else 1


if __name__ == "__main__":
    sys.exit(main())

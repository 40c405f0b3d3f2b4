"""A seeded fake LLM for the demo: plausible support-ticket artifacts whose
quality depends on a noise level, with the ground truth kept alongside.

Every artifact comes with a confidence and a hidden `correct` flag. As in
practice (self-consistency, semantic entropy), a low confidence means a
mistake far more often than a high one, so the Calibration page finds the
signal and suggests a threshold worth using. One agent is the exception on
purpose: the entity extractor states about 0.9 whatever it produced, and is
wrong about a third of the time, which its reliability curve shows as flat
and Calibration's per-agent table flags. The figures are large enough for
spot checks of ~50 extractions to show it in every load (overconfident by
0.14 at the least over 40 loads as of different moments, against a 0.1
line), while the project's ROC AUC stays above 0.75 (0.83 at the lowest).
"""

import json
import random
from dataclasses import dataclass

TICKETS = [
    ("refund_status", "I returned the {item} on {date}. Where is my refund for order {order}?",
     "Refunds for returned items are issued within 14 days of the return reaching the warehouse."),
    ("delivery_delay", "Order {order} was due on {date} and still has not arrived.",
     "Standard deliveries take 3-5 working days; delays over 10 days are escalated to the carrier."),
    ("double_charge", "I was charged twice for order {order} on {date}.",
     "Duplicate card authorisations are released automatically by the bank within 5 working days."),
    ("login_problem", "I cannot log in since {date}, the reset email never arrives.",
     "Password reset emails are sent from no-reply@shop.example and may land in the spam folder."),
    ("cancel_subscription", "Please cancel my subscription before the renewal on {date}.",
     "Subscriptions can be cancelled any time before renewal from the account page, with no fee."),
    ("damaged_item", "The {item} from order {order} arrived broken on {date}.",
     "Items damaged in transit are replaced free of charge once a photo of the damage is provided."),
]
ITEMS = ["blender", "desk lamp", "kettle", "headphones", "backpack", "monitor stand", "coffee grinder"]
DISTRACTORS = [
    "Orders shipped outside the EU are not eligible for refunds (policy of 2019).",
    "Gift cards cannot be exchanged for cash.",
    "Store pickup orders are held for 7 days.",
    "Loyalty points expire after 24 months of inactivity.",
    "Express delivery is not available on public holidays.",
]


def clamp(value: float, low: float = 0.02, high: float = 0.99) -> float:
    return min(high, max(low, value))


@dataclass
class Artifact:
    content: str
    confidence: float
    correct: bool
    failed: bool = False


class FakeLLM:
    """One ticket's worth of model calls, reproducible from the seed."""

    def __init__(self, seed: str, noise: float):
        self.seed = seed
        self.rng = random.Random(seed)
        self.noise = noise
        self.intent, template, self.policy = self.rng.choice(TICKETS)
        self.order = f"A-{self.rng.randint(1000, 9999)}"
        self.item = self.rng.choice(ITEMS)
        self.date = f"{self.rng.randint(1, 28)} {self.rng.choice(['March', 'April', 'May'])}"
        self.ticket = template.format(item=self.item, date=self.date, order=self.order)

    def scored(self, quality: float, spread: float = 0.1) -> tuple[float, bool]:
        """A confidence around `quality`, and whether the artifact is really right.
        Under noise the model stays more confident than it should be."""
        confidence = clamp(self.rng.gauss(quality, spread))
        overconfidence = 0.3 * self.noise
        correct = self.rng.random() < clamp(confidence + 0.18 - overconfidence, 0.02, 0.99)
        return confidence, correct

    def classify(self, temperature: float, sample: int) -> str:
        """One intent sample: the higher the noise and temperature, the likelier a
        wrong label. Seeded per sample, so parallel sampling stays reproducible."""
        rng = random.Random(f"{self.seed}:intent:{sample}")
        wrong = rng.random() < clamp(self.noise * 0.9 + temperature * 0.12, 0.0, 0.9)
        return rng.choice([t[0] for t in TICKETS]) if wrong else self.intent

    def extract(self) -> Artifact:
        if self.rng.random() < max(0.0, self.noise - 0.3) * 0.9:
            return Artifact('{"order_id": ', 0.0, False, failed=True)  # the model's JSON broke off
        # Badly calibrated on purpose: a confident tone that says nothing about
        # the result, until an incident degrades the model outright.
        confidence = clamp(self.rng.gauss(0.9 - 1.5 * max(0.0, self.noise - 0.25), 0.04))
        correct = self.rng.random() < 0.70 - 0.6 * self.noise
        entities = {"order_id": self.order if correct else f"A-{self.rng.randint(1000, 9999)}", "date": self.date}
        if "{item}" in next(t[1] for t in TICKETS if t[0] == self.intent):
            entities["item"] = self.item
        return Artifact(json.dumps(entities), confidence, correct)

    def retrieve(self, count: int, drift: float) -> list[Artifact]:
        """Fragments from the knowledge base; a stale index (drift) and noise lower similarity."""
        return [self.fragment(index == 0 or self.rng.random() < 0.55 - self.noise * 0.4, drift) for index in range(count)]

    def retrieve_again(self, drift: float) -> Artifact:
        """The retriever told why its fragment was fused narrows its query:
        usually the right document, matched more closely."""
        return self.fragment(self.rng.random() < 0.75 - self.noise * 0.4, drift, narrowed=0.1)

    def fragment(self, relevant: bool, drift: float, narrowed: float = 0.0) -> Artifact:
        if relevant:
            # A stale index hurts the right documents most: their similarity sinks towards the rest.
            quality = 0.95 + narrowed - self.noise * 0.7 - drift * 1.5
        elif self.rng.random() < 0.12:
            quality = 0.3  # off topic: what a consumer's fuse is for
        else:
            # Near misses: doubtful (below the high-uncertainty threshold), yet above a lenient block threshold.
            quality = 0.46 - self.noise * 0.3 - drift * 0.3
        confidence, correct = self.scored(quality, 0.08)
        content = self.policy if relevant and correct else self.rng.choice(DISTRACTORS)
        return Artifact(content, confidence, relevant and correct)

    def tool(self) -> Artifact:
        if self.rng.random() < 0.03 + self.noise * 0.15:
            return Artifact("order service timed out after 5 s", 0.0, False, failed=True)
        return Artifact(f"order {self.order}: status shipped, 1 item ({self.item})", 0.99, True)

    def reason(self, inputs_correct: bool, support: float, round_: int, fluent: bool = False) -> Artifact:
        correct = inputs_correct and self.rng.random() < 0.97 - 0.3 * self.noise
        # Self-consistency: samples built on wrong premises disagree, so a wrong
        # conclusion mostly comes out doubtful; weak support lowers both. A
        # fragment taken as fact is the exception (`fluent`): every sample
        # repeats it, and the wrong conclusion comes out nearly as sure as a right one.
        quality = (0.84 if correct else 0.7 if fluent else 0.42) + 0.1 * (support - 0.7) - 0.1 * self.noise
        confidence = clamp(self.rng.gauss(quality, 0.1))
        text = (f"The customer asks about {self.intent.replace('_', ' ')} for order {self.order}. "
                f"Per policy: {self.policy}" if correct else
                f"Order {self.order} does not qualify; the request should be declined.")
        return Artifact(text, confidence, correct)

    def verify(self, conclusion: Artifact) -> Artifact:
        # The verifier checks the logic, not the premises: a fluent wrong conclusion often passes.
        passes = self.rng.random() < (0.9 if conclusion.correct else 0.55) - self.noise * 0.3
        confidence = clamp(self.rng.gauss(0.85 if passes else 0.7, 0.07))
        text = "Conclusion follows from the cited policy." if passes else "Conclusion not supported; retrieve again."
        return Artifact(text, confidence, passes)

    def summarize(self, conclusion: Artifact) -> Artifact:
        confidence = clamp(conclusion.confidence + self.rng.gauss(0.03, 0.04))
        return Artifact(f"Summary: {conclusion.content}", confidence, conclusion.correct)

    def answer(self, summary: Artifact) -> Artifact:
        confidence = clamp(summary.confidence + self.rng.gauss(0.0, 0.03))
        if summary.correct:
            text = f"Hello, thanks for your patience. {self.policy} Your order {self.order} is covered."
        else:
            text = f"Hello, unfortunately order {self.order} is not eligible. Kind regards, Support."
        return Artifact(text, confidence, summary.correct)

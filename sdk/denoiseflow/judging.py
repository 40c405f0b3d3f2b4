"""Cross-checking an answer with a judge: a second model or prompt that looks
for faults. Its verdict becomes a fuse decision — accept, or block with reason
code `judge_rejected` — recorded on the answer's node when one is given.

A judge returns a bool, `(ok, reason)`, a mapping (`{"ok"|"accept"|"pass":
bool, "reason": str, "confidence": float}` or `{"verdict": "pass"|"fail"}`),
or text whose first word says it (`PASS: …`, `no - the date is wrong`).

What it cost: a judge that returns `df.Priced` says its model, usage or cost;
with `node`, its call is then recorded as a `verification` node on the answer,
timed and marked `metadata.expensive_path = "cross_check"` with
`expensive_path_of` = the answer's product id (`record_call=True` records it
without prices too).
"""

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from denoiseflow.costs import CROSS_CHECK, marked, unwrap
from denoiseflow.recorder import get_recorder
from denoiseflow.vocabulary import ACCEPT, BLOCK, DOWNWEIGHT

ACCEPT_WORDS = {"pass", "passed", "ok", "yes", "correct", "accept", "accepted", "approve", "approved", "valid",
                "true", "good"}
REJECT_WORDS = {"fail", "failed", "no", "incorrect", "reject", "rejected", "wrong", "invalid", "false", "bad"}
JUDGE_REJECTED, JUDGE_ACCEPTED, JUDGE_UNCLEAR = "judge_rejected", "judge_accepted", "judge_unclear"


@dataclass(frozen=True)
class CrossCheckResult:
    decision: str  # accept | block | downweight (the judge failed or was unclear)
    reason: str
    reason_code: str
    confidence: float | None = None  # the judge's own, when it gave one

    @property
    def accepted(self) -> bool:
        return self.decision == ACCEPT

    @property
    def blocked(self) -> bool:
        return self.decision == BLOCK

    def as_fuse(self) -> dict:
        return {"decision": self.decision, "reason": self.reason, "threshold": None, "reason_code": self.reason_code}


def first_word(text: str) -> str:
    return "".join(ch for ch in (text.strip().split() or [""])[0] if ch.isalpha()).casefold()


def read_verdict(said: Any) -> tuple[bool | None, str, float | None]:
    """(ok or None when unclear, reason, confidence) from what a judge returned."""
    if isinstance(said, bool):
        return said, "", None
    if isinstance(said, tuple) and len(said) == 2:
        ok, reason = read_verdict(said[0])[0], said[1]
        return ok, "" if reason is None else str(reason), None
    if isinstance(said, Mapping):
        reason = str(said.get("reason") or said.get("critique") or "")
        confidence = said.get("confidence")
        confidence = float(confidence) if isinstance(confidence, (int, float)) and not isinstance(
            confidence, bool) else None
        for name in ("ok", "accept", "accepted", "pass", "passed", "valid", "correct"):
            if name in said:
                return bool(said[name]), reason, confidence
        if "verdict" in said:
            return read_verdict(str(said["verdict"]))[0], reason, confidence
        return None, reason, confidence
    if isinstance(said, str):
        word = first_word(said)
        ok = True if word in ACCEPT_WORDS else False if word in REJECT_WORDS else None
        return ok, said.strip(), None
    return None, "", None


def cross_check(answer, judge: Callable[[Any], Any], *, node=None, recorder=None, by_agent_id: str = "judge",
                threshold: float | None = None, record_call: bool | None = None) -> CrossCheckResult:
    """Asks `judge(answer)` and turns its verdict into a fuse decision; with
    `node` (the answer's `NodeRef`) it is recorded as a fuse event on it.
    `threshold`: a judge's confidence below it counts as a rejection."""
    started, priced = time.perf_counter(), {}
    try:
        said, priced = unwrap(judge(answer))
        ok, reason, confidence = read_verdict(said)
    except Exception as error:  # a broken judge neither passes nor condemns the answer
        verdict = CrossCheckResult(DOWNWEIGHT, f"judge failed: {type(error).__name__}: {error}"[:500], JUDGE_UNCLEAR)
    else:
        if ok and threshold is not None and confidence is not None and confidence < threshold:
            ok, reason = False, f"judge confidence {confidence:.2f} below {threshold:.2f}" + (
                f": {reason}" if reason else "")
        if ok is None:
            verdict = CrossCheckResult(DOWNWEIGHT, f"judge verdict unclear: {reason}"[:500], JUDGE_UNCLEAR, confidence)
        elif ok:
            verdict = CrossCheckResult(ACCEPT, reason or "judge found no fault", JUDGE_ACCEPTED, confidence)
        else:
            verdict = CrossCheckResult(BLOCK, reason or "judge rejected the answer", JUDGE_REJECTED, confidence)
    if node is not None:
        recorder = recorder or get_recorder()
        if record_call or (record_call is None and priced):
            recorder.record(getattr(node, "trace_id", None), by_agent_id, verdict.reason, step="cross_check",
                            source_type="verification", parent_ids=[node], confidence=verdict.confidence,
                            duration_ms=round((time.perf_counter() - started) * 1000, 3),
                            metadata=marked({"judge_decision": verdict.decision}, CROSS_CHECK, node), **priced)
        recorder.fuse(node, verdict, by_agent_id=by_agent_id)
    return verdict

"""The confidence fuse: a consumer's accept / downweight / block decision about
an upstream artifact, from its confidence.

Three tiers by default (the default policy, denoiseflow.vocabulary): accept at
0.8 or above, downweight from 0.5 up to 0.8, block below 0.5. Each agent type may have its own thresholds (a retrieval
fragment may need more than a summary). `ConfidenceFuse.from_policy()` takes
them from the project's central policy instead, kept fresh in the background.

Every decision carries a stable `reason_code` (what the dashboard groups by)
and a reason in words without numbers, so reasons group by kind; the
confidence and the threshold travel in their own fields, and a decision made
under the central policy names its `policy_version`.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from denoiseflow.recorder import get_recorder
from denoiseflow.thresholds import Resolved
from denoiseflow.vocabulary import ACCEPT, BLOCK, DEFAULT_PROFILE, DOWNWEIGHT

# The reason codes this fuse writes (the contract names below_block and below_accept).
BELOW_BLOCK, BELOW_ACCEPT, MEETS_ACCEPT, CONFIDENCE_UNKNOWN = (
    "below_block", "below_accept", "meets_accept", "confidence_unknown")
REASONS = {
    BELOW_BLOCK: "confidence below the block threshold",
    BELOW_ACCEPT: "confidence below the accept threshold",
    MEETS_ACCEPT: "confidence meets the accept threshold",
    CONFIDENCE_UNKNOWN: "confidence unknown",
}
NAMED_SCALES = {"unit": 1.0, "percent": 100.0}
MAX_CACHED = 4096


@dataclass(frozen=True)
class Thresholds:
    accept: float = DEFAULT_PROFILE["accept"]
    block: float = DEFAULT_PROFILE["block"]

    def __post_init__(self):
        if not 0.0 <= self.block <= self.accept <= 1.0:
            raise ValueError(f"thresholds need 0 <= block ({self.block}) <= accept ({self.accept}) <= 1")


@dataclass(frozen=True)
class FuseResult:
    decision: str
    confidence: float | None  # normalized to [0, 1]
    reason: str
    threshold: float | None
    agent_type: str = ""
    reason_code: str = ""
    policy_version: int | None = None
    rule: str = ""  # which thresholds applied: "by_step:<step>", "by_agent_type:<type>", "profile"

    @property
    def blocked(self) -> bool:
        return self.decision == BLOCK

    @property
    def accepted(self) -> bool:
        return self.decision == ACCEPT

    def as_fuse(self) -> dict:
        """The contract's fuse object, for an inline fuse or a fuse event."""
        found = {"decision": self.decision, "reason": self.reason, "threshold": self.threshold}
        if self.reason_code:
            found["reason_code"] = self.reason_code
        if self.policy_version is not None:
            found["policy_version"] = self.policy_version
        return found


def normalize(value: float, scale=1.0) -> float:
    """A confidence on another scale, mapped to [0, 1].

    `scale` is a number (the value is divided by it: 100 for a percentage),
    `"percent"`, `"logprob"` (a natural-log probability: exp(value)), or a
    `(low, high)` range such as `(1, 5)` for a five-point rating.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"confidence must be a finite number, not {value!r}")
    if scale == "logprob":
        if value > 0:
            raise ValueError(f"a log probability is at most 0, not {value}")
        return math.exp(value)
    if isinstance(scale, tuple):
        low, high = scale
        normalized = (value - low) / (high - low)
    else:
        divisor = NAMED_SCALES.get(scale, scale) if isinstance(scale, str) else scale
        if isinstance(divisor, str) or divisor <= 0:
            raise ValueError(f"unknown confidence scale {scale!r}")
        normalized = value / divisor
    if not 0.0 <= normalized <= 1.0:
        raise ValueError(f"confidence {value} is outside the scale {scale!r}")
    return normalized


@dataclass
class ConfidenceFuse:
    default: Thresholds = field(default_factory=Thresholds)
    by_agent_type: Mapping[str, Thresholds] = field(default_factory=dict)
    # An artifact without a confidence is neither trusted fully nor thrown away.
    on_unknown: str = DOWNWEIGHT
    # With a policy (see from_policy), thresholds come from its current copy instead.
    policy: object = None
    profile: str = "default"
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _cached_for: object = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_policy(cls, profile: str = "default", client=None, **options) -> "ConfidenceFuse":
        """A fuse that reads its thresholds from the project's central policy
        (`client`: a `PolicyClient`, default: the process's one for the
        configured dashboard), so a threshold changed on the dashboard reaches
        this agent within one refresh."""
        if client is None:
            from denoiseflow.policy_client import policy_client

            client = policy_client()
        return cls(policy=client, profile=profile, **options)

    def thresholds_for(self, agent_type: str) -> tuple[str, Thresholds]:
        """The thresholds of the agent type, matched exactly or as the longest
        prefix of an agent id (`retrieval` covers `retrieval_agent_v2`)."""
        if agent_type in self.by_agent_type:
            return agent_type, self.by_agent_type[agent_type]
        matches = [key for key in self.by_agent_type if agent_type.startswith(key)]
        if matches:
            best = max(matches, key=len)
            return best, self.by_agent_type[best]
        return "", self.default

    def resolve(self, agent_type: str = "", step: str = "") -> tuple[Resolved, int | None]:
        """(accept, block, rule) for this agent and step, and the policy version they come from."""
        limits, version, _, _ = self._resolved(agent_type, step)
        return limits, version

    def _resolved(self, agent_type: str, step: str) -> tuple:
        """(limits, version, matched name, reason suffix), kept per agent and
        step until the policy copy changes: deciding is on every agent's hot path."""
        current = self.policy.get() if self.policy is not None else None
        if current is not self._cached_for:
            self._cache.clear()
            self._cached_for = current
        found = self._cache.get((agent_type, step))
        if found is not None:
            return found
        if current is not None:
            limits, version = current.thresholds(agent_type, step, self.profile), current.version
        else:
            matched, plain = self.thresholds_for(agent_type)
            limits = Resolved(plain.accept, plain.block, f"by_agent_type:{matched}" if matched else "profile")
            version = None
        matched = limits.rule.partition(":")[2]
        who = f" ({'step ' if limits.rule.startswith('by_step') else ''}{matched})" if matched else ""
        if len(self._cache) >= MAX_CACHED:
            self._cache.clear()
        found = self._cache[(agent_type, step)] = (limits, version, matched, who)
        return found

    def decide(self, confidence: float | None, *, scale=1.0, agent_type: str = "", step: str = "") -> FuseResult:
        limits, version, matched, who = self._resolved(agent_type, step)
        if confidence is None or (isinstance(confidence, float) and math.isnan(confidence)):
            return FuseResult(self.on_unknown, None, REASONS[CONFIDENCE_UNKNOWN] + who, None, matched,
                           CONFIDENCE_UNKNOWN, version, limits.rule)
        value = normalize(confidence, scale)
        if value < limits.block:
            decision, code, threshold = BLOCK, BELOW_BLOCK, limits.block
        elif value < limits.accept:
            decision, code, threshold = DOWNWEIGHT, BELOW_ACCEPT, limits.accept
        else:
            decision, code, threshold = ACCEPT, MEETS_ACCEPT, limits.accept
        return FuseResult(decision, value, REASONS[code] + who, threshold, matched, code, version, limits.rule)

    def gate(self, node, confidence: float | None = None, *, scale=1.0, agent_type: str = "", step: str = "",
             by_agent_id: str = "", recorder=None, timestamp=None, event_id: str | None = None) -> FuseResult:
        """A consumer's decision about an upstream node, reported as a fuse event
        (through `recorder`, default: the configured one) so the dashboard sees
        what was blocked and why. The confidence and the agent type default to
        the node's own (a `NodeRef` from `record`)."""
        if confidence is None:
            confidence, scale = getattr(node, "confidence", None), 1.0
        verdict = self.decide(confidence, scale=scale, agent_type=agent_type or getattr(node, "agent_id", ""),
                              step=step)
        recorder = recorder or get_recorder()
        recorder.fuse(node, verdict, by_agent_id=by_agent_id, timestamp=timestamp, event_id=event_id)
        return verdict

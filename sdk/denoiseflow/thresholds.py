"""Which thresholds of a policy profile apply to an agent's output.

Most specific first: `by_step`, then `by_agent_type` (the longest agent type
that prefixes the agent id), then the profile's own. This is the SDK's copy of
the server's `policy/resolution.py` (the SDK imports nothing of the server); a
test holds the two to the same answers.
"""

from typing import NamedTuple

from denoiseflow.vocabulary import DEFAULT_PROFILE as DEFAULT_PROFILE


class Resolved(NamedTuple):
    accept: float
    block: float
    rule: str  # "by_step:<step>", "by_agent_type:<type>" or "profile"


def resolve(profile: dict, agent_id: str = "", step: str = "") -> Resolved:
    by_step = profile.get("by_step") or {}
    if step and step in by_step:
        entry = by_step[step]
        return Resolved(entry["accept"], entry["block"], f"by_step:{step}")
    by_agent_type = profile.get("by_agent_type") or {}
    best = ""
    for agent_type in by_agent_type:
        if len(agent_type) > len(best) and agent_id.startswith(agent_type):
            best = agent_type
    if best:
        entry = by_agent_type[best]
        return Resolved(entry["accept"], entry["block"], f"by_agent_type:{best}")
    return Resolved(profile["accept"], profile["block"], "profile")

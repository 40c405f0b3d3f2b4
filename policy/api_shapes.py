"""JSON Schemas of the fuse policy API, for the OpenAPI document."""

from core.openapi import DATETIME, INTEGER, SHARE, STRING, array, nullable, obj
from policy.document import COUNTS, MAX_COUNT, MAX_NOTE

THRESHOLDS = obj({"accept": SHARE, "block": SHARE}, required=[], description="0 ≤ block ≤ accept ≤ 1; a missing one comes from the profile.")
PROFILE = obj(
    {
        "accept": SHARE,
        "block": SHARE,
        "by_agent_type": {"type": "object", "additionalProperties": THRESHOLDS, "nullable": True,
                          "description": "By the longest agent-type prefix of the agent id."},
        "by_step": {"type": "object", "additionalProperties": THRESHOLDS, "nullable": True},
        **{name: {**INTEGER, "minimum": 0, "maximum": MAX_COUNT} for name in COUNTS},
    },
    required=[],
    description="A profile other than `default` may leave out what it takes from `default`.",
)
POLICY = obj({
    "version": INTEGER,
    "updated_at": nullable(DATETIME),
    "note": STRING,
    "profiles": {"type": "object", "additionalProperties": PROFILE, "required": ["default"]},
})
POLICY_PUT = obj(
    {"profiles": {"type": "object", "additionalProperties": PROFILE, "required": ["default"]},
     "note": nullable({**STRING, "maxLength": MAX_NOTE})},
    required=["profiles"],
    additionalProperties=False,
)
VERSION = obj({"version": INTEGER, "updated_at": nullable(DATETIME), "note": STRING, "changed_by": STRING,
               "source": STRING, "rolled_back_from": nullable(INTEGER)}, required=["version", "updated_at", "note"])
ROLLBACK = obj({"version": {**INTEGER, "minimum": 0}, "note": nullable(STRING)}, required=["version"], additionalProperties=False)
VERSIONS = array(VERSION)

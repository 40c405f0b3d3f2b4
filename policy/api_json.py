"""What the policy API answers for the policy and its versions, as plain data
(their JSON Schemas are in policy.api_shapes)."""

from policy.store import Policy


def policy_json(policy: Policy) -> dict:
    return {"version": policy.version, "updated_at": policy.updated_at, "note": policy.note,
            "profiles": policy.profiles}


def version_json(policy: Policy) -> dict:
    return {"version": policy.version, "updated_at": policy.updated_at, "note": policy.note,
            "changed_by": policy.changed_by, "source": policy.source,
            "rolled_back_from": policy.rolled_back_from}

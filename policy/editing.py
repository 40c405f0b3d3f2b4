"""The policy page's editable table: one row per threshold level (a profile's
own, an agent type's, a step's), to and from the contract's profiles.
Validation is `document.parse_document`'s, the same as the API's."""

from policy.document import COUNTS

ROW_INPUTS = ("profile", "kind", "name", "accept", "block", *COUNTS)
KINDS = (("profile", "profile"), ("by_agent_type", "agent type"), ("by_step", "step"))
BLANK_ROWS = 3


def rows_from_profiles(profiles: dict) -> list[dict]:
    rows = []
    for name, profile in profiles.items():
        rows.append({"profile": name, "kind": "profile", "name": "", "accept": profile["accept"],
                     "block": profile["block"], **{key: profile[key] for key in COUNTS}})
        for kind in ("by_agent_type", "by_step"):
            for entry_name, entry in profile[kind].items():
                rows.append({"profile": name, "kind": kind, "name": entry_name, "accept": entry["accept"],
                             "block": entry["block"], **{key: "" for key in COUNTS}})
    return rows


def blank_rows(count: int = BLANK_ROWS) -> list[dict]:
    return [{**{key: "" for key in ROW_INPUTS}, "kind": "by_agent_type", "blank": True} for _ in range(count)]


def rows_from_post(post) -> list[dict]:
    columns = {name: post.getlist(f"row_{name}") for name in ROW_INPUTS}
    count = max((len(values) for values in columns.values()), default=0)
    rows = [{name: (columns[name][i] if i < len(columns[name]) else "").strip() for name in ROW_INPUTS}
            for i in range(count)]
    # A row with no thresholds and no counts is an emptied (deleted) or unused one.
    return [row for row in rows if any(row[key] for key in ("accept", "block", *COUNTS))]


def number(text: str):
    """A typed number as a number; anything else is kept for validation to name."""
    try:
        return float(text)
    except ValueError:
        return text


def count(text: str):
    return int(text) if text.lstrip("-").isdigit() else text


def profiles_from_rows(rows: list[dict]) -> dict:
    """The profiles the rows describe, in the API's shape (unvalidated)."""
    profiles: dict[str, dict] = {}
    for row in rows:
        name = row["profile"] or "default"
        profile = profiles.setdefault(name, {"by_agent_type": {}, "by_step": {}})
        thresholds = {key: number(row[key]) for key in ("accept", "block") if row[key] != ""}
        if row["kind"] == "profile":
            profile.update(thresholds)
            profile.update({key: count(row[key]) for key in COUNTS if row[key] != ""})
        elif row["kind"] in ("by_agent_type", "by_step"):
            profile[row["kind"]][row["name"]] = thresholds
        else:
            profile[row["kind"] or "kind"] = "unknown level"
    return profiles

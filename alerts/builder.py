"""The rule builder form: repeated rows of inputs to and from the contract's
rule JSON. Validation is AlertRuleSerializer's, the same as the API's.

Three things the form does that the API does not: a rate's threshold is typed as
a percentage (20 means 0.2; the API takes the share), a destination is one
"type" select plus one "address" input whose meaning depends on the type, and
an agent, step, source type or model filter may be typed as a prefix, case
ignored (core.filter_values): the rule stores the one exact value it stands
for, as the API would have been sent, or the form says why it cannot."""

import re

from alerts.conditions import RATE_METRICS
from alerts.conditions import RULE_FILTER_KEYS as FILTER_KEYS
from alerts.models import AlertRule
from core import filter_values

CONDITION_INPUTS = ("metric", "window", "change", "op", "threshold", *FILTER_KEYS)
DESTINATION_INPUTS = ("type", "address", "secret")
DESTINATION_TYPES = ("webhook", "slack", "email", "pagerduty", "inbox")
SHARED_PREFIX = "shared:"  # a project destination's option value: shared:NAME
BLANK_CONDITION = {"metric": "fuse_rate", "window": "15m", "change": "", "op": ">", "threshold": "",
                   **{key: "" for key in FILTER_KEYS}}
BLANK_DESTINATION = {"type": "webhook", "address": "", "secret": ""}


def _rows(post, prefix: str, inputs: tuple[str, ...]) -> list[dict]:
    columns = {name: post.getlist(f"{prefix}_{name}") for name in inputs}
    count = max((len(values) for values in columns.values()), default=0)
    return [{name: (columns[name][i] if i < len(columns[name]) else "").strip() for name in inputs}
            for i in range(count)]


def is_percent(metric: str, change: str) -> bool:
    """Is this condition's threshold typed as a percentage? (a rate's own value, not its change)"""
    return metric in RATE_METRICS and not change


def rows_from_post(post) -> dict:
    """What the person typed, to show again beside any errors."""
    return {
        "name": post.get("name", "").strip(),
        "match": post.get("match", "all"),
        "for": post.get("for", "0m").strip() or "0m",
        "conditions": _rows(post, "condition", CONDITION_INPUTS),
        "destinations": [row for row in _rows(post, "destination", DESTINATION_INPUTS)
                         if row["address"] or row["type"] == "inbox" or row["type"].startswith(SHARED_PREFIX)],
    }


def _threshold(row: dict):
    """The share a typed percentage means; anything unparsable goes to the serializer as typed."""
    if not is_percent(row["metric"], row["change"]):
        return row["threshold"]
    try:
        percent = float(row["threshold"].rstrip("%").strip())
    except ValueError:
        return row["threshold"]
    return percent / 100


def percent_errors(rows: dict) -> dict[str, str]:
    """Rates are typed as percentages: outside 0-100 is a mistake the API would take."""
    errors = {}
    for index, row in enumerate(rows["conditions"]):
        if is_percent(row["metric"], row["change"]):
            share = _threshold(row)
            if isinstance(share, float) and not 0 <= share <= 1:
                errors[f"conditions[{index}].threshold"] = (
                    f"{row['metric']} is a percentage: give 0-100 (you typed {row['threshold']})")
    return errors


# The filters typed against the project's values, and what people call them.
TEXT_FILTERS = {"agent_id": "agent", "step": "step", "source_type": "source type", "model": "model"}


def resolve_filters(rows: dict, known: dict[str, list[str]], rule: AlertRule | None) -> dict[str, str]:
    """Puts the exact value in place of each typed filter that stands for one;
    {field: reason} for those that stand for several or none. A value the rule
    already holds stays, known or not (its agent may have gone quiet), and so
    does any value while the data names none of its kind (a rule set up first)."""
    held = {(key, str(value)) for condition in (rule.conditions if rule else [])
            for key, value in (condition.get("filters") or {}).items()}
    errors = {}
    for index, row in enumerate(rows["conditions"]):
        for key, noun in TEXT_FILTERS.items():
            typed = row[key]
            if not typed or (key, typed) in held:
                continue
            found = filter_values.resolve(typed, known.get(key, ()))
            shown = (typed if len(typed) <= 60 else typed[:60] + "…").replace("\x00", "\\x00")
            if len(found.values) == 1:
                row[key] = found.values[0]
            elif found.values:
                errors[f"conditions[{index}].filters.{key}"] = (
                    f"“{shown}” could be any of {len(found.values)} {noun}s ({', '.join(found.values[:5])}"
                    f"{', …' if len(found.values) > 5 else ''}); a rule watches one {noun}: pick one")
            elif known.get(key):
                closest = f"; closest: {', '.join(found.closest)}" if found.closest else ""
                errors[f"conditions[{index}].filters.{key}"] = f"no {noun} in this project's data starts with “{shown}”{closest}"
    return errors


def destination_from_row(row: dict) -> dict:
    kind, address = row["type"], row["address"]
    if kind.startswith(SHARED_PREFIX):
        return {"type": "shared", "name": kind.removeprefix(SHARED_PREFIX)}
    if kind == "email":
        return {"type": "email", "to": [a for a in re.split(r"[,\s;]+", address) if a]}
    if kind == "pagerduty":
        return {"type": "pagerduty", "routing_key": address}
    if kind == "slack":
        return {"type": "slack", "url": address}
    secret = {"secret": row["secret"]} if row["secret"] else {}
    if kind == "inbox":
        return {"type": "inbox", **secret}
    return {"type": kind or "webhook", "url": address, **secret}


def data_from_rows(rows: dict) -> dict:
    """The rule JSON the API would receive for these rows."""
    conditions = []
    for row in rows["conditions"]:
        condition = {"metric": row["metric"], "op": row["op"], "threshold": _threshold(row)}
        if row["window"]:  # eval_accuracy ignores the window; the others say it is required
            condition["window"] = row["window"]
        if row["change"]:
            condition["change"] = row["change"]
        filters = {key: row[key] for key in FILTER_KEYS if row[key]}
        if filters:
            condition["filters"] = filters
        conditions.append(condition)
    return {"name": rows["name"], "match": rows["match"], "for": rows["for"], "conditions": conditions,
            "destinations": [destination_from_row(row) for row in rows["destinations"]]}


def _shown_threshold(condition: dict) -> str:
    value = condition["threshold"]
    if is_percent(condition["metric"], condition.get("change") or ""):
        value = round(value * 100, 10)
    return f"{value:.15g}"


def _destination_row(destination) -> dict:
    config = destination.config
    if destination.kind == "shared":
        return {"type": SHARED_PREFIX + config.get("name", ""), "address": "", "secret": ""}
    address = {"email": ", ".join(config.get("to", [])), "pagerduty": config.get("routing_key", "")}.get(
        destination.kind, config.get("url", ""))
    return {"type": destination.kind, "address": address, "secret": config.get("secret", "")}


def rows_from_rule(rule: AlertRule | None) -> dict:
    if rule is None:
        return {"name": "", "match": "all", "for": "0m", "conditions": [dict(BLANK_CONDITION)], "destinations": []}
    conditions = []
    for condition in rule.conditions:
        filters = condition.get("filters") or {}
        conditions.append({"metric": condition["metric"], "window": condition.get("window", ""),
                           "change": condition.get("change") or "", "op": condition["op"],
                           "threshold": _shown_threshold(condition),
                           **{key: str(filters.get(key, "")) for key in FILTER_KEYS}})
    return {"name": rule.name, "match": rule.match, "for": rule.for_duration, "conditions": conditions,
            "destinations": [_destination_row(d) for d in rule.destinations_in_project()]}

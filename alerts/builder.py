"""The rule builder form: repeated rows of inputs to and from the contract's
rule JSON. Validation is AlertRuleSerializer's, the same as the API's."""

from alerts.conditions import RULE_FILTER_KEYS as FILTER_KEYS
from alerts.models import AlertRule

CONDITION_INPUTS = ("metric", "window", "change", "op", "threshold", *FILTER_KEYS)
DESTINATION_INPUTS = ("url", "secret")
BLANK_CONDITION = {"metric": "fuse_rate", "window": "15m", "change": "", "op": ">", "threshold": "",
                   **{key: "" for key in FILTER_KEYS}}


def _rows(post, prefix: str, inputs: tuple[str, ...]) -> list[dict]:
    columns = {name: post.getlist(f"{prefix}_{name}") for name in inputs}
    count = max((len(values) for values in columns.values()), default=0)
    return [{name: (columns[name][i] if i < len(columns[name]) else "").strip() for name in inputs}
            for i in range(count)]


def rows_from_post(post) -> dict:
    """What the person typed, to show again beside any errors."""
    return {
        "name": post.get("name", "").strip(),
        "match": post.get("match", "all"),
        "for": post.get("for", "0m").strip() or "0m",
        "conditions": _rows(post, "condition", CONDITION_INPUTS),
        "destinations": [row for row in _rows(post, "destination", DESTINATION_INPUTS) if row["url"]],
    }


def data_from_rows(rows: dict) -> dict:
    """The rule JSON the API would receive for these rows."""
    conditions = []
    for row in rows["conditions"]:
        condition = {"metric": row["metric"], "op": row["op"], "threshold": row["threshold"]}
        if row["window"]:  # eval_accuracy ignores the window; the others say it is required
            condition["window"] = row["window"]
        if row["change"]:
            condition["change"] = row["change"]
        filters = {key: row[key] for key in FILTER_KEYS if row[key]}
        if filters:
            condition["filters"] = filters
        conditions.append(condition)
    destinations = [{"type": "webhook", "url": row["url"], **({"secret": row["secret"]} if row["secret"] else {})}
                    for row in rows["destinations"]]
    return {"name": rows["name"], "match": rows["match"], "for": rows["for"], "conditions": conditions,
            "destinations": destinations}


def rows_from_rule(rule: AlertRule | None) -> dict:
    if rule is None:
        return {"name": "", "match": "all", "for": "0m", "conditions": [dict(BLANK_CONDITION)], "destinations": []}
    conditions = []
    for condition in rule.conditions:
        filters = condition.get("filters") or {}
        conditions.append({"metric": condition["metric"], "window": condition.get("window", ""),
                           "change": condition.get("change") or "", "op": condition["op"],
                           "threshold": f"{condition['threshold']:.15g}",
                           **{key: filters.get(key, "") for key in FILTER_KEYS}})
    destinations = [{"url": d.config.get("url", ""), "secret": d.config.get("secret", "")}
                    for d in rule.destinations.all() if d.kind == "webhook"]
    return {"name": rule.name, "match": rule.match, "for": rule.for_duration, "conditions": conditions,
            "destinations": destinations}

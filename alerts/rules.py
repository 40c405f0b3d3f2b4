"""One domain call per use case on rules: create, update, enable, mute, and the
JSON a rule is shown as. Input has been validated by AlertRuleSerializer."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from alerts.conditions import load_values, parse_duration
from alerts.messages import rule_url
from alerts.models import AlertEvent, AlertRule, Destination, RuleState

RULE_FIELDS = ("name", "match", "conditions", "enabled", "muted_until")


def _apply(rule: AlertRule, data: dict) -> list[str]:
    changed = []
    for field in RULE_FIELDS:
        if field in data:
            setattr(rule, field, data[field])
            changed.append(field)
    if "for" in data:
        rule.for_duration, rule.for_seconds = data["for"], parse_duration(data["for"])
        changed += ["for_duration", "for_seconds"]
    if data.get("enabled") is False and rule.state != RuleState.OK:
        # A disabled rule starts afresh when enabled again; nothing is sent on the way out.
        rule.state, rule.pending_since = RuleState.OK, None
        changed += ["state", "pending_since"]
    return changed


@transaction.atomic
def create_rule(project, data: dict) -> AlertRule:
    rule = AlertRule(project=project)
    _apply(rule, data)
    rule.save()
    replace_destinations(rule, data.get("destinations", []))
    return rule


@transaction.atomic
def update_rule(rule: AlertRule, data: dict) -> AlertRule:
    """Partial update; `conditions` and `destinations` are replaced as a whole.
    State is kept: the next evaluation of the new conditions decides."""
    changed = _apply(rule, data)
    rule.updated_at = timezone.now()
    rule.save(update_fields=[*changed, "updated_at"])
    if "destinations" in data:
        replace_destinations(rule, data["destinations"])
    return rule


def replace_destinations(rule: AlertRule, destinations: list[dict]) -> None:
    """Keeps the rows (and delivery history) of destinations sent again unchanged."""
    existing = {(d.kind, _key(d.config)): d for d in rule.destinations.all()}
    keep, new = [], []
    for position, given in enumerate(destinations):
        config = {k: v for k, v in given.items() if k not in ("type", "shared_id")}
        found = existing.pop((given["type"], _key(config)), None)
        if found:
            if found.position != position:
                Destination.objects.filter(pk=found.pk).update(position=position)
            keep.append(found.pk)
        else:
            new.append(Destination(rule=rule, kind=given["type"], config=config, position=position,
                                   shared_id=given.get("shared_id")))
    Destination.objects.filter(rule=rule).exclude(pk__in=keep).delete()
    Destination.objects.bulk_create(new)


def _key(config: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in config.items()))


def set_enabled(rule: AlertRule, enabled: bool) -> None:
    update_rule(rule, {"enabled": enabled})


def mute(rule: AlertRule, until: datetime | None) -> None:
    update_rule(rule, {"muted_until": until})


def enable_destination(destination: Destination) -> None:
    Destination.objects.filter(pk=destination.pk).update(disabled_at=None, disabled_reason="")


def destination_json(destination: Destination) -> dict:
    shown = {"id": destination.pk, "type": destination.kind, **destination.config}
    if destination.shared_id:
        shown["kind"] = destination.shared.kind
    reason = destination.shared.disabled_reason if destination.shared_id else destination.disabled_reason
    return {**shown, "disabled": destination.is_disabled, "disabled_reason": reason}


def rule_json(rule: AlertRule) -> dict:
    """The contract's rule fields, plus state and bookkeeping."""
    return {
        "id": rule.pk,
        "name": rule.name,
        "match": rule.match,
        "conditions": rule.conditions,
        "for": rule.for_duration,
        "destinations": [destination_json(d) for d in rule.destinations.all()],
        "enabled": rule.enabled,
        "muted_until": rule.muted_until,
        "state": rule.state,
        "last_evaluated_at": rule.last_evaluated_at,
        "last_values": load_values(rule.last_values),
        "created_at": rule.created_at,
        "updated_at": rule.updated_at,
        "url": rule_url(rule),
    }


def event_json(event: AlertEvent) -> dict:
    return {"id": event.pk, "rule_id": event.rule_id, "state": event.state, "at": event.at,
            "values": load_values(event.values), "muted": event.muted}

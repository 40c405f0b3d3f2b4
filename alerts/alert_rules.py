"""One domain call per use case on alert rules: create, update, enable, mute,
re-enable a destination. Input has been validated by AlertRuleSerializer; what
the API answers for a rule is shaped in alerts.api_json."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from alerts.conditions import parse_duration
from alerts.models import AlertRule, Destination, RuleState
from tenancy import audit

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


def audited(rule: AlertRule, destinations: list[str] | None = None) -> dict:
    """What the audit log keeps of a rule: what a person set (destinations as
    the delivery log names them, so no secret is copied; read unless given)."""
    if destinations is None:
        destinations = [str(d) for d in rule.destinations_in_project().select_related("shared")]
    return {"name": rule.name, "enabled": rule.enabled, "match": rule.match, "conditions": rule.conditions,
            "for": rule.for_duration, "muted_until": rule.muted_until, "destinations": destinations}


def _object(rule: AlertRule) -> tuple:
    return ("alert_rule", rule.pk, f"alert rule {rule.pk}: {rule.name}")


@transaction.atomic
def create_rule(project, data: dict, actor=None) -> AlertRule:
    rule = AlertRule(project=project)
    _apply(rule, data)
    rule.save()
    replace_destinations(rule, data.get("destinations", []))
    audit.record(project, actor, "alert_rule.create", _object(rule), before={}, after=audited(rule))
    return rule


@transaction.atomic
def update_rule(rule: AlertRule, data: dict, actor=None) -> AlertRule:
    """Partial update; `conditions` and `destinations` are replaced as a whole.
    State is kept: the next evaluation of the new conditions decides."""
    before = audited(rule)
    changed = _apply(rule, data)
    rule.updated_at = timezone.now()
    rule.save(update_fields=[*changed, "updated_at"])
    if "destinations" in data:
        replace_destinations(rule, data["destinations"])
    after = audited(rule, None if "destinations" in data else before["destinations"])
    audit.record(rule.project_id, actor, "alert_rule.update", _object(rule), before=before, after=after)
    return rule


@transaction.atomic
def delete_rule(rule: AlertRule, actor=None) -> None:
    audit.record(rule.project_id, actor, "alert_rule.delete", _object(rule), before=audited(rule), after={})
    rule.delete()


def replace_destinations(rule: AlertRule, destinations: list[dict]) -> None:
    """Keeps the rows (and delivery history) of destinations sent again unchanged."""
    existing = {(d.kind, _key(d.config)): d for d in rule.destinations_in_project()}
    keep, new = [], []
    for position, given in enumerate(destinations):
        config = {k: v for k, v in given.items() if k not in ("type", "shared_id")}
        found = existing.pop((given["type"], _key(config)), None)
        if found:
            if found.position != position:
                Destination.objects.filter(project_id=rule.project_id, pk=found.pk).update(position=position)
            keep.append(found.pk)
        else:
            new.append(Destination(project_id=rule.project_id, rule=rule, kind=given["type"], config=config, position=position,
                                   shared_id=given.get("shared_id")))
    Destination.objects.filter(project_id=rule.project_id, rule=rule).exclude(pk__in=keep).delete()
    Destination.objects.bulk_create(new)


def _key(config: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in config.items()))


def set_enabled(rule: AlertRule, enabled: bool, actor=None) -> None:
    update_rule(rule, {"enabled": enabled}, actor)


def mute(rule: AlertRule, until: datetime | None, actor=None) -> None:
    update_rule(rule, {"muted_until": until}, actor)


@transaction.atomic
def enable_destination(destination: Destination, actor=None) -> None:
    Destination.objects.filter(project_id=destination.project_id, pk=destination.pk).update(disabled_at=None, disabled_reason="")
    rule = destination.rule
    audit.record(rule.project_id, actor, "alert_rule.destination_enable", _object(rule),
                 before={"disabled": destination.disabled_at is not None, "disabled_reason": destination.disabled_reason},
                 after={"disabled": False, "disabled_reason": ""}, extra={"destination": str(destination)})

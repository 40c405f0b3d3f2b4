"""What the alerts API answers for a rule, its destinations and its events, as
plain data (their JSON Schemas are in alerts.api_shapes)."""

from alerts.conditions import load_values
from alerts.messages import rule_url
from alerts.models import AlertEvent, AlertRule, Destination


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
            "values": load_values(event.values), "silenced": event.silenced, "silence_id": event.silence_id,
            "muted": event.muted, "held_back": event.held_back, "sent_late_at": event.sent_late_at}

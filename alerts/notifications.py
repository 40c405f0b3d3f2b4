"""What gets sent: the contract's webhook body, one Delivery row per event and
destination. Bodies are frozen at creation so every attempt sends the same bytes."""

import json
from datetime import datetime

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from alerts.conditions import load_values
from alerts.models import AlertEvent, AlertRule, Delivery, Destination
from provenance.timestamps import utc_iso


def rule_url(rule: AlertRule) -> str:
    return settings.SITE_ROOT.rstrip("/") + reverse("alerts:rule-detail", args=[rule.project.slug, rule.pk])


def body(kind: str, rule: AlertRule, at: datetime, values: list[dict]) -> str:
    # allow_nan: an infinite relative change travels as the `Infinity` token (see conditions.py).
    return json.dumps(
        {"type": kind, "project": rule.project.slug, "rule": {"id": rule.pk, "name": rule.name}, "at": utc_iso(at),
         "values": [{"metric": v["metric"], "value": v["value"]} for v in load_values(values)],
         "url": rule_url(rule)},
        allow_nan=True,
    )


def _delivery(rule: AlertRule, destination: Destination, kind: str, payload: str, event=None,
              max_attempts: int | None = None) -> Delivery:
    return Delivery(project_id=rule.project_id, rule=rule, event=event, destination=destination,
                    target=destination.target[:2000], kind=kind, payload=payload, next_attempt_at=timezone.now(),
                    max_attempts=max_attempts or settings.WEBHOOK_MAX_ATTEMPTS)


def create_deliveries(events: list[AlertEvent]) -> list[Delivery]:
    """One delivery per event and active destination of its rule."""
    if not events:
        return []
    destinations: dict[int, list[Destination]] = {}
    for destination in Destination.objects.filter(rule__in={e.rule_id for e in events}, disabled_at__isnull=True):
        destinations.setdefault(destination.rule_id, []).append(destination)
    deliveries = []
    for event in events:
        payload = body(f"alert.{event.state}", event.rule, event.at, event.values)
        deliveries += [_delivery(event.rule, d, f"alert.{event.state}", payload, event)
                       for d in destinations.get(event.rule_id, [])]
    return Delivery.objects.bulk_create(deliveries)


def create_test_deliveries(rule: AlertRule, values: list[dict]) -> list[Delivery]:
    """A one-attempt `alert.test` to every active destination, with current values."""
    payload = body("alert.test", rule, timezone.now(), values)
    return Delivery.objects.bulk_create(
        [_delivery(rule, d, "alert.test", payload, max_attempts=1)
         for d in rule.destinations.filter(disabled_at__isnull=True)]
    )

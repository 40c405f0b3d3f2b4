"""What gets sent: one Delivery row per message and destination, its body rendered
by the destination's kind (alerts/transports/) and frozen at creation, so every
attempt sends the same bytes."""

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from alerts import messages
from alerts.messages import Message
from alerts.models import AlertEvent, AlertRule, Delivery, Destination
from alerts.transports import transport_class


def _delivery(project_id: int, rule: AlertRule | None, destination: Destination, message: Message,
              rendered: dict, event=None, max_attempts: int | None = None) -> Delivery:
    kind = destination.effective_kind
    if kind not in rendered:
        rendered[kind] = transport_class(kind).render(message)
    return Delivery(project_id=project_id, rule=rule, event=event, destination=destination,
                    target=destination.target[:2000], kind=message.kind, payload=rendered[kind],
                    next_attempt_at=timezone.now(), max_attempts=max_attempts or settings.WEBHOOK_MAX_ATTEMPTS)


def active_destinations(rule_ids) -> dict[int, list[Destination]]:
    found: dict[int, list[Destination]] = {}
    for destination in (Destination.objects.filter(rule__in=rule_ids, disabled_at__isnull=True)
                        .select_related("shared")):
        if not destination.is_disabled:
            found.setdefault(destination.rule_id, []).append(destination)
    return found


def create_deliveries(events: list[AlertEvent]) -> list[Delivery]:
    """One delivery per event and active destination of its rule."""
    if not events:
        return []
    destinations = active_destinations({e.rule_id for e in events})
    deliveries = []
    for event in events:
        message = messages.for_rule(f"alert.{event.state}", event.rule, event.at, event.values)
        rendered: dict[str, str] = {}
        deliveries += [_delivery(event.project_id, event.rule, d, message, rendered, event)
                       for d in destinations.get(event.rule_id, [])]
    return Delivery.objects.bulk_create(deliveries)


def create_test_deliveries(rule: AlertRule, values: list[dict], destination: Destination | None = None
                           ) -> list[Delivery]:
    """A one-attempt `alert.test` with current values, to one destination or every active one."""
    message = messages.for_rule("alert.test", rule, timezone.now(), values)
    chosen = [destination] if destination else active_destinations([rule.pk]).get(rule.pk, [])
    rendered: dict[str, str] = {}
    return Delivery.objects.bulk_create(
        [_delivery(rule.project_id, rule, d, message, rendered, max_attempts=1) for d in chosen]
    )


def create_notice_deliveries(project, at: datetime, detail: str) -> list[Delivery]:
    """A project notice (checks not running) to each distinct destination its enabled rules use."""
    message = messages.checks_not_running(project, at, detail)
    seen, chosen = set(), []
    rule_ids = AlertRule.objects.filter(project=project, enabled=True).values_list("pk", flat=True)
    for destinations in active_destinations(list(rule_ids)).values():
        for destination in destinations:
            key = destination.shared_id or (destination.kind, repr(sorted(destination.config.items())))
            if key not in seen:
                seen.add(key)
                chosen.append(destination)
    rendered: dict[str, str] = {}
    return Delivery.objects.bulk_create([_delivery(project.pk, None, d, message, rendered) for d in chosen])


"""What gets sent: one Delivery row per message and destination, its body rendered
by the destination's kind (alerts/transports/) and frozen, so every attempt
sends the same bytes. A rule's firing or resolution is rendered at its first
attempt (from its event, outside the evaluation's transaction: the tick only
inserts the rows); tests and notices, which have no event, at creation."""

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from alerts import messages
from alerts.messages import Message
from alerts.models import AlertEvent, AlertRule, Delivery, Destination
from alerts.transports import transport_class


def _delivery(project_id: int, rule: AlertRule | None, destination: Destination, kind: str, payload: str,
              event=None, max_attempts: int | None = None) -> Delivery:
    return Delivery(project_id=project_id, rule=rule, event=event, destination=destination,
                    target=destination.target[:2000], kind=kind, payload=payload,
                    next_attempt_at=timezone.now(), max_attempts=max_attempts or settings.WEBHOOK_MAX_ATTEMPTS)


def _rendered(message: Message, destinations: list[Destination]) -> dict[str, str]:
    """The body of `message` for each kind among the destinations, rendered once per kind."""
    return {kind: transport_class(kind).render(message) for kind in {d.effective_kind for d in destinations}}


def body_of(delivery: Delivery) -> str:
    """A rule notification's body, rendered from its event for its destination's kind."""
    event = delivery.event
    message = messages.for_rule(f"alert.{event.state}", event.rule, event.at, event.values)
    return transport_class(delivery.destination.effective_kind).render(message)


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
    return Delivery.objects.bulk_create([_delivery(event.project_id, event.rule, d, f"alert.{event.state}", "", event)
                                         for event in events for d in destinations.get(event.rule_id, [])])


def create_test_deliveries(rule: AlertRule, values: list[dict], destination: Destination | None = None
                           ) -> list[Delivery]:
    """A one-attempt `alert.test` with current values, to one destination or every active one."""
    message = messages.for_rule("alert.test", rule, timezone.now(), values)
    chosen = [destination] if destination else active_destinations([rule.pk]).get(rule.pk, [])
    rendered = _rendered(message, chosen)
    return Delivery.objects.bulk_create(
        [_delivery(rule.project_id, rule, d, message.kind, rendered[d.effective_kind], max_attempts=1) for d in chosen]
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
    rendered = _rendered(message, chosen)
    return Delivery.objects.bulk_create([_delivery(project.pk, None, d, message.kind, rendered[d.effective_kind])
                                         for d in chosen])


"""What gets sent: one Delivery row per message and destination, its body rendered
by the destination's kind (alerts/transports/) and frozen, so every attempt
sends the same bytes. A rule's firing or resolution becomes its rows after the
evaluation has committed (`fan_out`: the tick only marks the events it sends)
and its body is rendered at its first attempt, from its event; tests and
notices, which have no event, are rendered at creation."""

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts import messages
from alerts.messages import Message
from alerts.models import AlertEvent, AlertRule, Delivery, DeliveryStatus, Destination, new_webhook_id
from alerts.transports import transport_class
from core.bulk import bound_cursor, in_list, insert_many
from core.dialect import is_postgres


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


def active_destinations(project_ids, rule_ids) -> dict[int, list[Destination]]:
    found: dict[int, list[Destination]] = {}
    for destination in (Destination.objects.filter(project_id__in=project_ids, rule__in=rule_ids,
                                                   disabled_at__isnull=True)
                        .select_related("shared")):
        if not destination.is_disabled:
            found.setdefault(destination.rule_id, []).append(destination)
    return found


def fan_out(event_ids: list[int]) -> list[int]:
    """The deliveries of these events, one per active destination of the
    event's rule; their ids. Only events the tick marked `fan_out_pending` are
    fanned out, and the mark is cleared in the transaction that inserts their
    deliveries: whoever runs it (the tick's caller, a delivery worker, the
    periodic job, twice or at once), an event's deliveries are made once.

    The claim is by event id across projects, like the delivery worker's claim
    of due deliveries: a background job, under Citus a multi-shard UPDATE."""
    if not event_ids:
        return []
    with transaction.atomic():
        return _create_deliveries(_claim_fan_outs(event_ids))


def pending_fan_outs(limit: int = 1000) -> list[int]:
    """Events whose fan-out has not run (its message was lost, its runner died)."""
    return list(AlertEvent.objects.filter(fan_out_pending=True).order_by("pk").values_list("pk", flat=True)[:limit])


def _claim_fan_outs(event_ids: list[int]) -> list[tuple[int, int, int, str]]:
    """(id, project_id, rule_id, state) of those still pending, now marked done.
    One conditional UPDATE: a concurrent claim of the same event waits for this
    transaction and then finds it done (or, rolled back, still pending)."""
    table = AlertEvent._meta.db_table
    membership, parameters = in_list(event_ids)
    with bound_cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET fan_out_pending = %s WHERE id {membership} AND fan_out_pending = %s "
                       "RETURNING id, project_id, rule_id, state", [False, *parameters, True])
        return cursor.fetchall()


def _create_deliveries(events: list[tuple[int, int, int, str]]) -> list[int]:
    """One delivery per (id, project_id, rule_id, state) and active destination
    of its rule; their ids. The destinations come in one query and the rows go
    in one INSERT, an array only for what differs per row. Bodies are rendered
    at the first attempt."""
    if not events:
        return []
    destinations = active_destinations({project_id for _, project_id, _, _ in events},
                                       {rule_id for _, _, rule_id, _ in events})
    now = timezone.now()
    rows = [(project_id, rule_id, event_id, d.pk, d.target[:2000], new_webhook_id(), f"alert.{state}")
            for event_id, project_id, rule_id, state in events for d in destinations.get(rule_id, [])]
    if not rows:
        return []
    if not is_postgres():
        return [pk for (pk,) in insert_many(
            Delivery._meta.db_table, [*PER_ROW, *SAME_FOR_ALL],
            [], [(*row, "", DeliveryStatus.PENDING, 0, settings.WEBHOOK_MAX_ATTEMPTS, now, "", "", now) for row in rows],
            returning="id")]
    with bound_cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Delivery._meta.db_table} ({', '.join(PER_ROW)}, {', '.join(SAME_FOR_ALL)}) "
            f"SELECT u.*, '', %s, 0, %s, %s, '', '', %s FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], "
            f"%s::bigint[], %s::text[], %s::text[], %s::text[]) AS u RETURNING id",
            [DeliveryStatus.PENDING, settings.WEBHOOK_MAX_ATTEMPTS, now, now, *map(list, zip(*rows))])
        return [pk for (pk,) in cursor.fetchall()]


PER_ROW = ["project_id", "rule_id", "event_id", "destination_id", "target", "webhook_id", "kind"]
SAME_FOR_ALL = ["payload", "status", "attempt_count", "max_attempts", "next_attempt_at", "claim_token", "last_error",
                "created_at"]


def create_test_deliveries(rule: AlertRule, values: list[dict], destination: Destination | None = None
                           ) -> list[Delivery]:
    """A one-attempt `alert.test` with current values, to one destination or every active one."""
    message = messages.for_rule("alert.test", rule, timezone.now(), values)
    chosen = [destination] if destination else active_destinations([rule.project_id], [rule.pk]).get(rule.pk, [])
    rendered = _rendered(message, chosen)
    return Delivery.objects.bulk_create(
        [_delivery(rule.project_id, rule, d, message.kind, rendered[d.effective_kind], max_attempts=1) for d in chosen]
    )


def create_notice_deliveries(project, at: datetime, detail: str) -> list[Delivery]:
    """A project notice (checks not running) to each distinct destination its enabled rules use."""
    message = messages.checks_not_running(project, at, detail)
    seen, chosen = set(), []
    rule_ids = AlertRule.objects.filter(project=project, enabled=True).values_list("pk", flat=True)
    for destinations in active_destinations([project.pk], list(rule_ids)).values():
        for destination in destinations:
            key = destination.shared_id or (destination.kind, repr(sorted(destination.config.items())))
            if key not in seen:
                seen.add(key)
                chosen.append(destination)
    rendered = _rendered(message, chosen)
    return Delivery.objects.bulk_create([_delivery(project.pk, None, d, message.kind, rendered[d.effective_kind])
                                         for d in chosen])


"""Delivery attempts: claim, send, record, reschedule.

The schedule lives in `Delivery.next_attempt_at`. Claiming a due delivery moves
that time forward by a lease in one conditional UPDATE that also stamps a claim
token; only the holder of the token records the outcome. A runner that dies
mid-attempt leaves the lease to expire, and the delivery becomes due again with
the same webhook-id (at-least-once). Sending happens outside any transaction.
"""

import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F
from django.utils import timezone

from alerts import notifications
from alerts.models import AttemptStatus, Delivery, DeliveryAttempt, DeliveryStatus, Destination, SharedDestination
from alerts.transports import TransportError, transport_for
from core.process_metrics import WEBHOOK_DELIVERIES

logger = logging.getLogger(__name__)

PARALLEL = 8  # delivery threads at most; see parallel()
MAX_BACKOFF = timedelta(hours=6)
INTERRUPTED = "the runner stopped before this attempt ended (its claim ran out); the delivery was tried again"


def lease() -> timedelta:
    # Longer than any attempt can take (the transport's deadline), with room to record it.
    return timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT_SECONDS + 5)


def backoff(attempt_number: int) -> timedelta:
    """Wait after the n-th failed attempt: base, 2·base, 4·base, … (capped)."""
    return min(timedelta(seconds=settings.WEBHOOK_RETRY_BASE_SECONDS * 2 ** (attempt_number - 1)), MAX_BACKOFF)


@dataclass(frozen=True)
class Outcome:
    success: bool
    latency_ms: int
    status_code: int | None = None
    response_excerpt: str = ""
    error: str = ""
    permanent: bool = False
    disable_destination: bool = False


def _claim(ids: list[int], now: datetime) -> tuple[str, list[tuple[Delivery, DeliveryAttempt]]]:
    token = uuid.uuid4().hex
    with transaction.atomic():
        Delivery.objects.filter(pk__in=ids, status=DeliveryStatus.PENDING, next_attempt_at__lte=now).update(
            next_attempt_at=now + lease(), attempt_count=F("attempt_count") + 1, claim_token=token
        )
        claimed = list(Delivery.objects.filter(pk__in=ids, claim_token=token)
                       .select_related("destination__shared", "event__rule__project"))
        # A claim is taken over only once the last one ran out: an attempt still
        # unfinished then was cut short (its runner was killed mid-send).
        DeliveryAttempt.objects.filter(project_id__in={d.project_id for d in claimed}, delivery__in=claimed,
                                       status=AttemptStatus.IN_PROGRESS).update(
            status=AttemptStatus.INTERRUPTED, error=INTERRUPTED)
        attempts = DeliveryAttempt.objects.bulk_create(
            [DeliveryAttempt(project_id=d.project_id, delivery=d, number=d.attempt_count, started_at=now) for d in claimed]
        )
    return token, list(zip(claimed, attempts))


def parallel() -> int:
    """How many deliveries are sent at once: PARALLEL, but never more than half
    the database connection pool. A send may write (the inbox keeps a row), so
    each thread may hold a connection; the other half stays for this runner and
    whatever else the process serves (the embedded scheduler runs in a web worker)."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if not isinstance(pool, dict) or not pool.get("max_size"):
        return PARALLEL
    return max(1, min(PARALLEL, pool["max_size"] // 2))


def _send_in_thread(delivery: Delivery) -> Outcome:
    try:
        return _send(delivery)
    finally:
        # A thread's connection goes back to the pool only when closed: left
        # open, every round of threads took more until none was left.
        connections.close_all()


def _send(delivery: Delivery) -> Outcome:
    started = time.monotonic()

    def elapsed() -> int:
        return round((time.monotonic() - started) * 1000)

    try:
        if delivery.destination is None or delivery.destination.is_disabled:
            raise TransportError("the destination was removed or disabled", permanent=True)
        if not delivery.payload:
            # Rendered at the first attempt and kept by _record: every later one sends these bytes.
            delivery.payload = notifications.body_of(delivery)
        sent = transport_for(delivery.destination).notify(delivery)
        return Outcome(True, elapsed(), sent.status_code, sent.response_excerpt)
    except TransportError as error:
        return Outcome(False, elapsed(), error.status_code, error.response_excerpt, error.message,
                       error.permanent, error.disable_destination)
    except Exception as error:  # a transport bug must not strand the delivery
        logger.exception("delivery %s: transport failed", delivery.pk)
        return Outcome(False, elapsed(), error=f"internal error: {type(error).__name__}")


def _record(delivery: Delivery, attempt: DeliveryAttempt, outcome: Outcome, token: str) -> None:
    now = timezone.now()
    DeliveryAttempt.objects.filter(project_id=attempt.project_id, pk=attempt.pk).update(
        finished_at=now, success=outcome.success,
        status=AttemptStatus.OK if outcome.success else AttemptStatus.FAILED, status_code=outcome.status_code, latency_ms=outcome.latency_ms,
        response_excerpt=outcome.response_excerpt[:1000], error=outcome.error[:500],
    )
    if outcome.success:
        change = {"status": DeliveryStatus.DELIVERED, "next_attempt_at": None, "finished_at": now, "last_error": ""}
        counted = "delivered"
    elif outcome.permanent or attempt.number >= delivery.max_attempts:
        change = {"status": DeliveryStatus.FAILED, "next_attempt_at": None, "finished_at": now,
                  "last_error": outcome.error[:500]}
        counted = "failed"
    else:
        change = {"next_attempt_at": now + backoff(attempt.number), "last_error": outcome.error[:500]}
        counted = "retrying"
    if delivery.payload:
        change["payload"] = delivery.payload
    if Delivery.objects.filter(project_id=delivery.project_id, id=delivery.pk, claim_token=token).update(**change):
        WEBHOOK_DELIVERIES.labels(counted).inc()
    if outcome.disable_destination and delivery.destination_id:
        # A project-wide destination that is gone is gone for every rule using it.
        shared_id = delivery.destination.shared_id if delivery.destination else None
        rows = (SharedDestination.objects.filter(project_id=delivery.project_id, pk=shared_id) if shared_id
                else Destination.objects.filter(project_id=delivery.project_id, pk=delivery.destination_id))
        rows.filter(disabled_at__isnull=True).update(disabled_at=now, disabled_reason=outcome.error[:300])


def attempt_many(ids: list[int]) -> None:
    """One attempt of each of these deliveries that is due and not claimed by
    another runner; a few at a time, so no lease runs out while queued."""
    step = parallel()
    for start in range(0, len(ids), step):
        token, claimed = _claim(ids[start : start + step], timezone.now())
        if len(claimed) == 1:
            outcomes = [_send(claimed[0][0])]
        elif claimed:
            with ThreadPoolExecutor(len(claimed)) as pool:
                outcomes = list(pool.map(_send_in_thread, [delivery for delivery, _ in claimed]))
        else:
            continue
        for (delivery, attempt), outcome in zip(claimed, outcomes):
            _record(delivery, attempt, outcome, token)


def due_ids(now: datetime, limit: int = 1000) -> list[int]:
    return list(
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )

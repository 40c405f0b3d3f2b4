"""When to try a delivery again, and after how long."""

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# Statuses the server uses for "come back later" (as in OTLP/HTTP): retried as long as it takes.
RETRY_LATER = {429, 502, 503, 504}
LONGEST_RETRY_AFTER = 300.0


def backoff(attempt: int, base: float, cap: float) -> float:
    """Exponential with jitter, so a fleet of agents does not retry in step."""
    return min(cap, base * 2**attempt) * random.uniform(0.5, 1.0)


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), LONGEST_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), LONGEST_RETRY_AFTER)

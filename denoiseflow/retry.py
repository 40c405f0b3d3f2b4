"""When to try a delivery again, and after how long."""

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# Answers that mean "not stored, come back later": retried with backoff (or as
# Retry-After says) for as long as it takes, like a timeout or a refused
# connection. A 500 is among them: a database failing mid-request, or a proxy
# in front of the dashboard, answers 500 for a batch that a later attempt
# stores; giving up after a fixed number of them lost events in an outage.
# Memory stays bounded by the recorder's buffer, whose drops are counted.
RETRY_LATER = {429, 500, 502, 503, 504}
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

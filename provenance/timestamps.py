"""How every answer and page writes a moment: ISO 8601 in UTC with a `Z`."""

from datetime import UTC, datetime


def utc_iso(moment: datetime | None) -> str | None:
    """`2026-12-01T09:30:00Z` (microseconds kept when there are any); None stays None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")

"""Moments, one way across the product.

Written: ISO 8601 in UTC with a `Z` (`utc_iso`), in every answer and page.
Read: ISO 8601, a time without an offset being UTC, within the years the
server stores (`parse_instant`), for ingest, query parameters and `--now`.

Loaded: PostgreSQL keeps timestamps from 4713 BC to 294276 AD (and
±infinity); Python's datetime spans years 1 to 9999. Ingest refuses anything
outside 1970–2200 now, but a row written before that rule (or by hand) would
make every read that touches it raise, and even deleting its trace through the
ORM reads it first. So on PostgreSQL such a value loads as the nearest
representable instant, a day inside the calendar's edges so that time zone
arithmetic on it cannot overflow (`install_clamping_loaders`)."""

from datetime import UTC, date, datetime

from core.dialect import is_postgres

# Stored timestamps stay far from the calendar's edges, where datetime
# arithmetic and PostgreSQL's BC dates break reads.
FIRST_YEAR, LAST_YEAR = 1970, 2200
EARLIEST = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(LAST_YEAR + 1, 1, 1, tzinfo=UTC)


def utc_iso(moment: datetime | None) -> str | None:
    """`2026-12-01T09:30:00Z` (microseconds kept when there are any); None stays None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_instant(value) -> datetime:
    """An aware datetime, or ValueError saying why not (without naming the
    field: the caller knows which one it read)."""
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not ISO 8601") from None
    # The local year first: converting year 1 with an offset to UTC overflows.
    if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
        raise ValueError(f"{value[:40]!r} is outside the years {FIRST_YEAR} to {LAST_YEAR}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if not EARLIEST <= parsed < LATEST:
        raise ValueError(f"{value[:40]!r} is outside the years {FIRST_YEAR} to {LAST_YEAR}")
    return parsed


# What a stored value outside datetime's range loads as (see above).
SMALLEST = datetime(1, 1, 2, tzinfo=UTC)
LARGEST = datetime(9999, 12, 30, tzinfo=UTC)


def install_clamping_loaders(sender, connection, **kwargs) -> None:
    """`connection_created` receiver: registers the clamping loaders once per
    database connection (pooled connections keep them)."""
    if not is_postgres(connection):
        return
    from psycopg.adapt import Loader
    from psycopg.types.datetime import DateLoader, TimestampLoader

    adapters = connection.connection.adapters
    django_tz_loader = adapters.get_loader(adapters.types["timestamptz"].oid, 0)
    if getattr(django_tz_loader, "clamps", False):
        return

    def clamping(base: type[Loader], smallest, largest) -> type[Loader]:
        class Clamping(base):
            clamps = True

            def load(self, data):
                try:
                    return super().load(data)
                except connection.Database.DataError as error:
                    return smallest if "small" in str(error) else largest

        Clamping.__name__ = f"Clamping{base.__name__}"
        return Clamping

    # Django's own timestamptz loader carries the connection's time zone (it
    # compares that attribute per cursor): subclass it rather than replace it.
    adapters.register_loader("timestamptz", clamping(django_tz_loader, SMALLEST, LARGEST))
    adapters.register_loader(
        "timestamp", clamping(TimestampLoader, SMALLEST.replace(tzinfo=None), LARGEST.replace(tzinfo=None))
    )
    adapters.register_loader("date", clamping(DateLoader, date(1, 1, 2), date(9999, 12, 30)))

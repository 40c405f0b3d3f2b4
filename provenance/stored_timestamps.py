"""Reading dates that Python cannot hold.

PostgreSQL keeps timestamps from 4713 BC to 294276 AD (and ±infinity); Python's
datetime spans years 1 to 9999. Ingest refuses anything outside 1970–2200 now,
but a row written before that rule (or by hand) would make every read that
touches it raise, and even deleting its trace through the ORM reads it first.
So on PostgreSQL such a value loads as the nearest representable instant, a day
inside the calendar's edges so that time zone arithmetic on it cannot overflow."""

from datetime import UTC, date, datetime

SMALLEST = datetime(1, 1, 2, tzinfo=UTC)
LARGEST = datetime(9999, 12, 30, tzinfo=UTC)


def install_clamping_loaders(sender, connection, **kwargs) -> None:
    """`connection_created` receiver: registers the clamping loaders once per
    database connection (pooled connections keep them)."""
    if connection.vendor != "postgresql":
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

"""Reading the day-grain rollups (histograms, fuse reasons), which only ever
grow: whole days come from the rollup plus whatever arrived after the
watermark; partial days at the window's ends come from a raw scan."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from metrics.figures import bucket_floor
from metrics.models import Watermark

DAY = timedelta(days=1)


@dataclass(frozen=True)
class DaySplit:
    days: tuple[datetime, datetime] | None  # whole days, read from the rollup
    edges: list[tuple[datetime, datetime]]  # partial days, scanned raw


def split_days(start: datetime, end: datetime) -> DaySplit:
    first = bucket_floor(start, "day")
    if first < start:
        first += DAY
    last = bucket_floor(end, "day")
    if first >= last:
        return DaySplit(None, [(start, end)] if start < end else [])
    edges = [(start, first)] if start < first else []
    if last < end:
        edges.append((last, end))
    return DaySplit((first, last), edges)


def watermark() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT node_id, fuse_id FROM {Watermark._meta.db_table} WHERE id = 1")
        row = cursor.fetchone()
    return row or (0, 0)


def intervals_sql(column: str, intervals: list[tuple]) -> tuple[str, list]:
    clause = " OR ".join([f"({column} >= %s AND {column} < %s)"] * len(intervals))
    return f"({clause})", [moment for interval in intervals for moment in interval]


def bucket_sql(step: str, column: str) -> str:
    return {"": "NULL::timestamptz", "day": f"date_trunc('day', {column}, 'UTC')",
            "hour": f"date_trunc('hour', {column}, 'UTC')"}[step]

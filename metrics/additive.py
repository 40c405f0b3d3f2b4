"""Reading the additive rollups (day histograms, hour fuse reasons), which
only ever grow: whole buckets come from the rollup plus whatever arrived after
the watermark; partial buckets at the window's ends come from a raw scan."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from metrics.figures import STEP_SECONDS, bucket_floor
from metrics.models import Watermark

@dataclass(frozen=True)
class Split:
    whole: tuple[datetime, datetime] | None  # whole buckets, read from the rollup
    edges: list[tuple[datetime, datetime]]  # partial buckets, scanned raw


def split(start: datetime, end: datetime, grain: str) -> Split:
    first = bucket_floor(start, grain)
    if first < start:
        first += timedelta(seconds=STEP_SECONDS[grain])
    last = bucket_floor(end, grain)
    if first >= last:
        return Split(None, [(start, end)] if start < end else [])
    edges = [(start, first)] if start < first else []
    if last < end:
        edges.append((last, end))
    return Split((first, last), edges)


def watermark() -> tuple[int, int, int]:
    """(node id, fuse id, review id) up to which the rollups have read."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT node_id, fuse_id, review_id FROM {Watermark._meta.db_table} WHERE id = 1")
        row = cursor.fetchone()
    return row or (0, 0, 0)


def intervals_sql(column: str, intervals: list[tuple]) -> tuple[str, list]:
    clause = " OR ".join([f"({column} >= %s AND {column} < %s)"] * len(intervals))
    return f"({clause})", [moment for interval in intervals for moment in interval]


def bucket_sql(step: str, column: str) -> str:
    return {"": "NULL::timestamptz", "day": f"date_trunc('day', {column}, 'UTC')",
            "hour": f"date_trunc('hour', {column}, 'UTC')"}[step]


def fetch(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()

"""The rows of a source table that fall in a set of (project, hour)s.

Joined on `timestamp >= hour AND timestamp < hour + 1 hour`, PostgreSQL
cannot estimate the range from a column of another table: past ~5M nodes it
chose to hash the hours on the project alone and test every node of the
project against every dirty hour (1.3 billion comparisons for a 1M-node
refresh: 44 s, then more each time). Instead the hours are merged into a few
ranges with literal bounds, which the (project, timestamp) index reads and the
planner estimates from its histogram, and each row is matched to its hour by
equality (`date_trunc`), which hashes."""

from datetime import timedelta

# More ranges make a longer OR for the planner; fewer, wider ones read rows
# between dirty hours only to drop them at the join.
MAX_RANGES = 32
HOUR = timedelta(hours=1)


def hour_ranges(cursor, hours_table: str, since: str = "hour") -> list[tuple[int, object, object]]:
    """(project, start, end) ranges covering every hour of `hours_table`
    (columns project_id, hour), each from its column `since` (a moment in
    the hour; by default its start): consecutive hours are one range, and past
    MAX_RANGES the narrowest gaps of a project are closed."""
    cursor.execute(f"SELECT project_id, hour, {since} FROM {hours_table} ORDER BY project_id, hour")
    runs: list[list] = []
    for project, hour, start in cursor.fetchall():
        if runs and runs[-1][0] == project and runs[-1][2] == hour:
            runs[-1][2] = hour + HOUR
        else:
            runs.append([project, start, hour + HOUR])
    if len(runs) > MAX_RANGES:
        gaps = sorted((runs[i + 1][1] - runs[i][2], i) for i in range(len(runs) - 1) if runs[i][0] == runs[i + 1][0])
        closed = {i for _, i in gaps[:len(runs) - MAX_RANGES]}
        merged: list[list] = []
        for i, run in enumerate(runs):
            if i - 1 in closed:
                merged[-1][2] = run[2]
            else:
                merged.append(list(run))
        runs = merged
    return [tuple(run) for run in runs]


def in_hours_sql(cursor, hours_table: str, alias: str, prefix: str, since: str = "hour") -> tuple[str, dict]:
    """A condition on `alias`'s (project_id, timestamp) that keeps at least
    the rows in the hours of `hours_table` (from their `since`, as
    hour_ranges), and its named parameters (named `prefix`_…): the caller
    joins on the hour itself for exactness."""
    ranges = hour_ranges(cursor, hours_table, since)
    if not ranges:
        return "FALSE", {}
    clauses, params = [], {}
    for i, (project, start, end) in enumerate(ranges):
        names = [f"{prefix}_{i}_{part}" for part in ("project", "start", "end")]
        clauses.append(f"({alias}.project_id = %({names[0]})s AND {alias}.timestamp >= %({names[1]})s "
                       f"AND {alias}.timestamp < %({names[2]})s)")
        params.update(zip(names, (project, start, end), strict=True))
    return f"({' OR '.join(clauses)})", params

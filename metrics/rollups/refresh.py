"""Folds new nodes and fuse decisions into the rollups (PostgreSQL only; on
other databases every figure comes from the raw scan).

The watermark is the pair (max node id, max fuse id) read while both tables are
briefly share-locked, so every row at or below it is committed: a transaction
that took a smaller id cannot commit later and be skipped. Then, in one
transaction with the new watermark:

- hour rollups and hour traces are recomputed for every (project, hour) that
  got a node, or a node of which got a fuse decision, since the last refresh
  (fuse decisions arriving after their node change old hours); a project never
  rolled up, or whose high-uncertainty threshold changed, is rebuilt whole;
- minute rollups and minute traces (metrics.rollups.minutes) for the minutes
  of those nodes (a minute's rows depend on its nodes alone);
- trace spans are recomputed for the traces that got nodes, and review
  targets for new reviews and the reviews of those traces;
- day histograms, day statistics (metrics.rollups.day_stats), hour fuse
  reasons and hour escalations, which only ever grow, get the new rows added;
- fuse policy hours are recomputed for the hours (of the decisions) that got
  a decision, a node or news of a trace (metrics.rollups.policy).

Running it twice changes nothing the second time.
"""

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from core.dialect import is_postgres
from metrics.catalog import NODE_SUMS
from metrics.models import (
    DayHistogram,
    DayStat,
    HourEscalation,
    HourFuseReason,
    HourRollup,
    HourTrace,
    MinuteRollup,
    MinuteTrace,
    PolicyHour,
    PolicyItemHour,
    ReviewTarget,
    RolledProject,
    TraceSpan,
    Watermark,
)
from metrics.rollups import appended_hours
from metrics.rollups.day_stats import add_day_stats
from metrics.rollups.hour_groups import (
    NODE_COLUMNS,
    NODE_SOURCE,
    PRODUCTION_NODE,
    insert_hour_traces,
    mask_rollup,
    mask_runs_sql,
    same_group_sql,
    trace_hours_sql,
)
from metrics.rollups.hour_ranges import in_hours_sql
from metrics.rollups.minutes import recompute_minutes
from metrics.rollups.policy import refresh_policy_hours
from metrics.rollups.schema import (
    AGENT_MASKS,
    DIMENSIONS,
    EDGE,
    ESCALATION,
    ESCALATION_NODE_PAIRS,
    EVERY_DIMENSION,
    FUSE,
    FUSE_REASON_PAIRS,
    MASKS,
    NO_DIMENSIONS,
    NODE,
    OTHER_ENVIRONMENTS,
    PLACEHOLDERS,
    PROJECT,
    REVIEW,
    TRACE,
    bin_sql,
    histogram_values_sql,
    production_sql,
    review_target_sql,
)
from metrics.rollups.values import DEFAULT_ENVIRONMENT
from provenance.vocabulary import HIGH_UNCERTAINTY

TARGET, ROLLUP, SPAN = ReviewTarget._meta.db_table, HourRollup._meta.db_table, TraceSpan._meta.db_table
HISTOGRAM, REASON = DayHistogram._meta.db_table, HourFuseReason._meta.db_table
ESCALATIONS, HOUR_TRACE = HourEscalation._meta.db_table, HourTrace._meta.db_table
ROLLUP_MODELS = (HourRollup, HourTrace, MinuteRollup, MinuteTrace, TraceSpan, DayHistogram, DayStat, HourFuseReason,
                 ReviewTarget, HourEscalation, PolicyHour, PolicyItemHour)
ADVISORY_LOCK = 0x6D657472  # "metr"
# The provenance tables the refresh reads.
SOURCES = (NODE, FUSE, REVIEW, ESCALATION, TRACE, EDGE)
# Summed per (hour, trace, dimensions), then per mask; traces and low_traces are counted apart.
COUNTS = NODE_SUMS


@dataclass
class RefreshReport:
    skipped: bool = False
    nodes: int = 0
    fuses: int = 0
    hours: int = 0
    folded_hours: int = 0  # of those, hours that only got new nodes, folded into their rows (not regrouped)
    rebuilt_projects: int = 0
    seconds: float = 0.0
    # Seconds per part of the refresh, in the order they ran (what bench/rollups.py attributes the cost by).
    phases: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str):
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.perf_counter() - started

    def __str__(self):
        if self.skipped:
            return "skipped: another refresh is running or ingest held the tables too long"
        return (f"{self.nodes} new node(s), {self.fuses} new fuse decision(s), {self.hours} hour(s) recomputed "
                f"({self.folded_hours} folded in), "
                f"{self.rebuilt_projects} project(s) rebuilt in {self.seconds:.2f} s")


def refresh_rollups() -> RefreshReport:
    started = time.perf_counter()
    if not is_postgres():
        return RefreshReport(skipped=True)
    try:
        node_high, fuse_high, review_high, escalation_high = committed_high_ids()
    except OperationalError:
        return RefreshReport(skipped=True)
    report = RefreshReport()
    with report.phase("analyze sources"):
        analyze_grown_sources()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [ADVISORY_LOCK])
        if not cursor.fetchone()[0]:
            return RefreshReport(skipped=True)
        # Rebuilds sort every node of a project; keep those sorts in memory.
        cursor.execute("SET LOCAL work_mem = '256MB'")
        # Compiling these one-off plans costs more than running them.
        cursor.execute("SET LOCAL jit = off")
        mark, _ = Watermark.objects.select_for_update().get_or_create(pk=1)
        old_node, old_fuse, old_review = mark.node_id, mark.fuse_id, mark.review_id
        new_node, new_fuse = max(old_node, node_high), max(old_fuse, fuse_high)
        new_review, new_escalation = max(old_review, review_high), max(mark.escalation_id, escalation_high)
        bounds = {"old_node": old_node, "new_node": new_node, "old_fuse": old_fuse, "new_fuse": new_fuse,
                  "old_review": old_review, "new_review": new_review,
                  "old_escalation": mark.escalation_id, "new_escalation": new_escalation}
        cursor.execute(f"CREATE TEMP TABLE {OTHER_ENVIRONMENTS} ON COMMIT DROP AS "
                       f"SELECT id FROM {TRACE} WHERE environment <> %s", [DEFAULT_ENVIRONMENT])
        with report.phase("dirty hours"):
            report.rebuilt_projects = mark_dirty_hours(cursor, bounds)
            cursor.execute("SELECT COUNT(*) FROM metrics_dirty_hours")
            report.hours = cursor.fetchone()[0]
        for name, part in PARTS:
            with report.phase(name):
                part(cursor, bounds)
        record_rolled_projects(cursor)
        cursor.execute("SELECT COUNT(*) FILTER (WHERE NOT whole) FROM metrics_dirty_hours")
        report.folded_hours = cursor.fetchone()[0]
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {NODE} WHERE id > %(old_node)s AND id <= %(new_node)s), "
            f"(SELECT COUNT(*) FROM {FUSE} WHERE id > %(old_fuse)s AND id <= %(new_fuse)s)",
            bounds,
        )
        report.nodes, report.fuses = cursor.fetchone()
        mark.node_id, mark.fuse_id, mark.review_id = new_node, new_fuse, new_review
        mark.escalation_id = new_escalation
        mark.refreshed_at = timezone.now()
        mark.save()
        cursor.execute(f"DROP TABLE IF EXISTS metrics_dirty_minutes, metrics_dirty_hours, metrics_rebuilt_projects, "
                       f"{OTHER_ENVIRONMENTS}")
    if report.rebuilt_projects:
        with report.phase("vacuum/analyze rollups"):
            analyze_rollups()
    report.seconds = time.perf_counter() - started
    return report


def analyze_rollups() -> None:
    """A rebuild grows the rollup tables from nothing: without fresh
    statistics (autovacuum may be off, or not there yet) the planner takes
    them for empty and the pages read them by the wrong plan; and until a
    vacuum marks their pages all-visible, a read of a month of bins fetches
    every row from the heap instead of the index that carries its figures.
    (VACUUM cannot run inside a transaction: there, ANALYZE alone.)"""
    command = "ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)"
    with connection.cursor() as cursor:
        for model in ROLLUP_MODELS:
            cursor.execute(f"{command} {model._meta.db_table}")


def analyze_grown_sources() -> None:
    """ANALYZEs the tables the refresh reads that grew or changed by more than
    autovacuum's analyze threshold since their last statistics, as autovacuum
    would (where it runs, this finds nothing to do). A refresh over a large
    new range otherwise plans on the statistics of a far smaller table (or
    none): joins on the node table estimated at a few rows become nested
    loops over all of it. Outside the refresh's transaction, so the lock an
    ANALYZE takes is not held through it."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
            WHERE s.relname = ANY(%s) AND s.schemaname = current_schema()
              AND s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
                  + current_setting('autovacuum_analyze_scale_factor')::float8 * GREATEST(c.reltuples, 0)
            """,
            [list(SOURCES)],
        )
        for (table,) in cursor.fetchall():
            cursor.execute(f"ANALYZE {table}")


def committed_high_ids() -> tuple[int, int, int, int]:
    """The highest node, fuse, review and escalation ids once every writer in flight has committed."""
    with transaction.atomic(), connection.cursor() as cursor:
        # Ingest takes these tables in either order (node then fuse, or fuse then
        # node), so this can deadlock with it; giving up well before the deadlock
        # detector (deadlock_timeout, 1 s) runs makes the refresh the one that
        # yields, never an ingest. The next tick tries again.
        cursor.execute("SET LOCAL lock_timeout = '300ms'")
        cursor.execute(f"LOCK TABLE {NODE}, {FUSE}, {REVIEW}, {ESCALATION} IN SHARE MODE")
        cursor.execute(f"SELECT (SELECT COALESCE(MAX(id), 0) FROM {NODE}), (SELECT COALESCE(MAX(id), 0) FROM {FUSE}), "
                       f"(SELECT COALESCE(MAX(id), 0) FROM {REVIEW}), (SELECT COALESCE(MAX(id), 0) FROM {ESCALATION})")
        return cursor.fetchone()


def mark_dirty_hours(cursor, bounds: dict) -> int:
    """Fills metrics_dirty_minutes(project_id, minute, changed, first_new), metrics_dirty_hours(project_id,
    hour, whole, first_minute, first_new) and metrics_rebuilt_projects; returns how many projects are
    rebuilt whole."""
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_rebuilt_projects ON COMMIT DROP AS
        SELECT p.id AS project_id, p.high_uncertainty_threshold AS threshold
        FROM {PROJECT} p LEFT JOIN {RolledProject._meta.db_table} r ON r.project_id = p.id
        WHERE (r.id IS NULL AND EXISTS (SELECT 1 FROM {NODE} n WHERE n.project_id = p.id AND n.id <= %(new_node)s))
           OR r.threshold <> p.high_uncertainty_threshold
        """,
        bounds,
    )
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_dirty_minutes ON COMMIT DROP AS
        SELECT project_id, date_trunc('minute', timestamp, 'UTC') AS minute, bool_or(changed) AS changed,
            MIN(timestamp) FILTER (WHERE NOT changed) AS first_new FROM (
            SELECT n.project_id, n.timestamp, false AS changed FROM {NODE} n
            WHERE n.id > %(old_node)s AND n.id <= %(new_node)s
            UNION ALL
            SELECT n.project_id, n.timestamp, n.id <= %(old_node)s FROM {FUSE} f
            JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id
            WHERE f.id > %(old_fuse)s AND f.id <= %(new_fuse)s AND n.id <= %(new_node)s
            UNION ALL
            SELECT n.project_id, n.timestamp, true FROM {NODE} n
            WHERE n.project_id IN (SELECT project_id FROM metrics_rebuilt_projects) AND n.id <= %(new_node)s
        ) AS touched
        GROUP BY 1, 2
        """,
        bounds,
    )
    # An hour is regrouped whole when a rolled node of it changed (a fuse
    # decision about it, a rebuild); otherwise it only got new nodes, the
    # first at first_new, and is folded in (metrics.rollups.appended_hours).
    cursor.execute("CREATE TEMP TABLE metrics_dirty_hours ON COMMIT DROP AS "
                   "SELECT project_id, date_trunc('hour', minute, 'UTC') AS hour, bool_or(changed) AS whole, "
                   "MIN(minute) AS first_minute, MIN(first_new) AS first_new FROM metrics_dirty_minutes GROUP BY 1, 2")
    cursor.execute("ANALYZE metrics_dirty_minutes")
    cursor.execute("ANALYZE metrics_dirty_hours")
    cursor.execute("SELECT COUNT(*) FROM metrics_rebuilt_projects")
    return cursor.fetchone()[0]


def recompute_hours(cursor, bounds: dict) -> None:
    """Hour rollups and hour traces of the dirty hours: hours that only got
    new nodes folded in (metrics.rollups.appended_hours), the others regrouped
    whole. Leaves metrics_dirty_nodes (the nodes of every dirty minute, at
    least) for the minute rollups (metrics.rollups.minutes)."""
    appended_hours.plan(cursor, bounds)
    regroup_whole_hours(cursor, bounds)
    appended_hours.fold(cursor)


def regroup_whole_hours(cursor, bounds: dict) -> None:
    cursor.execute("CREATE TEMP TABLE metrics_whole_hours ON COMMIT DROP AS "
                   "SELECT project_id, hour FROM metrics_dirty_hours WHERE whole")
    cursor.execute("ANALYZE metrics_whole_hours")
    # Every mask named: the rollup's index is (project, mask, hour), and an
    # hour alone would be looked for in all of the project's rows.
    cursor.execute(
        f"DELETE FROM {ROLLUP} r USING metrics_whole_hours d WHERE r.project_id = d.project_id "
        f"AND r.mask = ANY(%s) AND r.hour = d.hour",
        [list(MASKS)],
    )
    cursor.execute(
        f"DELETE FROM {HOUR_TRACE} r USING metrics_whole_hours d WHERE r.project_id = d.project_id AND r.hour = d.hour"
    )
    in_whole_hours, params = in_hours_sql(cursor, "metrics_whole_hours", "n", "whole")
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_dirty_nodes ON COMMIT DROP AS
        SELECT {NODE_COLUMNS} FROM {NODE_SOURCE}
        JOIN metrics_whole_hours d ON d.project_id = n.project_id AND d.hour = date_trunc('hour', n.timestamp, 'UTC')
        WHERE {in_whole_hours} AND n.id <= %(new_node)s AND {PRODUCTION_NODE}
        """,
        {**bounds, **params},
    )
    cursor.execute("ANALYZE metrics_dirty_nodes")
    cursor.execute(f"CREATE TEMP TABLE metrics_trace_hours ON COMMIT DROP AS {trace_hours_sql('metrics_dirty_nodes')}")
    cursor.execute("ANALYZE metrics_trace_hours")
    insert_hour_traces(cursor, "metrics_trace_hours")
    # Runs only matter where an agent had a fused node that hour; they are
    # worked out before the rollup rows are written, which then carry them
    # (an UPDATE afterwards would write every agent row twice).
    cursor.execute(
        """
        CREATE TEMP TABLE metrics_run_nodes ON COMMIT DROP AS
        SELECT n.* FROM metrics_dirty_nodes n
        JOIN (SELECT DISTINCT project_id, hour, agent_id FROM metrics_trace_hours WHERE fused > 0) f
        USING (project_id, hour, agent_id)
        """
    )
    cursor.execute("ANALYZE metrics_run_nodes")
    cursor.execute(
        "CREATE TEMP TABLE metrics_runs ON COMMIT DROP AS "
        + " UNION ALL ".join(mask_runs_sql(mask, "metrics_run_nodes") for mask in AGENT_MASKS)
    )
    cursor.execute("ANALYZE metrics_runs")
    # In (mask, hour) order, that of the index the readers use.
    cursor.execute(
        f"""
        INSERT INTO {ROLLUP} (project_id, hour, mask, {", ".join(DIMENSIONS)}, traces, low_traces,
            {", ".join(COUNTS)}, run_prefix, run_suffix, run_best)
        SELECT m.*, COALESCE(s.prefix, 0), COALESCE(s.suffix, 0), COALESCE(s.best, 0)
        FROM ({" UNION ALL ".join(mask_rollup(mask, "metrics_trace_hours") for mask in MASKS)}) AS m
        LEFT JOIN metrics_runs s ON {same_group_sql("s", "m")}
        ORDER BY m.mask, m.hour
        """
    )
    cursor.execute("DROP TABLE metrics_whole_hours, metrics_trace_hours, metrics_run_nodes, metrics_runs")


def recompute_trace_spans(cursor, bounds: dict) -> None:
    """Leaves metrics_touched_traces (traces that got nodes) for resolve_review_targets."""
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_touched_traces ON COMMIT DROP AS
        SELECT DISTINCT trace_id FROM {NODE} WHERE id > %(old_node)s AND id <= %(new_node)s
        UNION
        SELECT id FROM {TRACE} WHERE project_id IN (SELECT project_id FROM metrics_rebuilt_projects)
        """,
        bounds,
    )
    cursor.execute("ANALYZE metrics_touched_traces")
    cursor.execute(f"DELETE FROM {SPAN} WHERE trace_pk IN (SELECT trace_id FROM metrics_touched_traces)")
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_presence ON COMMIT DROP AS
        SELECT DISTINCT n.project_id, n.trace_id, date_trunc('hour', n.timestamp, 'UTC') AS hour, n.agent_id, n.step,
            n.source_type, n.round, {HIGH_UNCERTAINTY.flag_sql('n', threshold='p.high_uncertainty_threshold')} AS low
        FROM metrics_touched_traces t
        JOIN {NODE} n ON n.trace_id = t.trace_id
        JOIN {PROJECT} p ON p.id = n.project_id
        WHERE n.id <= %(new_node)s AND {PRODUCTION_NODE}
        """,
        bounds,
    )
    cursor.execute(
        f"""
        WITH spanning AS (SELECT trace_id FROM metrics_presence GROUP BY trace_id HAVING COUNT(DISTINCT hour) > 1)
        INSERT INTO {SPAN} (project_id, trace_pk, hour, mask, agent_id, step, source_type, round, low)
        SELECT project_id, trace_id, hour, {EVERY_DIMENSION}, agent_id, step, source_type, round, low FROM metrics_presence
        WHERE trace_id IN (SELECT trace_id FROM spanning)
        UNION ALL
        SELECT project_id, trace_id, hour, {NO_DIMENSIONS}, {", ".join(PLACEHOLDERS.values())}, bool_or(low) FROM metrics_presence
        WHERE trace_id IN (SELECT trace_id FROM spanning) GROUP BY project_id, trace_id, hour
        """
    )
    cursor.execute("DROP TABLE metrics_presence")


def resolve_review_targets(cursor, bounds: dict) -> None:
    """(Re)resolves the node of new reviews, of reviews in traces that got
    nodes (a final answer may have arrived) and of reviews naming a product
    that just arrived."""
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_stale_reviews ON COMMIT DROP AS
        SELECT id FROM {REVIEW} WHERE id > %(old_review)s AND id <= %(new_review)s
        UNION
        SELECT r.id FROM {REVIEW} r JOIN metrics_touched_traces t ON t.trace_id = r.trace_id
        WHERE r.id <= %(new_review)s
        UNION
        SELECT r.id FROM {NODE} n JOIN {REVIEW} r ON r.project_id = n.project_id AND r.product_id = n.product_id
        WHERE n.id > %(old_node)s AND n.id <= %(new_node)s AND r.id <= %(new_review)s
        """,
        bounds,
    )
    cursor.execute(f"DELETE FROM {TARGET} WHERE review_id IN (SELECT id FROM metrics_stale_reviews)")
    cursor.execute(
        f"""
        INSERT INTO {TARGET} (review_id, project_id, node_pk, confidence, metrics, agent_id, step, source_type, round)
        SELECT r.id, r.project_id, n.id, n.confidence, COALESCE(n.metrics, '{{}}'::jsonb),
            COALESCE(n.agent_id, ''), COALESCE(n.step, ''), COALESCE(n.source_type, ''), n.round
        FROM {REVIEW} r
        LEFT JOIN {NODE} n ON n.id = ({review_target_sql("r", up_to="%(new_node)s")})
        WHERE r.id IN (SELECT id FROM metrics_stale_reviews) AND {production_sql("r.trace_id")}
        """,
        bounds,
    )
    cursor.execute("DROP TABLE metrics_touched_traces, metrics_stale_reviews")


def add_histograms(cursor, bounds: dict) -> None:
    where = f"n.id > %(old_node)s AND n.id <= %(new_node)s AND {PRODUCTION_NODE}"
    grouped = f"""
        SELECT project_id, date_trunc('day', timestamp, 'UTC') AS day, agent_id, step, source_type, round, metric,
               {bin_sql("x")} AS bin, COUNT(*) AS n
        FROM ({histogram_values_sql(where)}) AS v GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    """
    cursor.execute(
        f"""
        INSERT INTO {HISTOGRAM} AS h (project_id, day, agent_id, step, source_type, round, metric, bin, n)
        {grouped}
        ON CONFLICT (project_id, day, agent_id, step, source_type, round, metric, bin)
        DO UPDATE SET n = h.n + EXCLUDED.n
        """,
        bounds,
    )


def add_fuse_reasons(cursor, bounds: dict) -> None:
    """Each (fuse, node) pair is new exactly once: when the later of the two arrived."""
    cursor.execute(
        f"""
        INSERT INTO {REASON} AS r (project_id, hour, agent_id, step, source_type, round, decision, reason, n)
        SELECT project_id, hour, agent_id, step, source_type, round, decision, reason, COUNT(*) FROM (
            {FUSE_REASON_PAIRS}
            WHERE f.id > %(old_fuse)s AND f.id <= %(new_fuse)s AND n.id <= %(new_node)s AND {PRODUCTION_NODE}
            UNION ALL
            {FUSE_REASON_PAIRS}
            WHERE n.id > %(old_node)s AND n.id <= %(new_node)s AND f.id <= %(old_fuse)s AND {PRODUCTION_NODE}
        ) AS pairs
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
        ON CONFLICT (project_id, hour, agent_id, step, source_type, round, decision, reason)
        DO UPDATE SET n = r.n + EXCLUDED.n
        """,
        bounds,
    )


def add_escalations(cursor, bounds: dict) -> None:
    """Every escalation once (mask NO_DIMENSIONS) when it arrives; each
    (escalation, node) pair once (mask EVERY_DIMENSION) when the later of the two arrived."""
    placeholders = ", ".join(f"{value} AS {column}" for column, value in PLACEHOLDERS.items())
    cursor.execute(
        f"""
        INSERT INTO {ESCALATIONS} AS h (project_id, hour, mask, {", ".join(DIMENSIONS)}, n)
        SELECT project_id, hour, mask, {", ".join(DIMENSIONS)}, COUNT(*) FROM (
            SELECT project_id, date_trunc('hour', timestamp, 'UTC') AS hour, {NO_DIMENSIONS} AS mask, {placeholders}
            FROM {ESCALATION} WHERE id > %(old_escalation)s AND id <= %(new_escalation)s AND {production_sql("trace_id")}
            UNION ALL
            SELECT project_id, hour, {EVERY_DIMENSION}, {", ".join(DIMENSIONS)} FROM ({ESCALATION_NODE_PAIRS}
                WHERE e.id > %(old_escalation)s AND e.id <= %(new_escalation)s AND n.id <= %(new_node)s
                    AND {production_sql("e.trace_id")}
                UNION ALL
                {ESCALATION_NODE_PAIRS}
                WHERE n.id > %(old_node)s AND n.id <= %(new_node)s AND e.id <= %(old_escalation)s
                    AND {production_sql("e.trace_id")}) AS pairs
        ) AS counted
        GROUP BY 1, 2, 3, 4, 5, 6, 7
        ON CONFLICT (project_id, hour, mask, {", ".join(DIMENSIONS)}) DO UPDATE SET n = h.n + EXCLUDED.n
        """,
        bounds,
    )


def record_rolled_projects(cursor) -> None:
    cursor.execute(
        f"""
        INSERT INTO {RolledProject._meta.db_table} (project_id, threshold, rolled_at)
        SELECT project_id, threshold, now() FROM metrics_rebuilt_projects
        ON CONFLICT (project_id) DO UPDATE SET threshold = EXCLUDED.threshold, rolled_at = EXCLUDED.rolled_at
        """
    )


# The refresh's parts after the dirty hours, in order, named as RefreshReport.phases reports them.
PARTS = (
    ("hour rollups and traces", recompute_hours),
    ("minute rollups", recompute_minutes),
    ("trace spans", recompute_trace_spans),
    ("review targets", resolve_review_targets),
    ("day histograms", add_histograms),
    ("day stats", add_day_stats),
    ("fuse reasons", add_fuse_reasons),
    ("escalations", add_escalations),
    ("policy hours", refresh_policy_hours),
)

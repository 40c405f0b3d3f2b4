"""The minute rollups of the dirty minutes (metrics.models.MinuteRollup and
MinuteTrace): those of new nodes, of nodes a fuse decision changed, every
minute of a project rebuilt. A minute's rows depend on its nodes alone, so
under steady ingest a refresh groups the last minute or two, not the hour the
hour rollups recompute. Run by the refresh after the hour rollups, in the
same transaction and from their dirty nodes, so a minute's rows hold exactly
its nodes up to the watermark."""

from metrics.catalog import COUNTED, FLOAT_SUMS, NODE_SUMS
from metrics.models import MinuteRollup, MinuteTrace
from metrics.rollups.fused_runs import runs_sql
from metrics.rollups.schema import AGENT_MASK, NO_DIMENSIONS, PLACEHOLDERS
from provenance.vocabulary import HIGH_UNCERTAINTY

MINUTE_ROLLUP, MINUTE_TRACE = MinuteRollup._meta.db_table, MinuteTrace._meta.db_table
MINUTE_MASKS = (NO_DIMENSIONS, AGENT_MASK)
MINUTE = "date_trunc('minute', timestamp, 'UTC')"


def recompute_minutes(cursor, bounds: dict) -> None:
    """Reads metrics_dirty_nodes (left by the hour rollups' part) and drops it."""
    cursor.execute(f"DELETE FROM {MINUTE_ROLLUP} r USING metrics_dirty_minutes d WHERE r.project_id = d.project_id "
                   f"AND r.mask = ANY(%s) AND r.minute = d.minute", [list(MINUTE_MASKS)])
    cursor.execute(f"DELETE FROM {MINUTE_TRACE} r USING metrics_dirty_minutes d WHERE r.project_id = d.project_id "
                   f"AND r.minute = d.minute")
    # The dirty hours' nodes, of the dirty minutes only: a live hour's other minutes keep their rows.
    cursor.execute(f"CREATE TEMP TABLE metrics_minute_nodes ON COMMIT DROP AS SELECT n.*, {MINUTE} AS minute "
                   f"FROM metrics_dirty_nodes n JOIN metrics_dirty_minutes d "
                   f"ON d.project_id = n.project_id AND d.minute = {MINUTE}")
    cursor.execute("ANALYZE metrics_minute_nodes")
    counted = ", ".join(f"COUNT(*) FILTER (WHERE {rule.sql()})::int AS {name}" for name, rule in COUNTED.items())
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_trace_minutes ON COMMIT DROP AS
        SELECT project_id, minute, trace_id, agent_id,
            COUNT(*)::int AS nodes, COUNT(confidence)::int AS confidence_count,
            COALESCE(SUM(confidence), 0) AS confidence_sum,
            COALESCE(bool_or({HIGH_UNCERTAINTY.sql()}), false) AS low, {counted}
        FROM metrics_minute_nodes GROUP BY 1, 2, 3, 4
        """
    )
    cursor.execute("ANALYZE metrics_trace_minutes")
    cursor.execute(
        f"INSERT INTO {MINUTE_TRACE} (project_id, minute, trace_pk, low, nodes, fused, confidence_count, "
        f"confidence_sum) SELECT project_id, minute, trace_id, bool_or(low), SUM(nodes), SUM(fused), "
        f"SUM(confidence_count), SUM(confidence_sum) FROM metrics_trace_minutes GROUP BY 1, 2, 3 ORDER BY 1, 2"
    )
    sums = ", ".join(f"SUM({name})" for name in NODE_SUMS)
    # ::int (one trace's counts in a minute fit): the sums over them are then bigint, not numeric.
    per_trace_sums = ", ".join(f"SUM({name}){'' if name in FLOAT_SUMS else '::int'} AS {name}" for name in NODE_SUMS)
    cursor.execute(
        f"""
        INSERT INTO {MINUTE_ROLLUP} (project_id, minute, mask, agent_id, traces, low_traces, {", ".join(NODE_SUMS)},
            run_prefix, run_suffix, run_best)
        SELECT m.*, COALESCE(r.prefix, 0), COALESCE(r.suffix, 0), COALESCE(r.best, 0) FROM (
            SELECT project_id, minute, {NO_DIMENSIONS}, {PLACEHOLDERS["agent_id"]}, COUNT(*), COUNT(*) FILTER (WHERE low),
                {sums}
            FROM (SELECT project_id, minute, trace_id, bool_or(low) AS low, {per_trace_sums}
                  FROM metrics_trace_minutes GROUP BY 1, 2, 3) AS per_trace
            GROUP BY 1, 2
            UNION ALL
            SELECT project_id, minute, {AGENT_MASK}, agent_id, COUNT(*), COUNT(*) FILTER (WHERE low), {sums}
            FROM metrics_trace_minutes GROUP BY 1, 2, 4
        ) AS m (project_id, minute, mask, agent_id)
        LEFT JOIN ({minute_runs_sql()}) AS r
            ON m.mask = {AGENT_MASK} AND r.project_id = m.project_id AND r.minute = m.minute AND r.agent_id = m.agent_id
        ORDER BY m.mask, m.minute
        """
    )
    cursor.execute("DROP TABLE metrics_dirty_nodes, metrics_minute_nodes, metrics_trace_minutes")


def minute_runs_sql() -> str:
    """Fused runs per (minute, agent) that had a fused node, as the hour rollups'."""
    return runs_sql("project_id, minute, agent_id", "(SELECT n.* FROM metrics_minute_nodes n JOIN (SELECT DISTINCT "
                    "project_id, minute, agent_id FROM metrics_trace_minutes WHERE fused > 0) f "
                    "USING (project_id, minute, agent_id)) AS run_nodes")

"""Hours that only got new nodes since the last refresh, folded into their
rows instead of regrouped (the refresh's hour rollups and hour traces;
metrics.rollups.refresh).

Under steady ingest the hour being written is dirty at every refresh, and
regrouping it whole costs the whole hour (88-100 s for 1.34M nodes). When no
rolled node of the hour changed (no fuse decision about one, no rebuild), its
rows change only by what the new nodes bring, all of which lie at or after
the hour's first dirty minute:

- Every figure of a rollup row, distinct and high-uncertainty traces
  included, is a sum over the traces of its group. The row changes by the new
  contribution of the traces that got nodes less their old one, both grouped
  from those traces' nodes of the hour alone (old: up to the last watermark).
  A touched trace's hour traces are replaced by its new ones.
- Fused runs (rows grouped by agent) are read from the window: the hour's
  nodes since LEAD before its first new node. Where a group's new
  nodes all come after its rolled ones, its runs are the stored ones followed
  by the new nodes'. Where writers committed out of timestamp order and
  rolled nodes come after the first new one, the runs are worked out from the
  group's last clear rolled node before its first new node: the cut. The
  rolled nodes up to the cut (the head) end clear, so no run crosses it; the
  head's first run is the row's stored prefix, and its longest the stored
  longest unless the rolled nodes after the cut (the tail) held one as long.

An hour where some group's cut is not in the window (with rolled nodes before
it), or whose head's longest run is unknown and could be the longest, is
regrouped whole instead (`whole` in metrics_dirty_hours). Either way the rows
are those a regrouping writes.
"""

from metrics.catalog import NODE_SUMS
from metrics.models import HourRollup
from metrics.rollups.fused_runs import runs_sql
from metrics.rollups.hour_groups import (
    GROUP_COLUMNS,
    GROUP_KEY,
    HOUR_TRACE,
    NODE_COLUMN_NAMES,
    NODE_COLUMNS,
    NODE_SOURCE,
    PRODUCTION_NODE,
    insert_hour_traces,
    mask_dimensions,
    mask_rollup,
    same_group_sql,
    trace_hours_sql,
)
from metrics.rollups.hour_ranges import in_hours_sql
from metrics.rollups.schema import (
    AGENT_MASK,
    AGENT_MASKS,
    MASKS,
    NODE,
    PROJECT,
    mask_columns,
    partition_sql,
)
from provenance.vocabulary import FUSED

ROLLUP = HourRollup._meta.db_table
FIGURES = ("traces", "low_traces", *NODE_SUMS)
# How far before an hour's first new node the runs are read: the cut of a
# group is its last clear rolled node before its first new one, which under
# concurrent writers (who commit out of timestamp order by about a batch)
# lies within a second or two of it. Every row read is sorted once per agent
# mask, so the lead is kept short: at 3,000 nodes a second, a minute of lead
# was most of a refresh's rows.
LEAD = "interval '10 seconds'"
TEMP_TABLES = ("metrics_appended_hours", "metrics_window_nodes", "metrics_touched_trace_hours",
               "metrics_window_sequences", "metrics_appended_runs")


def plan(cursor, bounds: dict) -> None:
    """Takes the hours of metrics_dirty_hours not to be regrouped whole,
    reads their windows and works out their groups' runs; an hour whose runs
    cannot be worked out so is marked whole. Leaves the tables fold() reads."""
    # Read from the first dirty minute (the minute rollups regroup it whole) or from LEAD before the first new
    # node, whichever is earlier; the runs are worked out from the latter.
    runs_since = f"GREATEST(hour, first_new - {LEAD})"
    cursor.execute(
        f"CREATE TEMP TABLE metrics_appended_hours ON COMMIT DROP AS "
        f"SELECT project_id, hour, LEAST(first_minute, {runs_since}) AS since, {runs_since} AS runs_since "
        f"FROM metrics_dirty_hours WHERE NOT whole"
    )
    cursor.execute("ANALYZE metrics_appended_hours")
    in_windows, params = in_hours_sql(cursor, "metrics_appended_hours", "n", "window", since="since")
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_window_nodes ON COMMIT DROP AS
        SELECT {NODE_COLUMNS}, n.id > %(old_node)s AS is_new, n.timestamp >= a.runs_since AS in_window
        FROM {NODE_SOURCE}
        JOIN metrics_appended_hours a ON a.project_id = n.project_id AND a.hour = date_trunc('hour', n.timestamp, 'UTC')
        WHERE {in_windows} AND n.timestamp >= a.since AND n.id <= %(new_node)s AND {PRODUCTION_NODE}
        """,
        {**bounds, **params},
    )
    cursor.execute(
        "CREATE TEMP TABLE metrics_touched_trace_hours ON COMMIT DROP AS "
        "SELECT DISTINCT w.project_id, w.hour, w.trace_id, a.since FROM metrics_window_nodes w "
        "JOIN metrics_appended_hours a USING (project_id, hour) WHERE w.is_new"
    )
    # The touched traces' rolled nodes before the window (traces last seconds: few), by the trace's index.
    cursor.execute(
        f"""
        INSERT INTO metrics_window_nodes
        SELECT {NODE_COLUMNS}, false, false FROM metrics_touched_trace_hours t
        JOIN {NODE} n ON n.trace_id = t.trace_id AND n.timestamp >= t.hour AND n.timestamp < t.since
        JOIN {PROJECT} p ON p.id = n.project_id
        WHERE n.project_id = t.project_id AND n.id <= %(old_node)s
        """,
        bounds,
    )
    cursor.execute("ANALYZE metrics_window_nodes")
    cursor.execute("ANALYZE metrics_touched_trace_hours")
    plan_runs(cursor)
    # Hours with a group whose runs are not known from the window: regrouped whole.
    cursor.execute(
        "UPDATE metrics_dirty_hours d SET whole = true FROM (SELECT DISTINCT project_id, hour "
        "FROM metrics_appended_runs WHERE NOT known) f WHERE d.project_id = f.project_id AND d.hour = f.hour"
    )
    for table in TEMP_TABLES:
        cursor.execute(f"DELETE FROM {table} t USING metrics_dirty_hours d "
                       f"WHERE d.whole AND d.project_id = t.project_id AND d.hour = t.hour")


def plan_runs(cursor) -> None:
    """metrics_appended_runs: the new prefix, suffix and longest run of every
    group (of the agent masks) that got a new node, and whether they are known."""
    fused = FUSED.sql()

    def every_mask(where: str, numbered: bool = False) -> str:
        """The window's rows matching `where` once per agent mask, with the
        mask's group key; `numbered`: with their position in their group
        (pos) and how many of its new nodes come up to them (new_upto)."""
        parts = []
        for mask in AGENT_MASKS:
            key = ", ".join(["w.project_id", "w.hour", *(f"w.{c}" for c in mask_columns(mask))])
            parts.append(f"""
                SELECT w.project_id, w.hour, {mask} AS mask, {mask_dimensions(mask_columns(mask))}, w.timestamp, w.id,
                    w.fuse_state, w.is_new
                    {", row_number() OVER w AS pos, COUNT(*) FILTER (WHERE w.is_new) OVER w AS new_upto"
                     if numbered else ""}
                FROM metrics_window_nodes w JOIN metrics_agent_order o USING (project_id, hour, agent_id)
                WHERE w.in_window AND {where}
                {f"WINDOW w AS (PARTITION BY {partition_sql(key)} ORDER BY w.timestamp, w.id ROWS UNBOUNDED PRECEDING)"
                 if numbered else ""}
            """)
        return " UNION ALL ".join(parts)

    # Runs change only for agents with a fused node, new or rolled (a rolled one leaves a stored run). An
    # agent whose new nodes all come after its rolled ones has every group in order: its runs compose from
    # the stored ones and the new nodes' alone. The others' groups are numbered in the window.
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_agent_order ON COMMIT DROP AS
        SELECT project_id, hour, agent_id, in_order FROM (
            SELECT project_id, hour, agent_id, bool_or(is_new AND {fused}) AS new_fused,
                COALESCE(MAX(timestamp) FILTER (WHERE NOT is_new) < MIN(timestamp) FILTER (WHERE is_new), true)
                    AS in_order
            FROM metrics_window_nodes WHERE in_window GROUP BY 1, 2, 3 HAVING bool_or(is_new)
        ) AS agents
        WHERE new_fused OR EXISTS (SELECT 1 FROM {ROLLUP} h WHERE h.project_id = agents.project_id
            AND h.mask = {AGENT_MASK} AND h.hour = agents.hour AND h.agent_id = agents.agent_id AND h.run_best > 0)
        """
    )
    cursor.execute(f"CREATE TEMP TABLE metrics_new_rows ON COMMIT DROP AS {every_mask('w.is_new AND o.in_order')}")
    cursor.execute("ANALYZE metrics_new_rows")
    numbered = every_mask("NOT o.in_order", numbered=True)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_window_sequences ON COMMIT DROP AS
        SELECT * FROM (
            SELECT s.*,
                MAX(pos) FILTER (WHERE NOT is_new AND NOT {fused} AND new_upto = 0) OVER g AS cut,
                COUNT(*) FILTER (WHERE NOT is_new) OVER g AS rolled,
                MIN(pos) FILTER (WHERE is_new) OVER g AS first_new,
                MAX(pos) FILTER (WHERE NOT is_new) OVER g AS last_rolled
            FROM ({numbered}) AS s
            WINDOW g AS (PARTITION BY {partition_sql(GROUP_KEY)})
        ) AS cut WHERE first_new IS NOT NULL
        """
    )
    cursor.execute("ANALYZE metrics_window_sequences")
    # A group's new nodes all after its rolled ones (its last rolled node is in the window if any is after its
    # first new one): the runs compose. Otherwise they are worked out after the cut.
    in_order = "(last_rolled IS NULL OR last_rolled < first_new)"
    after_cut = (f"(SELECT * FROM metrics_window_sequences WHERE NOT {in_order} AND pos > COALESCE(cut, 0){{}}) "
                 f"AS after_cut")
    columns = f"{GROUP_KEY}, timestamp, id, fuse_state"
    new_runs = runs_sql(GROUP_KEY, f"(SELECT {columns} FROM metrics_new_rows UNION ALL SELECT {columns} "
                                   f"FROM metrics_window_sequences WHERE is_new AND {in_order}) AS new_nodes")
    merged, tail = runs_sql(GROUP_KEY, after_cut.format("")), runs_sql(GROUP_KEY, after_cut.format(" AND NOT is_new"))
    head = "g.cut IS NOT NULL"
    stored = {name: f"COALESCE(h.{name}, 0)" for name in ("nodes", "run_prefix", "run_suffix", "run_best")}
    new_prefix, new_suffix, new_best = "COALESCE(n.prefix, 0)", "COALESCE(n.suffix, 0)", "COALESCE(n.best, 0)"
    merged_best, tail_best = "COALESCE(r.best, 0)", "COALESCE(t.best, 0)"
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_appended_runs ON COMMIT DROP AS
        SELECT {", ".join(f"g.{c}" for c in GROUP_COLUMNS)},
            CASE WHEN g.in_order THEN CASE WHEN {stored["run_prefix"]} < {stored["nodes"]} THEN {stored["run_prefix"]}
                                           ELSE {stored["nodes"]} + {new_prefix} END
                 WHEN {head} THEN {stored["run_prefix"]}
                 ELSE COALESCE(r.prefix, 0) END AS prefix,
            CASE WHEN g.in_order THEN CASE WHEN {new_suffix} < g.new_nodes THEN {new_suffix}
                                           ELSE g.new_nodes + {stored["run_suffix"]} END
                 ELSE COALESCE(r.suffix, 0) END AS suffix,
            CASE WHEN g.in_order THEN GREATEST({stored["run_best"]}, {new_best}, {stored["run_suffix"]} + {new_prefix})
                 ELSE GREATEST({merged_best}, CASE WHEN {head} AND {stored["run_best"]} > {tail_best}
                                                   THEN {stored["run_best"]} ELSE 0 END) END AS best,
            CASE WHEN g.in_order THEN true
                 WHEN {head} THEN {stored["run_best"]} > {tail_best} OR {merged_best} >= {stored["run_best"]}
                 ELSE {stored["nodes"]} = g.rolled END AS known
        FROM (SELECT {GROUP_KEY}, COUNT(*) AS new_nodes, true AS in_order, NULL::bigint AS cut, 0 AS rolled
              FROM metrics_new_rows GROUP BY {GROUP_KEY}
              UNION ALL
              SELECT {GROUP_KEY}, COUNT(*) FILTER (WHERE is_new), bool_and({in_order}), MAX(cut), MAX(rolled)
              FROM metrics_window_sequences GROUP BY {GROUP_KEY}) AS g
        LEFT JOIN {ROLLUP} h ON {same_group_sql("h", "g")}
        LEFT JOIN ({new_runs}) AS n ON {same_group_sql("n", "g")}
        LEFT JOIN ({merged}) AS r ON {same_group_sql("r", "g")}
        LEFT JOIN ({tail}) AS t ON {same_group_sql("t", "g")}
        """
    )
    cursor.execute("DROP TABLE metrics_agent_order, metrics_new_rows")


def fold(cursor) -> None:
    """Folds the planned hours' new nodes into their rollup rows and hour
    traces, and leaves the nodes read in metrics_dirty_nodes for the minute
    rollups (every node of an appended hour's dirty minutes was read)."""
    touched = ("(SELECT w.* FROM metrics_window_nodes w "
               "JOIN metrics_touched_trace_hours t USING (project_id, hour, trace_id)) AS touched")
    cursor.execute(f"CREATE TEMP TABLE metrics_trace_hours_after ON COMMIT DROP AS {trace_hours_sql(touched)}")
    cursor.execute(f"CREATE TEMP TABLE metrics_trace_hours_before ON COMMIT DROP AS "
                   f"{trace_hours_sql(touched, 'NOT is_new')}")
    negated = ", ".join(f"-{name}" for name in FIGURES)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_hour_delta ON COMMIT DROP AS
        SELECT {GROUP_KEY}, {", ".join(f"SUM({name}) AS {name}" for name in FIGURES)} FROM (
            {" UNION ALL ".join(mask_rollup(mask, "metrics_trace_hours_after") for mask in MASKS)}
            UNION ALL
            SELECT {GROUP_KEY}, {negated} FROM (
                {" UNION ALL ".join(mask_rollup(mask, "metrics_trace_hours_before") for mask in MASKS)}
            ) AS before
        ) AS contributions
        GROUP BY {GROUP_KEY}
        """
    )
    cursor.execute("ANALYZE metrics_hour_delta")
    runs = "LEFT JOIN metrics_appended_runs x ON " + same_group_sql("x", "d")
    # Rows there are first (an insert first would have them added to twice), then the groups new to their hour.
    cursor.execute(
        f"""
        UPDATE {ROLLUP} r SET {", ".join(f"{name} = r.{name} + d.{name}" for name in FIGURES)},
            run_prefix = COALESCE(x.prefix, r.run_prefix), run_suffix = COALESCE(x.suffix, r.run_suffix),
            run_best = COALESCE(x.best, r.run_best)
        FROM metrics_hour_delta d {runs}
        WHERE {same_group_sql("r", "d")}
        """
    )
    cursor.execute(
        f"""
        INSERT INTO {ROLLUP} ({GROUP_KEY}, {", ".join(FIGURES)}, run_prefix, run_suffix, run_best)
        SELECT {", ".join(f"d.{c}" for c in (*GROUP_COLUMNS, *FIGURES))},
            COALESCE(x.prefix, 0), COALESCE(x.suffix, 0), COALESCE(x.best, 0)
        FROM metrics_hour_delta d {runs}
        WHERE NOT EXISTS (SELECT 1 FROM {ROLLUP} r WHERE {same_group_sql("r", "d")})
        ORDER BY d.mask, d.hour
        """
    )
    cursor.execute(f"DELETE FROM {HOUR_TRACE} r USING metrics_touched_trace_hours t "
                   f"WHERE r.project_id = t.project_id AND r.hour = t.hour AND r.trace_pk = t.trace_id")
    insert_hour_traces(cursor, "metrics_trace_hours_after")
    cursor.execute(f"INSERT INTO metrics_dirty_nodes SELECT {NODE_COLUMN_NAMES} FROM metrics_window_nodes")
    cursor.execute(f"DROP TABLE {', '.join(TEMP_TABLES)}, metrics_trace_hours_after, metrics_trace_hours_before, "
                   f"metrics_hour_delta")

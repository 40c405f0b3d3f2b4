"""The refresh job's part for fuse policy versions (metrics.models.PolicyHour
and PolicyItemHour; read by metrics.counts.policy_versions).

Production only: decisions about traces of another environment are left out
(metrics.rollups.schema.OTHER_ENVIRONMENTS), as in the other rollups.

An hour (of the fuse decisions) is recomputed whole when it got a decision,
a decision in it got its node (the node's dimensions are the filters'), or a
trace with decisions in it got a review or an escalation (what followed for
the trace changed). Items (nodes, traces) of the recomputed hours then have
their `spanning` flag set again: whether they appear in other hours under the
same version.
"""

from metrics.models import PolicyHour, PolicyItemHour
from metrics.rollups.hour_ranges import in_hours_sql
from metrics.rollups.schema import (
    DIMENSIONS,
    ESCALATION,
    EVERY_DIMENSION,
    FUSE,
    MASKS,
    NO_DIMENSIONS,
    NODE,
    PLACEHOLDERS,
    REVIEW,
    TRACE,
    mask_columns,
    production_key_sql,
    trace_outcome_sql,
)
from provenance.vocabulary import BLOCKING_DECISION

POLICY_HOUR, ITEM = PolicyHour._meta.db_table, PolicyItemHour._meta.db_table
TRACE_ITEM, PRODUCT_ITEM = PolicyItemHour.TRACE, PolicyItemHour.PRODUCT
DIMENSION_LIST = ", ".join(DIMENSIONS)
# A refresh recomputing more hours than this (a rebuild) refreshes the tables'
# statistics: without them the readers' plans scan every item of a window
# instead of looking a few up by key. Autovacuum keeps them fresh after that.
REANALYZE_HOURS = 48


def refresh_policy_hours(cursor, bounds: dict) -> None:
    mark_dirty_policy_hours(cursor, bounds)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_items ON COMMIT DROP AS
        SELECT DISTINCT i.project_id, i.policy_version, i.kind, i.key
        FROM {ITEM} i JOIN metrics_policy_hours d ON d.project_id = i.project_id AND d.hour = i.hour
        """
    )
    cursor.execute(
        f"DELETE FROM {ITEM} r USING metrics_policy_hours d WHERE r.project_id = d.project_id AND r.hour = d.hour"
    )
    # Every mask named: the index is (project, mask, hour); an hour alone would be looked for in all the project's rows.
    cursor.execute(
        f"DELETE FROM {POLICY_HOUR} r USING metrics_policy_hours d WHERE r.project_id = d.project_id "
        f"AND r.mask = ANY(%s) AND r.hour = d.hour",
        [list(MASKS)],
    )
    # The decisions of those hours: found by ranges, matched to their hour by equality (metrics.rollups.hour_ranges).
    in_policy_hours, params = in_hours_sql(cursor, "metrics_policy_hours", "f", "policy")
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_fuses ON COMMIT DROP AS
        SELECT f.project_id, d.hour, f.policy_version, f.trace_id AS trace_key, f.product_id,
            {BLOCKING_DECISION.sql('f')} AS blocked, n.id IS NOT NULL AS known, COALESCE(n.agent_id, '') AS agent_id,
            COALESCE(n.step, '') AS step, COALESCE(n.source_type, '') AS source_type, n.round
        FROM {FUSE} f
        JOIN metrics_policy_hours d ON d.project_id = f.project_id AND d.hour = date_trunc('hour', f.timestamp, 'UTC')
        LEFT JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id AND n.id <= %(new_node)s
        WHERE {in_policy_hours} AND f.id <= %(new_fuse)s AND {production_key_sql("f.project_id", "f.trace_id")}
        """,
        {**bounds, **params},
    )
    outcome_join, outcome_columns = trace_outcome_sql(
        "t", "AND r.id <= %(new_review)s", "AND e.id <= %(new_escalation)s")
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_outcomes ON COMMIT DROP AS
        SELECT k.project_id, k.trace_key, {outcome_columns}
        FROM (SELECT DISTINCT project_id, trace_key FROM metrics_policy_fuses) k
        LEFT JOIN {TRACE} t ON t.project_id = k.project_id AND t.trace_id = k.trace_key
        {outcome_join}
        """,
        bounds,
    )
    insert_items(cursor)
    cursor.execute(
        f"""
        INSERT INTO {POLICY_HOUR} (project_id, hour, mask, {DIMENSION_LIST}, policy_version, decisions, nodes, fused,
            traces, reviewed, incorrect, escalations)
        {" UNION ALL ".join(part for mask in MASKS for part in mask_rows(mask))}
        """
    )
    mark_spanning_items(cursor)
    cursor.execute("SELECT COUNT(*) FROM metrics_policy_hours")
    if cursor.fetchone()[0] > REANALYZE_HOURS:
        cursor.execute(f"ANALYZE {ITEM}, {POLICY_HOUR}")
    cursor.execute("DROP TABLE metrics_policy_hours, metrics_policy_items, metrics_policy_fuses, "
                   "metrics_policy_outcomes")


def mark_dirty_policy_hours(cursor, bounds: dict) -> None:
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_hours ON COMMIT DROP AS
        SELECT DISTINCT project_id, hour FROM (
            SELECT project_id, date_trunc('hour', timestamp, 'UTC') AS hour FROM {FUSE}
            WHERE id > %(old_fuse)s AND id <= %(new_fuse)s
            UNION ALL
            SELECT f.project_id, date_trunc('hour', f.timestamp, 'UTC') FROM {NODE} n
            JOIN {FUSE} f ON f.project_id = n.project_id AND f.product_id = n.product_id
            WHERE n.id > %(old_node)s AND n.id <= %(new_node)s AND f.id <= %(new_fuse)s
            UNION ALL
            SELECT i.project_id, i.hour FROM {ITEM} i
            JOIN {TRACE} t ON t.project_id = i.project_id AND t.trace_id = i.key
            WHERE i.kind = {TRACE_ITEM} AND i.mask = {NO_DIMENSIONS} AND t.id IN (
                SELECT trace_id FROM {REVIEW} WHERE id > %(old_review)s AND id <= %(new_review)s
                UNION
                SELECT trace_id FROM {ESCALATION} WHERE id > %(old_escalation)s AND id <= %(new_escalation)s)
        ) AS touched
        """,
        bounds,
    )
    cursor.execute("ANALYZE metrics_policy_hours")


def insert_items(cursor) -> None:
    """Per hour and version: each node judged (its dimensions, or none while
    unknown), each trace once per node dimensions and once overall."""
    placeholders = ", ".join(PLACEHOLDERS.values())
    outcome = "o.reviewed, o.incorrect, o.escalations"
    trace_rows = f"""
        SELECT f.project_id, f.hour, f.policy_version, {TRACE_ITEM}, f.trace_key, {{mask}}, {{dimensions}},
            COUNT(*), bool_or(f.blocked), {outcome}, false
        FROM metrics_policy_fuses f JOIN metrics_policy_outcomes o USING (project_id, trace_key) {{where}}
        GROUP BY f.project_id, f.hour, f.policy_version, f.trace_key, {{group}} {outcome}
    """
    cursor.execute(
        f"""
        INSERT INTO {ITEM} (project_id, hour, policy_version, kind, key, mask, {DIMENSION_LIST}, decisions, blocked,
            reviewed, incorrect, escalations, spanning)
        SELECT project_id, hour, policy_version, {PRODUCT_ITEM}, product_id,
            CASE WHEN known THEN {EVERY_DIMENSION} ELSE {NO_DIMENSIONS} END, {DIMENSION_LIST},
            COUNT(*), bool_or(blocked), false, false, 0, false
        FROM metrics_policy_fuses GROUP BY project_id, hour, policy_version, product_id, known, {DIMENSION_LIST}
        UNION ALL
        {trace_rows.format(mask=EVERY_DIMENSION, dimensions=", ".join(f"f.{c}" for c in DIMENSIONS),
                           where="WHERE f.known", group=", ".join(f"f.{c}" for c in DIMENSIONS) + ",")}
        UNION ALL
        {trace_rows.format(mask=NO_DIMENSIONS, dimensions=placeholders, where="", group="")}
        """
    )


def mask_rows(mask: int) -> tuple[str, str]:
    """PolicyHour rows of one mask for the recomputed hours: decision counts
    from the node items, trace counts from the trace items (a trace counts
    once per group)."""
    columns = mask_columns(mask)
    key = ", ".join(["project_id", "hour", "policy_version", *columns])
    dimensions = ", ".join(column if column in columns else PLACEHOLDERS[column] for column in DIMENSIONS)
    recomputed = f"FROM {ITEM} i JOIN metrics_policy_hours d USING (project_id, hour)"
    products = f"""
        SELECT project_id, hour, {mask}, {dimensions}, policy_version, SUM(decisions), COUNT(*),
            COUNT(*) FILTER (WHERE blocked), 0, 0, 0, 0
        {recomputed} WHERE kind = {PRODUCT_ITEM} {"" if mask == NO_DIMENSIONS else f"AND mask = {EVERY_DIMENSION}"}
        GROUP BY {key}
    """
    trace_mask = NO_DIMENSIONS if mask == NO_DIMENSIONS else EVERY_DIMENSION
    per_trace = f"""
        SELECT {key}, bool_or(reviewed) AS reviewed, bool_or(incorrect) AS incorrect, MAX(escalations) AS escalations
        {recomputed} WHERE kind = {TRACE_ITEM} AND mask = {trace_mask} GROUP BY {key}, key
    """
    traces = f"""
        SELECT project_id, hour, {mask}, {dimensions}, policy_version, 0, 0, 0, COUNT(*),
            COUNT(*) FILTER (WHERE reviewed), COUNT(*) FILTER (WHERE incorrect), SUM(escalations)
        FROM ({per_trace}) AS per_trace GROUP BY {key}
    """
    return products, traces


def mark_spanning_items(cursor) -> None:
    """Items of the recomputed hours (before or after): spanning when they
    appear in more than one hour under their version."""
    cursor.execute(
        f"""
        INSERT INTO metrics_policy_items
        SELECT DISTINCT i.project_id, i.policy_version, i.kind, i.key
        FROM {ITEM} i JOIN metrics_policy_hours d ON d.project_id = i.project_id AND d.hour = i.hour
        """
    )
    cursor.execute("ANALYZE metrics_policy_items")
    same_item = ("i.project_id = s.project_id AND i.kind = s.kind AND i.key = s.key "
                 "AND i.policy_version IS NOT DISTINCT FROM s.policy_version")
    cursor.execute(
        f"""
        UPDATE {ITEM} i SET spanning = s.spanning FROM (
            SELECT i.project_id, i.policy_version, i.kind, i.key, COUNT(DISTINCT i.hour) > 1 AS spanning
            FROM {ITEM} i JOIN (SELECT DISTINCT * FROM metrics_policy_items) t
                ON t.project_id = i.project_id AND t.kind = i.kind AND t.key = i.key
            WHERE i.policy_version IS NOT DISTINCT FROM t.policy_version
            GROUP BY 1, 2, 3, 4
        ) AS s
        WHERE {same_item} AND i.spanning <> s.spanning
        """
    )

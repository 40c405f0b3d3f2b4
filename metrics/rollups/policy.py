"""The refresh job's part for fuse policy versions (metrics.models.PolicyHour
and PolicyItemHour; read by metrics.counts.policy_versions).

Production only: decisions about traces of another environment are left out
(metrics.rollups.schema.OTHER_ENVIRONMENTS), as in the other rollups.

Refreshed by trace: a trace's items of an hour (of the fuse decisions) are
recomputed when it got a decision that hour, a decision of it got its node
(the node's dimensions are the filters'), or it got a review or an escalation
(what followed for it changed), with the items of every node its decisions
judged (the products; a product judged under two traces takes both along).
Every figure of a PolicyHour row is a sum over items (a trace counting once
per group), so the rows change by the recomputed items less the ones they
replace: under steady ingest a refresh reads the traces that got news, not
the hour. Recomputed items then have their `spanning` flag set again: whether
they appear in other hours under the same version.
"""

from metrics.models import PolicyHour, PolicyItemHour
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
    same_row_sql,
    trace_outcome_sql,
)
from provenance.vocabulary import BLOCKING_DECISION

POLICY_HOUR, ITEM = PolicyHour._meta.db_table, PolicyItemHour._meta.db_table
TRACE_ITEM, PRODUCT_ITEM = PolicyItemHour.TRACE, PolicyItemHour.PRODUCT
DIMENSION_LIST = ", ".join(DIMENSIONS)
ITEM_COLUMNS = (f"project_id, hour, policy_version, kind, key, mask, {DIMENSION_LIST}, decisions, blocked, reviewed, "
                f"incorrect, escalations, spanning")
FIGURES = ("decisions", "nodes", "fused", "traces", "reviewed", "incorrect", "escalations")
GROUP = ("project_id", "hour", "mask", *DIMENSIONS, "policy_version")  # one PolicyHour row's
NULLABLE = ("round", "policy_version")
# A refresh recomputing more hours than this (a rebuild) refreshes the tables'
# statistics: without them the readers' plans scan every item of a window
# instead of looking a few up by key. Autovacuum keeps them fresh after that.
REANALYZE_HOURS = 48


def refresh_policy_hours(cursor, bounds: dict) -> None:
    mark_touched_traces(cursor, bounds)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_fuses ON COMMIT DROP AS
        SELECT f.project_id, t.hour, f.policy_version, f.trace_id AS trace_key, f.product_id,
            {BLOCKING_DECISION.sql('f')} AS blocked, n.id IS NOT NULL AS known, COALESCE(n.agent_id, '') AS agent_id,
            COALESCE(n.step, '') AS step, COALESCE(n.source_type, '') AS source_type, n.round
        FROM metrics_policy_touched t
        JOIN {FUSE} f ON f.project_id = t.project_id AND f.trace_id = t.trace_key
            AND f.timestamp >= t.hour AND f.timestamp < t.hour + interval '1 hour'
        LEFT JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id AND n.id <= %(new_node)s
        WHERE f.id <= %(new_fuse)s AND {production_key_sql("f.project_id", "f.trace_id")}
        """,
        bounds,
    )
    cursor.execute("ANALYZE metrics_policy_fuses")
    # The items the recomputed ones replace, taken out.
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_old_items ON COMMIT DROP AS
        SELECT i.* FROM {ITEM} i JOIN metrics_policy_touched t
            ON i.project_id = t.project_id AND i.kind = {TRACE_ITEM} AND i.key = t.trace_key AND i.hour = t.hour
        UNION ALL
        SELECT i.* FROM {ITEM} i JOIN (SELECT DISTINCT project_id, hour, product_id FROM metrics_policy_fuses) p
            ON i.project_id = p.project_id AND i.kind = {PRODUCT_ITEM} AND i.key = p.product_id AND i.hour = p.hour
        """
    )
    cursor.execute(f"DELETE FROM {ITEM} i USING metrics_policy_old_items o WHERE i.id = o.id")
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
    fold_policy_hours(cursor)
    mark_spanning_items(cursor)
    cursor.execute("SELECT COUNT(DISTINCT (project_id, hour)) FROM metrics_policy_touched")
    if cursor.fetchone()[0] > REANALYZE_HOURS:
        cursor.execute(f"ANALYZE {ITEM}, {POLICY_HOUR}")
    cursor.execute("DROP TABLE metrics_policy_touched, metrics_policy_fuses, metrics_policy_old_items, "
                   "metrics_policy_new_items, metrics_policy_outcomes, metrics_policy_delta")


def mark_touched_traces(cursor, bounds: dict) -> None:
    """metrics_policy_touched(project_id, hour, trace_key): the traces (by
    key) whose items of an hour are recomputed, with every other trace that
    judged a product of theirs that hour."""
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_touched ON COMMIT DROP AS
        SELECT DISTINCT project_id, hour, trace_key FROM (
            SELECT project_id, date_trunc('hour', timestamp, 'UTC') AS hour, trace_id AS trace_key FROM {FUSE}
            WHERE id > %(old_fuse)s AND id <= %(new_fuse)s
            UNION ALL
            SELECT f.project_id, date_trunc('hour', f.timestamp, 'UTC'), f.trace_id FROM {NODE} n
            JOIN {FUSE} f ON f.project_id = n.project_id AND f.product_id = n.product_id
            WHERE n.id > %(old_node)s AND n.id <= %(new_node)s AND f.id <= %(new_fuse)s
            UNION ALL
            SELECT i.project_id, i.hour, i.key FROM {ITEM} i
            JOIN {TRACE} t ON t.project_id = i.project_id AND t.trace_id = i.key
            WHERE i.kind = {TRACE_ITEM} AND i.mask = {NO_DIMENSIONS} AND t.id IN (
                SELECT trace_id FROM {REVIEW} WHERE id > %(old_review)s AND id <= %(new_review)s
                UNION
                SELECT trace_id FROM {ESCALATION} WHERE id > %(old_escalation)s AND id <= %(new_escalation)s)
        ) AS touched
        """,
        bounds,
    )
    # A product judged under two traces' keys (agents may send that) is one
    # item of the hour: its other traces are recomputed too, until none is left out.
    while True:
        cursor.execute(
            f"""
            INSERT INTO metrics_policy_touched
            SELECT DISTINCT other.project_id, t.hour, other.trace_id FROM metrics_policy_touched t
            JOIN {FUSE} f ON f.project_id = t.project_id AND f.trace_id = t.trace_key
                AND f.timestamp >= t.hour AND f.timestamp < t.hour + interval '1 hour'
            JOIN {FUSE} other ON other.project_id = f.project_id AND other.product_id = f.product_id
                AND other.trace_id <> f.trace_id
                AND other.timestamp >= t.hour AND other.timestamp < t.hour + interval '1 hour'
            WHERE f.id <= %(new_fuse)s AND other.id <= %(new_fuse)s AND NOT EXISTS (
                SELECT 1 FROM metrics_policy_touched known WHERE known.project_id = other.project_id
                    AND known.hour = t.hour AND known.trace_key = other.trace_id)
            """,
            bounds,
        )
        if cursor.rowcount == 0:
            break
    cursor.execute("ANALYZE metrics_policy_touched")


def insert_items(cursor) -> None:
    """Per hour and version: each node judged (its dimensions, or none while
    unknown), each trace once per node dimensions and once overall; kept in
    metrics_policy_new_items too."""
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
        CREATE TEMP TABLE metrics_policy_new_items ON COMMIT DROP AS
        SELECT project_id, hour, policy_version, {PRODUCT_ITEM} AS kind, product_id AS key,
            CASE WHEN known THEN {EVERY_DIMENSION} ELSE {NO_DIMENSIONS} END AS mask, {DIMENSION_LIST},
            COUNT(*) AS decisions, bool_or(blocked) AS blocked, false AS reviewed, false AS incorrect,
            0 AS escalations, false AS spanning
        FROM metrics_policy_fuses GROUP BY project_id, hour, policy_version, product_id, known, {DIMENSION_LIST}
        UNION ALL
        {trace_rows.format(mask=EVERY_DIMENSION, dimensions=", ".join(f"f.{c}" for c in DIMENSIONS),
                           where="WHERE f.known", group=", ".join(f"f.{c}" for c in DIMENSIONS) + ",")}
        UNION ALL
        {trace_rows.format(mask=NO_DIMENSIONS, dimensions=placeholders, where="", group="")}
        """
    )
    cursor.execute(f"INSERT INTO {ITEM} ({ITEM_COLUMNS}) SELECT {ITEM_COLUMNS} FROM metrics_policy_new_items")


def fold_policy_hours(cursor) -> None:
    """Each PolicyHour group the items changed becomes one row: its rows'
    sums, plus what the new items count, less what the replaced ones did."""
    def rows(items: str) -> str:
        return " UNION ALL ".join(part for mask in MASKS for part in mask_rows(mask, items))

    group = ", ".join(GROUP)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_delta ON COMMIT DROP AS
        SELECT {group}, {", ".join(f"SUM({name}) AS {name}" for name in FIGURES)} FROM (
            {rows("metrics_policy_new_items")}
            UNION ALL
            SELECT {group}, {", ".join(f"-{name}" for name in FIGURES)} FROM ({rows("metrics_policy_old_items")}) AS old
        ) AS changes
        GROUP BY {group}
        """
    )
    cursor.execute("ANALYZE metrics_policy_delta")
    same_group = same_row_sql("r", "d", GROUP, NULLABLE)
    cursor.execute(
        f"""
        CREATE TEMP TABLE metrics_policy_merged ON COMMIT DROP AS
        SELECT {group}, {", ".join(f"SUM({name}) AS {name}" for name in FIGURES)} FROM (
            SELECT {", ".join(f"r.{c}" for c in (*GROUP, *FIGURES))} FROM {POLICY_HOUR} r
            JOIN (SELECT DISTINCT {group} FROM metrics_policy_delta) d ON {same_group}
            UNION ALL
            SELECT * FROM metrics_policy_delta
        ) AS merged
        GROUP BY {group}
        """
    )
    cursor.execute(f"DELETE FROM {POLICY_HOUR} r USING metrics_policy_delta d WHERE {same_group}")
    cursor.execute(
        f"INSERT INTO {POLICY_HOUR} ({group}, {', '.join(FIGURES)}) SELECT * FROM metrics_policy_merged "
        f"WHERE {' OR '.join(f'{name} <> 0' for name in FIGURES)} ORDER BY mask, hour"
    )
    cursor.execute("DROP TABLE metrics_policy_merged")


def mask_rows(mask: int, items: str) -> tuple[str, str]:
    """PolicyHour rows (GROUP, FIGURES) of one mask from the item rows of
    `items`: decision counts from the node items, trace counts from the trace
    items (a trace counts once per group)."""
    columns = mask_columns(mask)
    key = ", ".join(["project_id", "hour", "policy_version", *columns])
    dimensions = ", ".join(f"{column if column in columns else PLACEHOLDERS[column]} AS {column}"
                           for column in DIMENSIONS)
    products = f"""
        SELECT project_id, hour, {mask} AS mask, {dimensions}, policy_version, SUM(decisions) AS decisions,
            COUNT(*) AS nodes, COUNT(*) FILTER (WHERE blocked) AS fused, 0 AS traces, 0 AS reviewed, 0 AS incorrect,
            0 AS escalations
        FROM {items} WHERE kind = {PRODUCT_ITEM} {"" if mask == NO_DIMENSIONS else f"AND mask = {EVERY_DIMENSION}"}
        GROUP BY {key}
    """
    trace_mask = NO_DIMENSIONS if mask == NO_DIMENSIONS else EVERY_DIMENSION
    per_trace = f"""
        SELECT {key}, bool_or(reviewed) AS reviewed, bool_or(incorrect) AS incorrect, MAX(escalations) AS escalations
        FROM {items} WHERE kind = {TRACE_ITEM} AND mask = {trace_mask} GROUP BY {key}, key
    """
    traces = f"""
        SELECT project_id, hour, {mask}, {dimensions}, policy_version, 0, 0, 0, COUNT(*),
            COUNT(*) FILTER (WHERE reviewed), COUNT(*) FILTER (WHERE incorrect), SUM(escalations)
        FROM ({per_trace}) AS per_trace GROUP BY {key}
    """
    return products, traces


def mark_spanning_items(cursor) -> None:
    """The recomputed items (and those they replaced): spanning when they
    appear in more than one hour under their version."""
    cursor.execute(
        "CREATE TEMP TABLE metrics_policy_items ON COMMIT DROP AS "
        "SELECT project_id, policy_version, kind, key FROM metrics_policy_old_items "
        "UNION SELECT project_id, policy_version, kind, key FROM metrics_policy_new_items"
    )
    cursor.execute("ANALYZE metrics_policy_items")
    same_item = same_row_sql("i", "s", ("project_id", "kind", "key", "policy_version"), NULLABLE)
    cursor.execute(
        f"""
        UPDATE {ITEM} i SET spanning = s.spanning FROM (
            SELECT i.project_id, i.policy_version, i.kind, i.key, COUNT(DISTINCT i.hour) > 1 AS spanning
            FROM {ITEM} i JOIN metrics_policy_items t
                ON t.project_id = i.project_id AND t.kind = i.kind AND t.key = i.key
            WHERE i.policy_version IS NOT DISTINCT FROM t.policy_version
            GROUP BY 1, 2, 3, 4
        ) AS s
        WHERE {same_item} AND i.spanning <> s.spanning
        """
    )
    cursor.execute("DROP TABLE metrics_policy_items")

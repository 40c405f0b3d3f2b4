"""The refresh job's part for the statistics rollup (metrics.models.DayStat;
read by metrics.counts.summaries): the values of the new nodes, binned on
the fine grid, are grouped once by every dimension, then rolled up from
that into the other masks, and added to the rows already there. Each group
also keeps its bins added up in a row of its own (bin WHOLE_BIN), so a
reader of counts, sums and moments reads one row a day, not every bin."""

from metrics.models import WHOLE_BIN, DayStat
from metrics.rollups.values import (
    AGGREGATES_SQL,
    COMBINE_SQL,
    FIGURES,
    STAT_DIMENSIONS,
    STAT_MASKS,
    STAT_PLACEHOLDERS,
    fine_bin_sql,
    stat_values_sql,
)

STAT = DayStat._meta.db_table
UPSERT = {"SUM": "s.{0} + EXCLUDED.{0}", "MIN": "LEAST(s.{0}, EXCLUDED.{0})", "MAX": "GREATEST(s.{0}, EXCLUDED.{0})"}
KEY = ("project_id", "day", "environment", *STAT_DIMENSIONS, "metric", "bin")


def binned_values_sql(where: str, keys: list[str], only: tuple[str, ...] | None = None, only_param: str = "",
                      environment: str | None = None) -> str:
    """The values of the nodes of `where` (only those of the metrics `only`,
    when given) grouped by `keys` (expressions over the value rows and their
    `bin`), with the per-bin figures."""
    return f"""
        SELECT {", ".join(keys)}, {AGGREGATES_SQL}
        FROM (SELECT v.*, {fine_bin_sql("v.x")} AS bin FROM ({stat_values_sql(where, only, only_param, environment)}) AS v) AS b
        GROUP BY {", ".join(str(i) for i in range(1, len(keys) + 1))}
    """


def add_day_stats(cursor, bounds: dict) -> None:
    keys = ["date_trunc('day', timestamp, 'UTC') AS day" if column == "day" else column for column in KEY]
    cursor.execute(
        f"CREATE TEMP TABLE metrics_new_stats ON COMMIT DROP AS "
        f"{binned_values_sql('n.id > %(old_node)s AND n.id <= %(new_node)s', keys)}",
        bounds,
    )
    cursor.execute("ANALYZE metrics_new_stats")
    figures = ", ".join(FIGURES)
    combined = ", ".join(f"{COMBINE_SQL[name]}({name}) AS {name}" for name in FIGURES)
    unique = ["project_id", "environment", "mask", "metric", "day", *STAT_DIMENSIONS, "bin"]
    # Each part in the unique index's order: its inserts and updates land next
    # to the one before in that (wide) index instead of on a random page of it,
    # which the shared buffers stop holding once the table outgrows them. (One
    # sort of the parts together would spill to disk on a rebuild; parts
    # sorted each are as good: runs of neighbouring entries.)
    parts = []
    for mask, columns in STAT_MASKS.items():
        dimensions = ", ".join(f"{c if c in columns else STAT_PLACEHOLDERS[c]} AS {c}" for c in STAT_DIMENSIONS)
        group = ", ".join(["project_id", "day", "environment", *columns, "metric"])
        order = ", ".join(c for c in unique if c in ("project_id", "environment", "metric", "day", *columns, "bin"))
        for bin_ in ("bin", str(WHOLE_BIN)):
            parts.append(f"(SELECT project_id, day, environment, {mask} AS mask, {dimensions}, metric, {bin_} AS bin, "
                         f"{combined} FROM metrics_new_stats GROUP BY {group}{', bin' if bin_ == 'bin' else ''} "
                         f"ORDER BY {order})")
    updates = ", ".join(f"{name} = {UPSERT[COMBINE_SQL[name]].format(name)}" for name in FIGURES)
    # A project with no rows yet (a build from nothing) has nothing to add to:
    # a plain insert, at about half an upsert's cost a row.
    cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {STAT} WHERE project_id IN "
                   f"(SELECT DISTINCT project_id FROM metrics_new_stats))")
    upsert = f"ON CONFLICT ({', '.join(unique)}) DO UPDATE SET {updates}" if cursor.fetchone()[0] else ""
    cursor.execute(
        f"""
        INSERT INTO {STAT} AS s (project_id, day, environment, mask, {", ".join(STAT_DIMENSIONS)}, metric, bin, {figures})
        {" UNION ALL ".join(parts)}
        {upsert}
        """
    )
    cursor.execute("DROP TABLE metrics_new_stats")

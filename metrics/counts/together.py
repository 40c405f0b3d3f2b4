"""Several questions about one window's statistics answered in one statement,
as metrics.counts.summaries answers each: the day statistics rollup for the
whole days, the partial days at the window's ends (and the rows after the
watermark) scanned raw. Asked one by one, a page of seven questions scans
its end days seven times and pays seven snapshots; here the raw rows are
binned once, by every dimension any question splits by, and each question
adds up its own part of them beside its rollup rows."""

from dataclasses import dataclass

from core.dialect import is_postgres
from metrics.counts import summaries
from metrics.counts.split import split
from metrics.filter_match import value_param, value_sql
from metrics.models import WHOLE_BIN, DayStat
from metrics.rollups.schema import NODE
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import bucket_sql, fetch
from metrics.rollups.values import (
    AGGREGATES_SQL,
    COMBINE_SQL,
    FIELD_SQL,
    FIGURES,
    MODEL_SQL,
    fine_bin_sql,
    stat_mask,
    stat_values_sql,
)
from metrics.rollups.watermark import read_marks
from metrics.stats.summary import Distribution, Ranked

GRAINS = ("", "day", "hour")  # coarsest to finest


@dataclass(frozen=True)
class Read:
    """One question: the stored `metrics` by `step` and `by`, as
    summaries.ranked answers it with `percents` set, else as
    summaries.distributions(binned=False). `pool_of` (a ranked read's index
    before this one, same metrics, step and by) makes it that read's groups
    beyond the `keep` of most volume (their counts added up in the reads
    `volume_of`) ranked as one group, keyed by value None, when more than
    keep + 1 groups have any: the legend's rule,
    metrics.dashboards.legend.split."""

    metrics: tuple[str, ...]
    step: str = ""
    by: str = ""
    percents: tuple[int, ...] = ()
    pool_of: int | None = None
    volume_of: tuple[int, ...] = ()
    keep: int = 0


def read(project, start, end, filters, reads: list[Read], use_rollups: bool = True) -> list[dict | None]:
    """Each read's {(bucket, value, metric): Ranked or Distribution (one bin)},
    keyed as summaries keys them. On SQLite each read is answered on its own,
    and a pooled read is None (the caller pools with summaries.ranked)."""
    for one in reads:
        summaries.checked(one.metrics, one.step, one.by)
    if not is_postgres():
        return [None if one.pool_of is not None else
                summaries.ranked(project, start, end, filters, one.metrics, one.step, one.by, use_rollups,
                                 one.percents) if one.percents else
                summaries.distributions(project, start, end, filters, one.metrics, one.step, one.by, use_rollups,
                                        binned=False) for one in reads]
    with one_snapshot():
        sql, params = statement(project, start, end, filters, reads, use_rollups)
        rows = fetch(sql, params)
    found: list[dict] = [{} for _ in reads]
    for index, bucket, value, metric, *figures in rows:
        one = reads[index]
        if one.by == "round" and value is not None:
            value = int(value)  # text beside the other reads' values
        if one.percents:
            found[index][(bucket, value, metric)] = Ranked.from_row(
                figures[:len(FIGURES) + len(one.percents)], one.percents)
        else:
            distribution = Distribution()
            distribution.add(0, figures[:len(FIGURES)])
            found[index][(bucket, value, metric)] = distribution
    return found


def statement(project, start, end, filters, reads: list[Read], use_rollups: bool) -> tuple[str, dict]:
    days = split(start, end, "day")
    chosen = summaries.stat_filters(filters)
    masks = [stat_mask([*chosen, *([one.by] if one.by else [])]) for one in reads]
    rolled = [use_rollups and days.whole is not None and one.step != "hour" and mask is not None
              for one, mask in zip(reads, masks, strict=True)]
    metrics = sorted({m for one in reads for m in one.metrics})
    dimensions = sorted({one.by for one in reads if one.by})
    grain = max((one.step for one in reads), key=GRAINS.index)
    params = {"project": project.pk, "environment": filters.environment, "metric": metrics, "window_start": start,
              **{f"f_{column}": value_param(value) for column, value in chosen.items()}}
    ranked = sorted({m for one in reads if one.percents for m in one.metrics})
    if all(m in FIELD_SQL for m in metrics) and len(ranked) <= 1:
        # Node fields, one of them ranked: the nodes added up without a row per value.
        def binned(wheres):
            return binned_fields(wheres, grain, dimensions, metrics, ranked[0] if ranked else None)
    else:
        def binned(wheres):
            return binned_values([stat_values_sql(w, tuple(metrics), "%(metric)s", "%(environment)s")
                                  for w in wheres], grain, dimensions)

    def where(intervals, extra: str, name: str) -> str:
        return summaries.raw_where(project, filters, intervals, params, extra, name)

    # edge: the raw rows no rollup row holds (the partial days, or the whole
    # window); late: those of the whole days after the watermark; rest: the
    # whole days' other rows, for a read the rollup cannot answer.
    ctes, raw = [], ["edge"]
    if any(rolled):
        params["day_from"], params["day_to"] = days.whole
        mark = int(read_marks().node)
        # A window of whole days has no partial days: an edge of no rows.
        scans = {"edge": [where(days.partial or [(start, start)], "TRUE" if days.partial else "FALSE", "edge")],
                 "late": [where([days.whole], f"n.id > {mark}", "late")]}
        if not all(rolled):
            scans["rest"] = [where([days.whole], f"n.id <= {mark}", "rest")]
        raw = list(scans)
    else:
        scans = {"edge": [where([(start, end)], "TRUE", "edge")]}
    for name, wheres in scans.items():
        ctes.append(f"{name} AS MATERIALIZED ({binned(wheres)})")
    combined = ", ".join(f"{COMBINE_SQL[name]}({name}) AS {name}" for name in FIGURES)
    figures = ", ".join(FIGURES)
    width = max((len(one.percents) for one in reads), default=0)
    sources = [source_of(reads, index) for index in range(len(reads))]
    # Reads another read answers finer come after it; pooled reads last.
    order = sorted(range(len(reads)), key=lambda i: (reads[i].pool_of is not None, sources[i] is not None))
    selects = []
    for index in order:
        one, source = reads[index], sources[index]
        params[f"m{index}"] = list(one.metrics)
        if one.pool_of is not None:
            ctes += pooled_ctes(index, one, combined)
        elif source is not None:
            # Added up from a finer read's bins (every node is in one group of
            # any dimension and one bucket of a finer step): the rows are not read twice.
            bucket = "bucket" if one.step == reads[source].step else bucket_sql(one.step, "bucket")
            ctes.append(f"r{index}_bins AS (SELECT GREATEST({bucket}, %(window_start)s) AS bucket, "
                        f"{'value' if one.by else 'NULL'} AS value, metric, {'bin' if one.percents else '0'} AS bin, "
                        f"{combined} FROM r{source}_bins WHERE metric = ANY(%(m{index})s) GROUP BY 1, 2, 3, 4)")
        elif rolled[index] and one.step == "day" and set(chosen) <= {one.by}:
            # The rollup holds one row per day, group and bin of this read:
            # only the rows after the watermark in those days (rarely any:
            # new nodes are today's) make it add them up.
            parts = f"r{index}_parts (bucket, value, metric, bin, {figures})"
            ctes.append(f"{parts} AS NOT MATERIALIZED ({day_stats(one, index, masks[index], chosen)})")
            ctes.append(f"r{index}_bins AS ((SELECT * FROM r{index}_parts WHERE NOT EXISTS (SELECT FROM late)) "
                        f"UNION ALL (SELECT bucket, value, metric, bin, {combined} FROM ((SELECT * FROM r{index}_parts) "
                        f"UNION ALL ({derived('late', grain, one, index)})) AS p WHERE EXISTS (SELECT FROM late) "
                        f"GROUP BY 1, 2, 3, 4) "
                        f"UNION ALL (SELECT GREATEST(bucket, %(window_start)s), value, metric, bin, {combined} "
                        f"FROM ({derived('edge', grain, one, index)}) AS e (bucket, value, metric, bin, {figures}) "
                        f"GROUP BY 1, 2, 3, 4))")
        else:
            parts = [derived(table, grain, one, index) for table in (["edge", "late"] if rolled[index] else raw)]
            if rolled[index]:
                parts.insert(0, day_stats(one, index, masks[index], chosen))
            union = " UNION ALL ".join(f"({part})" for part in parts)
            ctes.append(f"r{index}_parts (bucket, value, metric, bin, {figures}) AS ({union})")
            ctes.append(f"r{index}_bins AS (SELECT GREATEST(bucket, %(window_start)s) AS bucket, value, metric, bin, "
                        f"{combined} FROM r{index}_parts GROUP BY 1, 2, 3, 4)")
        pad = ", ".join(f"NULL::float8 AS p{i}" for i in range(len(one.percents), width))
        if one.percents:
            ctes.append(f"r{index}_running AS (SELECT *, {summaries.RUNNING_COUNTS_SQL} FROM r{index}_bins)")
            picks = ", ".join(f"{pick} AS p{i}" for i, pick in enumerate(summaries.percentile_picks(one.percents)))
            ctes.append(f"r{index}_found AS (SELECT bucket, value, metric, {combined}, {picks}"
                        f"{', ' + pad if pad else ''} FROM r{index}_running GROUP BY bucket, value, metric)")
        else:
            ctes.append(f"r{index}_found AS (SELECT bucket, value, metric, {figures}"
                        f"{', ' + pad if pad else ''} FROM r{index}_bins)")
        picked = ", ".join([figures, *(f"p{i}" for i in range(width))])
        selects.append(f"SELECT {index}, bucket, value::text, metric::text, {picked} FROM r{index}_found")
    union = "\nUNION ALL\n".join(f"({select})" for select in selects)
    return f"WITH {', '.join(ctes)}\n{union}", params


def source_of(reads: list[Read], index: int) -> int | None:
    """A read whose bins hold this read's, at a step as fine and split by the
    same dimension or this one by none (the coarsest such, the fewest rows
    to add up), or None. Only reads that have no such read themselves serve."""
    def covers(other: Read, one: Read) -> bool:
        return (other.pool_of is None and one.pool_of is None and set(one.metrics) <= set(other.metrics)
                and (bool(other.percents) or not one.percents) and one.by in ("", other.by)
                and GRAINS.index(other.step) >= GRAINS.index(one.step)
                # A read of the whole window, or of sums (a row per group and bucket), has few rows
                # to add up; a read of bins by bucket has more than the rollup holds for this read.
                and (other.step == "" or not other.percents)
                and (other.step, other.by) != (one.step, one.by))

    bases = [j for j, other in enumerate(reads) if not any(covers(r, other) for r in reads)]
    found = [j for j in bases if j != index and covers(reads[j], reads[index])]
    return min(found, key=lambda j: GRAINS.index(reads[j].step)) if found else None


def binned_values(scans: list[str], grain: str, dimensions: list[str]) -> str:
    """The scans' values (stat_values_sql) per bucket of `grain`, dimension, metric and fine bin."""
    keys = [f"{bucket_sql(grain, 'timestamp')} AS bucket", *dimensions, "metric", "bin"]
    union = " UNION ALL ".join(f"({sql})" for sql in scans)
    return (f"SELECT {', '.join(keys)}, {AGGREGATES_SQL} "
            f"FROM (SELECT v.*, {fine_bin_sql('v.x')} AS bin FROM ({union}) AS v) AS b "
            f"GROUP BY {', '.join(str(i) for i in range(1, len(keys) + 1))}")


def binned_fields(wheres: list[str], grain: str, dimensions: list[str], metrics: list[str], ranked: str | None) -> str:
    """binned_values for node fields alone, `ranked` (one of them, or None)
    on the fine grid and the others in bin 0 (read added up): the nodes are
    grouped by bucket, dimension and the ranked field's bin, each field's
    figures added up beside the others', then turned into a row per field."""
    xs = {metric: f"x{i}" for i, metric in enumerate(metrics)}
    fields = ", ".join(f"({FIELD_SQL[metric]})::float8 AS {x}" for metric, x in xs.items())
    columns = ", ".join(["n.timestamp", *(f"n.{d}" if d != "model" else f"{MODEL_SQL} AS model" for d in dimensions)])
    union = " UNION ALL ".join(f"(SELECT {columns}, {fields} FROM {NODE} n WHERE {where})" for where in wheres)
    figures = ", ".join(f"COUNT({x})::bigint, SUM({x}), SUM({x} * {x}), SUM({x} * {x} * {x}), "
                        f"SUM({x} * {x} * {x} * {x}), MIN({x}), MAX({x}), COUNT(*) FILTER (WHERE {x} <> floor({x}))::bigint"
                        for x in xs.values())
    names = ", ".join(f"{name}{i}" for i in range(len(xs)) for name in FIGURES)
    keys = ["bucket", *dimensions, "ranked_bin"]
    rows = ", ".join(f"('{metric}'::varchar, {'ranked_bin' if metric == ranked else '0'}, "
                     f"{', '.join(f'{name}{i}' for name in FIGURES)})" for i, metric in enumerate(metrics))
    ranked_bin = fine_bin_sql(xs[ranked]) if ranked else "0"
    return (f"SELECT {', '.join(['bucket', *dimensions])}, f.metric, f.bin, {', '.join(f'f.{n}' for n in FIGURES)} "
            f"FROM (SELECT {bucket_sql(grain, 'timestamp')} AS bucket, {', '.join(dimensions) + ', ' if dimensions else ''}"
            f"{ranked_bin} AS ranked_bin, {figures} FROM ({union}) AS v "
            f"GROUP BY {', '.join(str(i) for i in range(1, len(keys) + 1))}) AS g ({', '.join(keys)}, {names}) "
            f"CROSS JOIN LATERAL (VALUES {rows}) AS f (metric, bin, {', '.join(FIGURES)}) WHERE f.n > 0")


def derived(table: str, grain: str, one: Read, index: int) -> str:
    """A read's rows of the binned raw rows in `table`, at its own step and group."""
    bucket = "bucket" if one.step == grain else bucket_sql(one.step, "bucket")
    # Not added up here: the read adds up its parts once, rollup rows and these together.
    return (f"SELECT {bucket}, {keys(one)}, {'bin' if one.percents else '0'}, {', '.join(FIGURES)} "
            f"FROM {table} WHERE metric = ANY(%(m{index})s)")


def keys(one: Read) -> str:
    """A read's group and metric columns; text compared byte by byte (the
    "C" collation): they are only grouped and ranked within, never shown in
    their order, and the locale's comparison is most of a sort of a month of bins."""
    value = "NULL" if not one.by else one.by if one.by == "round" else f'{one.by} COLLATE "C"'
    return f'{value}, metric COLLATE "C"'


def day_stats(one: Read, index: int, mask: int, chosen: dict) -> str:
    """A read's rows of the rollup: binned, a group's day is its bins without
    the row of them added up; summed, that row alone."""
    conditions = "".join(f" AND {value_sql(column, f'%(f_{column})s', value)}" for column, value in chosen.items())
    bins = f" AND bin {'<>' if one.percents else '='} {WHOLE_BIN}"
    return (f"SELECT {bucket_sql(one.step, 'day')}, {keys(one)}, {'bin' if one.percents else '0'}, "
            f"{', '.join(FIGURES)} FROM {DayStat._meta.db_table} WHERE project_id = %(project)s "
            f"AND environment = %(environment)s AND mask = {int(mask)} AND metric = ANY(%(m{index})s) "
            f"AND day >= %(day_from)s AND day < %(day_to)s{conditions}{bins}")


def pooled_ctes(index: int, one: Read, combined: str) -> list[str]:
    # Counted from the reads' answers (a row per bucket and group), not their bins.
    volumes = " UNION ALL ".join(f"(SELECT value, n FROM r{source}_found)" for source in one.volume_of)
    keep = int(one.keep)
    return [
        f"r{index}_volumes AS (SELECT value, SUM(n) AS volume FROM ({volumes}) AS v GROUP BY value)",
        # Ties in display order (metrics.dashboards.series.display_order):
        # whole numbers first, as numbers, then text, no value last.
        f"r{index}_kept AS (SELECT value FROM r{index}_volumes ORDER BY volume DESC, value IS NULL, "
        f"NOT value::text ~ '^-?[0-9]+$', CASE WHEN value::text ~ '^-?[0-9]+$' THEN value::text::numeric END, "
        f"value::text COLLATE \"C\" LIMIT {keep})",
        f"r{index}_bins AS (SELECT bucket, NULL AS value, metric, bin, {combined} FROM r{one.pool_of}_bins b "
        f"WHERE (SELECT COUNT(*) FROM r{index}_volumes) > {keep + 1} AND NOT EXISTS "
        f"(SELECT 1 FROM r{index}_kept k WHERE k.value IS NOT DISTINCT FROM b.value) GROUP BY bucket, metric, bin)",
    ]

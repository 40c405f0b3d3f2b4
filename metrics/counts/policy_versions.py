"""What each fuse policy version did: the fuse decisions made under it
(`Fuse.policy_version`, sent by the SDK) in a window, and what followed for
the traces they were made in, so the effect of a policy change reads as
before and after, not only its existence.

Per version (None: decisions that named no version), over the decisions with
start <= timestamp < end about traces of the filters' environment (production
unless asked, per the contract's "Environments"; with filters: about a node
matching them):
- decisions, nodes judged, traces;
- fuse_rate: judged nodes blocked / judged nodes;
- incorrect_rate: reviewed traces judged incorrect / reviewed traces (a
  trace's newest review counts; None when none was reviewed);
- escalation_rate: escalations in those traces / traces.

Hours no decision, node, review or escalation has touched since the last
refresh are read from metrics.models.PolicyHour, less the repeats of nodes
and traces seen in several of them (PolicyItemHour.spanning); the rest of the
window (partial hours at its ends, touched hours) from the raw decisions,
adding the nodes and traces not counted already. `scanned` is the same from
the raw rows alone: the reference, and the path on other databases.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count

from core.dialect import is_postgres
from core.replica import reading_connection
from metrics.filter_match import lookups
from metrics.models import PolicyHour, PolicyItemHour
from metrics.questions import Filters, Question
from metrics.rollups.schema import (
    ESCALATION,
    EVERY_DIMENSION,
    FUSE,
    NO_DIMENSIONS,
    NODE,
    REVIEW,
    TRACE,
    mask_of,
    trace_outcome_sql,
)
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import fetch, filters_sql, intervals_sql
from metrics.rollups.values import DEFAULT_ENVIRONMENT, in_environment_sql
from metrics.rollups.watermark import read_marks
from metrics.windows.rollup_part import Coverage, cut
from provenance.models import Escalation, Fuse, Node, Review, ReviewVerdict, Trace
from provenance.vocabulary import BLOCKING_DECISION

POLICY_HOUR, ITEM = PolicyHour._meta.db_table, PolicyItemHour._meta.db_table
TRACE_ITEM, PRODUCT_ITEM = PolicyItemHour.TRACE, PolicyItemHour.PRODUCT
FIGURES = ("decisions", "nodes", "fused", "traces", "reviewed", "incorrect", "escalations")


@dataclass
class Figures:
    counts: dict = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))

    def add(self, amounts) -> None:
        for name, amount in zip(FIGURES, amounts):
            self.counts[name] += amount


def compare(project, start, end, filters: Filters, use_rollups: bool = True) -> list[dict]:
    # A trace with decisions about nodes of two of a filter's values is in a
    # policy hour row of each: traces (and their reviews, escalations) are counted raw.
    if not is_postgres() or not use_rollups or not filters.in_hour_rollups or filters.several:
        return scanned(project, start, end, filters)
    with one_snapshot():
        marks = read_marks()
        [piece] = cut(Question(start, end), Coverage(marks.node, marks.fuse, touched_hours(project, marks)))
        found: dict = defaultdict(Figures)
        if piece.rolled:
            add_rolled(project, filters, piece.rolled, found)
        if piece.recent:
            add_recent(project, filters, piece.rolled, piece.recent, found)
    return [row(version, figures.counts) for version, figures in sorted(found.items(), key=version_order)
            if figures.counts["decisions"]]


def version_order(item):
    return item[0] is None, item[0] or 0


def row(version, c: dict) -> dict:
    return {
        "policy_version": version,
        "decisions": c["decisions"],
        "nodes": c["nodes"],
        "traces": c["traces"],
        "fuse_rate": c["fused"] / c["nodes"] if c["nodes"] else 0.0,
        "reviewed": c["reviewed"],
        "incorrect_rate": c["incorrect"] / c["reviewed"] if c["reviewed"] else None,
        "escalations": c["escalations"],
        "escalation_rate": c["escalations"] / c["traces"] if c["traces"] else 0.0,
    }


def touched_hours(project, marks) -> frozenset:
    """Hours (of decisions) the policy rollup does not hold right: new
    decisions, decisions whose node is new, traces with new reviews or escalations."""
    rows = fetch(
        f"""
        SELECT date_trunc('hour', timestamp, 'UTC') FROM {FUSE} WHERE project_id = %(p)s AND id > %(fuse)s
        UNION
        SELECT date_trunc('hour', f.timestamp, 'UTC') FROM {NODE} n
        JOIN {FUSE} f ON f.project_id = n.project_id AND f.product_id = n.product_id
        WHERE n.project_id = %(p)s AND n.id > %(node)s
        UNION
        SELECT i.hour FROM {ITEM} i JOIN {TRACE} t ON t.project_id = i.project_id AND t.trace_id = i.key
        WHERE i.project_id = %(p)s AND i.kind = {TRACE_ITEM} AND i.mask = {NO_DIMENSIONS} AND t.id IN (
            SELECT trace_id FROM {REVIEW} WHERE project_id = %(p)s AND id > %(review)s
            UNION
            SELECT trace_id FROM {ESCALATION} WHERE project_id = %(p)s AND id > %(escalation)s)
        """,
        {"p": project.pk, "fuse": marks.fuse, "node": marks.node, "review": marks.review,
         "escalation": marks.escalation},
    )
    return frozenset(hour for (hour,) in rows)


def item_conditions(filters: Filters, kind: int) -> tuple[str, list]:
    """Which item rows a question reads: with filters, those of nodes matching
    them; without, every node row and the overall trace rows."""
    conditions, params = filters_sql(filters.dimensions)
    if filters.dimensions:
        mask = f"mask = {EVERY_DIMENSION}"
    else:
        mask = "TRUE" if kind == PRODUCT_ITEM else f"mask = {NO_DIMENSIONS}"
    return f"kind = {kind} AND {mask} AND {conditions}", params


def add_rolled(project, filters: Filters, rolled: list[tuple], found: dict) -> None:
    conditions, params = filters_sql(filters.dimensions)
    ranges, range_params = intervals_sql("hour", rolled)
    for version, *sums in fetch(
        f"SELECT policy_version, {', '.join(f'SUM({name})::bigint' for name in FIGURES)} FROM {POLICY_HOUR} "
        f"WHERE project_id = %s AND mask = %s AND {conditions} AND {ranges} GROUP BY 1",
        [project.pk, mask_of(filters.dimensions), *params, *range_params],
    ):
        found[version].add(sums)
    # Nodes and traces counted in several of those hours count once.
    products, product_params = item_conditions(filters, PRODUCT_ITEM)
    for version, repeats, blocked_repeats in fetch(
        f"""
        SELECT policy_version, SUM(hours - 1)::bigint, SUM(GREATEST(blocked_hours - 1, 0))::bigint FROM (
            SELECT policy_version, COUNT(*) AS hours, COUNT(*) FILTER (WHERE blocked) AS blocked_hours FROM {ITEM}
            WHERE project_id = %s AND spanning AND {products} AND {ranges} GROUP BY policy_version, key
        ) AS repeated GROUP BY 1
        """,
        [project.pk, *product_params, *range_params],
    ):
        found[version].add([0, -repeats, -blocked_repeats])
    traces, trace_params = item_conditions(filters, TRACE_ITEM)
    for version, *repeats in fetch(
        f"""
        SELECT policy_version, SUM(hours - 1)::bigint, SUM((hours - 1) * reviewed::int)::bigint,
            SUM((hours - 1) * incorrect::int)::bigint, SUM((hours - 1) * escalations)::bigint FROM (
            SELECT policy_version, COUNT(DISTINCT hour) AS hours, bool_or(reviewed) AS reviewed,
                bool_or(incorrect) AS incorrect, MAX(escalations) AS escalations FROM {ITEM}
            WHERE project_id = %s AND spanning AND {traces} AND {ranges} GROUP BY policy_version, key
        ) AS repeated GROUP BY 1
        """,
        [project.pk, *trace_params, *range_params],
    ):
        found[version].add([0, 0, 0, *(-n for n in repeats)])


def add_recent(project, filters: Filters, rolled: list[tuple], recent: list[tuple], found: dict) -> None:
    times, time_params = intervals_sql("f.timestamp", recent)
    conditions, params = filters_sql(filters.dimensions, "n.")
    node_join = (f"JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id AND {conditions}"
                 if filters.dimensions else "")
    production, production_params = in_environment_sql("f.trace_id", DEFAULT_ENVIRONMENT, project.pk, by="trace_id")
    decisions = fetch(
        f"SELECT f.policy_version, f.trace_id, f.product_id, {BLOCKING_DECISION.sql('f')} FROM {FUSE} f {node_join} "
        f"WHERE f.project_id = %s AND {times} AND {production}",
        [*params, project.pk, *time_params, *production_params],
    )
    products, blocked, traces = defaultdict(set), defaultdict(set), defaultdict(set)
    for version, trace, product, is_block in decisions:
        found[version].counts["decisions"] += 1
        products[version].add(product)
        traces[version].add(trace)
        if is_block:
            blocked[version].add(product)
    seen_products = counted_items(project, filters, rolled, PRODUCT_ITEM, {p for s in products.values() for p in s})
    seen_traces = counted_items(project, filters, rolled, TRACE_ITEM, {t for s in traces.values() for t in s})
    new_traces = {version: keys - set(seen_traces.get(version, {})) for version, keys in traces.items()}
    outcomes = trace_outcomes(project, {t for keys in new_traces.values() for t in keys})
    for version in products:
        seen = seen_products.get(version, {})
        counts = found[version].counts
        counts["nodes"] += len(products[version] - set(seen))
        counts["fused"] += len({p for p in blocked[version] if not seen.get(p)})
        for trace in new_traces[version]:
            reviewed, incorrect, escalations = outcomes.get(trace, (False, False, 0))
            counts["traces"] += 1
            counts["reviewed"] += reviewed
            counts["incorrect"] += incorrect
            counts["escalations"] += escalations


def counted_items(project, filters: Filters, rolled: list[tuple], kind: int, keys: set) -> dict:
    """{version: {key: blocked}} of the items among `keys` the rolled hours counted."""
    found: dict = defaultdict(dict)
    if not rolled or not keys:
        return found
    conditions, params = item_conditions(filters, kind)
    ranges, range_params = intervals_sql("hour", rolled)
    for version, key, blocked in fetch(
        f"SELECT policy_version, key, bool_or(blocked) FROM {ITEM} "
        f"WHERE project_id = %s AND key = ANY(%s) AND {conditions} AND {ranges} GROUP BY 1, 2",
        [project.pk, sorted(keys), *params, *range_params],
    ):
        found[version][key] = blocked
    return found


def trace_outcomes(project, trace_keys: set) -> dict[str, tuple]:
    if not trace_keys:
        return {}
    join, columns = trace_outcome_sql("t")
    with reading_connection().cursor() as cursor:
        cursor.execute(f"SELECT t.trace_id, {columns} FROM {TRACE} t {join} WHERE t.project_id = %s "
                       "AND t.trace_id = ANY(%s)", [project.pk, sorted(trace_keys)])
        return {trace: tuple(outcome) for trace, *outcome in cursor.fetchall()}


def scanned(project, start, end, filters: Filters) -> list[dict]:
    """The same from the raw rows alone: a few queries per version (versions in a window are few)."""
    fuses = in_environment(project, Fuse.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end),
                           filters.environment)
    if filters.model:
        fuses = fuses.filter(product_id__in=Node.objects.filter(project=project, **lookups({"model": filters.model}))
                             .values("product_id"))
    if filters.dimensions:
        fuses = fuses.filter(product_id__in=Node.objects.filter(project=project, **lookups(filters.dimensions))
                             .values("product_id"))
    grouped = (fuses.order_by().values("policy_version")
               .annotate(decisions=Count("pk"), nodes=Count("product_id", distinct=True),
                         fused=Count("product_id", distinct=True, filter=BLOCKING_DECISION.q()),
                         traces=Count("trace_id", distinct=True)))
    rows = []
    for group in sorted(grouped, key=lambda g: (g["policy_version"] is None, g["policy_version"] or 0)):
        version = group["policy_version"]
        traces = fuses.filter(policy_version=version) if version is not None else fuses.filter(
            policy_version__isnull=True)
        trace_ids = traces.values("trace_id")
        verdicts = newest_verdicts(project, trace_ids)
        escalations = Escalation.objects.filter(project=project, trace__trace_id__in=trace_ids).count()
        rows.append(row(version, {**group, "reviewed": len(verdicts), "escalations": escalations,
                                  "incorrect": sum(v == ReviewVerdict.INCORRECT for v in verdicts.values())}))
    return rows


def in_environment(project, fuses, environment: str):
    """The decisions about traces of `environment`; a trace not stored yet is production's (as in_environment_sql)."""
    if environment == DEFAULT_ENVIRONMENT:
        others = Trace.objects.filter(project=project).exclude(environment=environment)
        return fuses.exclude(trace_id__in=others.values("trace_id"))
    return fuses.filter(trace_id__in=Trace.objects.filter(project=project, environment=environment).values("trace_id"))


def newest_verdicts(project, trace_ids) -> dict[int, str]:
    found = {}
    for trace_pk, verdict in (Review.objects.filter(project=project, trace__trace_id__in=trace_ids)
                              .order_by("timestamp", "pk").values_list("trace_id", "verdict")):
        found[trace_pk] = verdict
    return found

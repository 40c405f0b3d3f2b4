"""Which confidence a review judges.

A review naming a product_id judges that node. A trace-level review judges
the trace's final answer (of the filters' environment), by the rule of
provenance.vocabulary: the newest node with source_type "final_answer", else
the newest node that nothing in the trace consumed unless it is fused. When a node was reviewed more than once, the
newest review counts. Reviews whose node is missing or has no confidence are
counted apart ("unscored"). Filters apply to the judged node; the window to
the review's timestamp.
"""

from datetime import datetime

import orjson
from django.db.models import Q

from core.replica import reading_connection
from metrics.filter_match import matches
from metrics.models import ReviewTarget
from metrics.questions import Filters
from metrics.rollups.schema import DIMENSIONS, NODE, review_target_sql
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.watermark import read_marks
from metrics.stats.calibration import Judged
from provenance.models import DEFAULT_ENVIRONMENT, Review, ReviewVerdict, Trace

TARGET = ReviewTarget._meta.db_table
AGENT = DIMENSIONS.index("agent_id")


def judged_nodes(project, start: datetime, end: datetime, filters: Filters = Filters(),
                 use_targets: bool = True) -> tuple[list[Judged], int]:
    """(the judged nodes with a confidence, how many reviews could not be scored).

    Targets come from metrics.models.ReviewTarget where the refresh resolved
    them and nothing has changed since (no new node in the review's trace, no
    new node with the product it names); the rest are resolved here.
    `use_targets=False` resolves every review here (the benchmark's baseline)."""
    marks = read_marks()
    node_mark, review_mark = marks.node, marks.review
    if not use_targets:
        review_mark = 0
    # Only reviews of the filters' environment (production unless asked): an
    # evaluation run's verdicts judge the run, not the production signal.
    reviews = Review.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
    if filters.environment == DEFAULT_ENVIRONMENT:
        # "Not one of the other environments' traces": a short list, not every production trace,
        # found by the (project, environment) index (so < or >, not <>), as in_environment_sql does.
        others = Trace.objects.filter(Q(environment__lt=DEFAULT_ENVIRONMENT) | Q(environment__gt=DEFAULT_ENVIRONMENT),
                                      project=project).values("pk")
        reviews = reviews.exclude(trace_id__in=others)
    else:
        reviews = reviews.filter(trace_id__in=Trace.objects.filter(project=project, environment=filters.environment)
                                 .values("pk"))
    reviews = reviews.values("pk", "timestamp", "verdict", "trace_id", "product_id", "project_id")
    sql, params = reviews.query.sql_with_params()
    resolved_here = review_target_sql("r")
    figures = "confidence, metrics, agent_id, step, source_type, round"
    with one_snapshot(), reading_connection().cursor() as cursor:
        # One statement: targets the refresh resolved (with the node's figures)
        # where nothing changed since, the rest resolved here; then the newest
        # review per judged node. Linear however far the refresh lags: the
        # traces with new nodes are a hash join (a NOT IN over a set too large
        # to hash is a scan of it per review), a new node with a review's product
        # one probe of the unique index, and the judged node of an unsettled
        # review is looked up by its id once that id is known (joined on the
        # expression itself, the planner hashed the whole node table).
        cursor.execute(
            f"""
            WITH fresh_traces AS (SELECT DISTINCT trace_id FROM {NODE} WHERE project_id = %s AND id > %s),
            reviews AS MATERIALIZED (
                SELECT r.*, t.review_id IS NOT NULL AND r.pk <= %s AND ft.trace_id IS NULL
                            AND (r.product_id = '' OR NOT EXISTS (
                                SELECT 1 FROM {NODE} p WHERE p.project_id = r.project_id
                                AND p.product_id = r.product_id AND p.id > %s)) AS settled,
                       t.node_pk, {", ".join(f"t.{c}" for c in figures.split(", "))}
                FROM ({sql}) AS r LEFT JOIN {TARGET} t ON t.project_id = r.project_id AND t.review_id = r.pk
                LEFT JOIN fresh_traces ft ON ft.trace_id = r.trace_id
            ),
            unsettled AS MATERIALIZED (
                SELECT r.timestamp, r.pk, r.verdict, r.project_id, ({resolved_here}) AS target
                FROM reviews r WHERE NOT r.settled
            ),
            mapped AS (
                SELECT timestamp, pk, verdict, node_pk AS target, {figures} FROM reviews WHERE settled
                UNION ALL
                SELECT u.timestamp, u.pk, u.verdict, n.id, {", ".join(f"n.{c}" for c in figures.split(", "))}
                FROM unsettled u LEFT JOIN {NODE} n ON n.project_id = u.project_id AND n.id = u.target
            )
            SELECT target, verdict, {figures} FROM (
                SELECT *, ROW_NUMBER() OVER (PARTITION BY target ORDER BY timestamp DESC, pk DESC) AS newest
                FROM mapped
            ) AS m
            WHERE newest = 1 OR target IS NULL
            """,
            [project.pk, node_mark, review_mark, node_mark, *params],
        )
        rows = cursor.fetchall()
    wanted = [(DIMENSIONS.index(column), value) for column, value in filters.dimensions.items()]
    judged, unscored = [], 0
    for target, verdict, confidence, metrics, *dimensions in rows:
        if target is None:
            unscored += 1
        elif wanted and not all(matches(dimensions[index], value) for index, value in wanted):
            continue
        elif confidence is None:
            unscored += 1
        else:
            if isinstance(metrics, (str, bytes)):
                metrics = orjson.loads(metrics)
            judged.append(Judged(confidence, verdict == ReviewVerdict.CORRECT, metrics if isinstance(metrics, dict) else {},
                                 dimensions[AGENT]))
    return judged, unscored

"""The ingest path: a validated batch of events becomes a handful of statements.

One transaction per batch, one multi-row statement per table. Idempotency by
event id: a node's record is the node itself (its product id is unique per
project and it keeps its event id), other events' ids are kept in
IngestedEvent. A resent event stores nothing; two concurrent copies of the
same batch serialise on the unique indexes instead of both writing.
"""

from collections import defaultdict
from dataclasses import dataclass, field

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, Min
from django.utils import timezone

from core.bulk import bound_cursor, copy_rows, in_list, insert_many
from core.dialect import is_postgres
from provenance import tasks
from provenance.costs import PriceTable
from provenance.explorer import live
from provenance.ingest.validation import (
    EscalationEvent,
    Event,
    EventError,
    FuseEvent,
    NodeEvent,
    ReviewEvent,
    event_id_of,
    parse_event,
)
from provenance.models import DEFAULT_ENVIRONMENT, Edge, Escalation, Fuse, IngestedEvent, Node, Review, Trace
from provenance.root_causes import pending
from tenancy.models import Project


@dataclass
class IngestResult:
    successes: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)

    def as_response(self) -> dict:
        return {"successes": self.successes, "errors": self.errors}


# An answered batch's counts ride on its response, (accepted, rejected), for the
# process metrics (denoise_dashboard.request_metrics): neither ingest endpoint
# (the JSON API, OTLP) keeps counters itself.
COUNTS_ATTRIBUTE = "ingest_counts"


def with_counts(response, accepted: int, rejected: int):
    setattr(response, COUNTS_ATTRIBUTE, (accepted, rejected))
    return response


def to_json(value: dict) -> str:
    # PostgreSQL's jsonb refuses \u0000; keep everything else of the agent's data.
    return orjson.dumps(value).replace(b"\\u0000", b"\\ufffd").decode()


def ingest_events(project: Project, raw_events: list) -> IngestResult:
    """Validates and stores a batch; each event is judged on its own."""
    parsed: list[tuple[int, Event]] = []
    outcome: dict[int, tuple[int, str | None]] = {}  # position -> (status, error message)
    first_seen: dict[str, int] = {}
    duplicates: dict[int, int] = {}
    for position, raw in enumerate(raw_events):
        try:
            event = parse_event(raw)
        except EventError as error:
            outcome[position] = (error.status, error.message)
            continue
        if event.event_id in first_seen:
            duplicates[position] = first_seen[event.event_id]
            continue
        first_seen[event.event_id] = position
        parsed.append((position, event))

    if parsed:
        with transaction.atomic():
            store_new_events(project, parsed, outcome)

    for position, original in duplicates.items():
        status, message = outcome[original]
        outcome[position] = (200, None) if status in (200, 201) else (status, message)

    result = IngestResult()
    for position, raw in enumerate(raw_events):
        status, message = outcome[position]
        entry = {"id": event_id_of(raw), "status": status}
        if message is None:
            result.successes.append(entry)
        else:
            entry["message"] = message
            result.errors.append(entry)
    return result


def store_new_events(project: Project, parsed: list, outcome: dict) -> None:
    now = timezone.now()
    if is_postgres():
        try:
            with transaction.atomic():
                copy_batch(project, parsed, outcome, now)
            return
        except IntegrityError:
            # Some id was taken already (a resend, a reused product id, a
            # concurrent copy of the batch): the conflict-safe path sorts out
            # who stored what, event by event.
            pass
    insert_batch(project, parsed, outcome, now)


@dataclass
class SortedBatch:
    """A batch's new events by kind; `nodes` holds one node per product id."""

    nodes: list[tuple[int, NodeEvent]] = field(default_factory=list)
    fuses: list[FuseEvent] = field(default_factory=list)
    reviews: list[ReviewEvent] = field(default_factory=list)
    escalations: list[EscalationEvent] = field(default_factory=list)

    def other_trace_ids(self) -> list[str]:
        return [e.trace_id for e in self.reviews] + [e.trace_id for e in self.escalations]


def taken_product(node: NodeEvent) -> str:
    return f"product_id: {node.product_id!r} is already used by another event"


def sort_batch(
    parsed: list, outcome: dict, fresh: set[str] | None = None, stored: dict[str, str] | None = None
) -> SortedBatch:
    """Sorts the new events by kind and gives each its status.

    An event whose id is not `fresh` (None: every id is new) was sent before,
    as whatever type: a resend (200), nothing stored. A node whose product id
    is `stored` already is a resend (200) when the stored node came from the
    same event id (nodes stored before their ids were recorded), else a reused
    product id (409). A product id may be claimed only once: within the batch,
    the first wins and the others are 409s."""
    batch = SortedBatch()
    by_kind = {FuseEvent: batch.fuses, ReviewEvent: batch.reviews, EscalationEvent: batch.escalations}
    stored = stored or {}
    seen_products = set()
    for position, event in parsed:
        if fresh is not None and event.event_id not in fresh:
            outcome[position] = (200, None)
        elif type(event) is not NodeEvent:
            outcome[position] = (201, None)
            by_kind[type(event)].append(event)
        elif event.product_id in seen_products:
            outcome[position] = (409, taken_product(event))
        elif event.product_id in stored:
            seen_products.add(event.product_id)
            outcome[position] = (200, None) if stored[event.product_id] == event.event_id else (409, taken_product(event))
        else:
            seen_products.add(event.product_id)
            outcome[position] = (201, None)
            batch.nodes.append((position, event))
    return batch


def copy_batch(project: Project, parsed: list, outcome: dict, now) -> None:
    """The optimistic path (PostgreSQL): assumes every id is new and COPYs
    straight into the tables. The common case, new events, costs no lookups at
    all; a unique index (any event's id, a node's product id) turns any
    taken id into an IntegrityError, which sends the batch down `insert_batch`."""
    batch = sort_batch(parsed, outcome)
    record_event_ids(project, [n.event_id for _, n in batch.nodes]
                     + [e.event_id for e in batch.fuses + batch.reviews + batch.escalations], now)
    trace_pks, moved = upsert_traces(project, batch, outcome, now)
    copy_nodes(project, batch.nodes, trace_pks, now)
    write_after_nodes(project, batch, batch.nodes, trace_pks, now)
    if moved:
        # Refused for their environment: they stored nothing, their ids stay free.
        release_event_ids(project, [e.event_id for position, e in parsed if outcome[position][0] == 400])
        recount_traces(project, moved)


def insert_batch(project: Project, parsed: list, outcome: dict, now) -> None:
    """The conflict-safe path, on any database: claims event ids with `INSERT …
    ON CONFLICT DO NOTHING`, looks up which product ids are stored already, and
    sorts out, event by event, what was stored before."""
    fresh = claim_event_ids(project, [event.event_id for _, event in parsed], now)
    products = [event.product_id for _, event in parsed if type(event) is NodeEvent and event.event_id in fresh]
    batch = sort_batch(parsed, outcome, fresh, stored_node_events(project, products))
    trace_pks, moved = upsert_traces(project, batch, outcome, now)
    inserted = insert_nodes(project, batch.nodes, trace_pks, now)
    refused = [(position, node) for position, node in batch.nodes if node.product_id not in inserted]
    if refused:
        # Taken since the look-up, by a concurrent batch: a copy of this same
        # event (200) or another event (409).
        stored = stored_node_events(project, [node.product_id for _, node in refused])
        for position, node in refused:
            outcome[position] = (200, None) if stored.get(node.product_id) == node.event_id else (409, taken_product(node))
    write_after_nodes(project, batch, [(p, n) for p, n in batch.nodes if n.product_id in inserted], trace_pks, now)
    # A node refused for its product id or its environment stored nothing: its id stays free to be sent again.
    release_event_ids(project, [e.event_id for position, e in parsed if outcome[position][0] in (400, 409)])
    if refused or moved:
        # After the reviews: a trace a review in this batch points at must stay.
        recount_traces(project, {trace_pks[n.trace_id] for _, n in refused} | moved)


def stored_node_events(project: Project, product_ids: list[str]) -> dict[str, str]:
    """product id -> event id of the nodes stored already among `product_ids`."""
    if not product_ids:
        return {}
    clause, params = in_list(product_ids)
    with bound_cursor() as cursor:
        cursor.execute(
            f"SELECT product_id, event_id FROM {Node._meta.db_table} WHERE project_id = %s AND product_id {clause}",
            [project.pk, *params],
        )
        return dict(cursor.fetchall())


def write_after_nodes(project: Project, batch: SortedBatch, stored: list, trace_pks: dict[str, int], now) -> None:
    """Everything that follows the nodes written (`stored`): their edges and
    inline fuses, fuse states, escalations, reviews, and the live update."""
    insert_edges(project, stored, trace_pks)
    insert_fuses(project, stored, batch.fuses)
    apply_fuse_states(project, [n.product_id for _, n in stored] + [f.product_id for f in batch.fuses])
    insert_escalations(project, batch.escalations, trace_pks)
    insert_reviews(project, batch.reviews, trace_pks)
    close_escalations(project, batch.reviews, trace_pks, now)

    new_nodes_by_trace: dict[int, list[str]] = defaultdict(list)
    for _, node in stored:
        new_nodes_by_trace[trace_pks[node.trace_id]].append(node.product_id)
    touched_traces = (set(new_nodes_by_trace) | {trace_pks[t] for t in batch.other_trace_ids()}
                      | fused_traces(project, batch.fuses, trace_pks))
    if touched_traces:
        transaction.on_commit(
            lambda: live.publish_ingest(project.pk, dict(new_nodes_by_trace), sorted(touched_traces))
        )
        # The stored root causes are refreshed when read (provenance.root_causes.pending), not in this request.
        placed = {n.product_id for _, n in stored}
        fused = {f.product_id for f in batch.fuses}
        pending.mark(project, touched_traces, placed | fused, fused - placed)
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            # A worker drains soon, so readers seldom find much to do; eager, it would run in this request.
            transaction.on_commit(lambda: tasks.ask_to_settle(project.pk))


def fused_traces(project: Project, fuses: list[FuseEvent], trace_pks: dict[str, int]) -> set[int]:
    """Pks of the stored traces that `fuses` judge nodes of: an open trace page
    shows a fuse decision about a node it already has."""
    wanted = {f.trace_id for f in fuses}
    known = {trace_pks[t] for t in wanted if t in trace_pks}
    missing = wanted - trace_pks.keys()
    if missing:
        known |= set(Trace.objects.filter(project=project, trace_id__in=missing).values_list("pk", flat=True))
    return known


def claim_event_ids(project: Project, event_ids: list[str], now) -> set[str]:
    """Records the ids; returns those that were not stored before."""
    return {
        row[0]
        for row in insert_many(
            IngestedEvent._meta.db_table,
            ["project_id", "event_id", "received_at"],
            ["bigint", "text", "timestamptz"],
            [(project.pk, event_id, now) for event_id in event_ids],
            on_conflict="ON CONFLICT (project_id, event_id) DO NOTHING",
            returning="event_id",
        )
    }


def release_event_ids(project: Project, event_ids: list[str]) -> None:
    if not event_ids:
        return
    clause, params = in_list(event_ids)
    with bound_cursor() as cursor:
        cursor.execute(f"DELETE FROM {IngestedEvent._meta.db_table} WHERE project_id = %s AND event_id {clause}",
                       [project.pk, *params])


def record_event_ids(project: Project, event_ids: list[str], now) -> None:
    copy_rows(IngestedEvent._meta.db_table, ["project_id", "event_id", "received_at"],
              [(project.pk, event_id, now) for event_id in event_ids], ["bigint", "text", "timestamptz"])


def other_environment(node: NodeEvent, environment: str) -> str:
    return (f"environment: trace {node.trace_id!r} is in environment {environment!r}, "
            f"not {node.environment!r} (its first node set it)")


def refuse_other_environments(batch: SortedBatch, environments: dict[str, str], outcome: dict) -> set[str]:
    """Takes out of `batch.nodes` the nodes that name another environment than
    their trace's (400 for each); returns their trace ids."""
    kept, refused = [], set()
    for position, node in batch.nodes:
        environment = environments.get(node.trace_id)
        if node.environment is not None and environment is not None and node.environment != environment:
            outcome[position] = (400, other_environment(node, environment))
            refused.add(node.trace_id)
        else:
            kept.append((position, node))
    batch.nodes = kept
    return refused


def upsert_traces(project: Project, batch: SortedBatch, outcome: dict, now) -> tuple[dict[str, int], set[int]]:
    """Creates traces on first sight and folds this batch's counters into them;
    traces that only other events (reviews, escalations) name are created too.

    A trace's environment is its first node's (`production` when that names
    none): nodes that name another one are refused once the upsert has said
    which environment each trace is in. The upsert counted them already, so
    the pks of the traces to recount are returned beside every trace's pk.
    """
    first = {}
    for _, node in batch.nodes:
        first.setdefault(node.trace_id, node.environment or DEFAULT_ENVIRONMENT)
    stats: dict[str, list] = {}
    for _, node in batch.nodes:
        s = stats.setdefault(node.trace_id, [0, None, 0, node.timestamp, node.timestamp, first[node.trace_id]])
        s[0] += 1
        if node.confidence is not None and (s[1] is None or node.confidence < s[1]):
            s[1] = node.confidence
        s[2] += node.is_error
        s[3] = min(s[3], node.timestamp)
        s[4] = max(s[4], node.timestamp)
    for trace_id in batch.other_trace_ids():
        stats.setdefault(trace_id, [0, None, 0, None, None, DEFAULT_ENVIRONMENT])
    if not stats:
        return {}, set()
    t = "t"
    least = "LEAST" if is_postgres() else "MIN"
    greatest = "GREATEST" if is_postgres() else "MAX"

    def merge(column: str, fn: str) -> str:
        # NULL-safe on both databases: SQLite's MIN/MAX return NULL if any argument is.
        return (
            f"{column} = CASE WHEN {t}.{column} IS NULL THEN EXCLUDED.{column} "
            f"WHEN EXCLUDED.{column} IS NULL THEN {t}.{column} "
            f"ELSE {fn}({t}.{column}, EXCLUDED.{column}) END"
        )

    table = Trace._meta.db_table
    rows = insert_many(
        f"{table} AS {t}",
        ["project_id", "trace_id", "created_at", "node_count", "min_confidence", "error_count", "started_at", "ended_at",
         "environment"],
        ["bigint", "text", "timestamptz", "int", "float8", "int", "timestamptz", "timestamptz", "text"],
        [(project.pk, trace_id, now, *s) for trace_id, s in stats.items()],
        on_conflict=(
            "ON CONFLICT (project_id, trace_id) DO UPDATE SET "
            # A trace a review created before any node has no environment of
            # its own yet: its first node's sets it.
            f"environment = CASE WHEN {t}.node_count = 0 AND EXCLUDED.node_count > 0 "
            f"THEN EXCLUDED.environment ELSE {t}.environment END, "
            f"node_count = {t}.node_count + EXCLUDED.node_count, "
            f"error_count = {t}.error_count + EXCLUDED.error_count, "
            f"{merge('min_confidence', least)}, {merge('started_at', least)}, {merge('ended_at', greatest)}"
        ),
        returning="id, trace_id, environment",
    )
    pks = {trace_id: pk for pk, trace_id, _ in rows}
    refused = refuse_other_environments(batch, {trace_id: environment for _, trace_id, environment in rows}, outcome)
    return pks, {pks[trace_id] for trace_id in refused}


def recount_traces(project: Project, trace_pks: set[int]) -> None:
    """Rare path: counters folded in before a node was refused are recomputed,
    and a trace that only a refused node brought into being is removed again."""
    for trace in Trace.objects.filter(project=project, pk__in=trace_pks):
        nodes = Node.objects.filter(trace=trace)
        trace.node_count = nodes.count()
        if not trace.node_count and not trace.reviews.exists():
            trace.delete()
            continue
        trace.error_count = nodes.filter(is_error=True).count()
        trace.min_confidence = min((c for c in nodes.values_list("confidence", flat=True) if c is not None), default=None)
        span = nodes.aggregate(first=Min("timestamp"), last=Max("timestamp"))
        trace.started_at, trace.ended_at = span["first"], span["last"]
        trace.save(update_fields=["node_count", "error_count", "min_confidence", "started_at", "ended_at"])


NODE_COLUMNS = [
    "project_id", "trace_id", "product_id", "event_id", "agent_id", "step", "source_type", "content",
    "raw_input", "confidence", "confidence_raw", "confidence_scale", "round", "is_error", "fuse_state",
    "metrics", "metadata", "timestamp", "received_at", "retry_of", "attempt",
    "duration_ms", "model", "input_tokens", "output_tokens", "cost_usd",
]
NODE_TYPES = [
    "bigint", "bigint", "text", "text", "text", "text", "text", "text",
    "text", "float8", "float8", "float8", "int", "bool", "smallint",
    "jsonb", "jsonb", "timestamptz", "timestamptz", "text", "int",
    "float8", "text", "int", "int", "float8",
]


def node_rows(project: Project, nodes: list, trace_pks: dict[str, int], now) -> list[tuple]:
    prices = PriceTable(project.prices)
    pk = project.pk
    return [
        (
            pk, trace_pks[n.trace_id], n.product_id, n.event_id, n.agent_id, n.step, n.source_type, n.content,
            n.raw_input, n.confidence, n.confidence_raw, n.confidence_scale, n.round, n.is_error,
            n.fuse.decision if n.fuse else 0, to_json(n.metrics), to_json(n.metadata), n.timestamp, now,
            n.retry_of, n.attempt,
            n.duration_ms, n.model, n.input_tokens, n.output_tokens,
            n.cost_usd if n.cost_usd is not None else prices.cost(n.model, n.input_tokens, n.output_tokens),
        )
        for _, n in nodes
    ]


def insert_nodes(project: Project, nodes: list, trace_pks: dict[str, int], now) -> set[str]:
    """Conflict-safe insert; returns the product ids of the nodes written."""
    returned = insert_many(
        Node._meta.db_table,
        NODE_COLUMNS,
        NODE_TYPES,
        node_rows(project, nodes, trace_pks, now),
        on_conflict="ON CONFLICT (project_id, product_id) DO NOTHING",
        returning="product_id",
    )
    return {row[0] for row in returned}


def copy_nodes(project: Project, nodes: list, trace_pks: dict[str, int], now) -> None:
    """COPY; a product id that is taken already raises IntegrityError."""
    copy_rows(Node._meta.db_table, NODE_COLUMNS, node_rows(project, nodes, trace_pks, now), NODE_TYPES)


def insert_edges(project: Project, nodes: list, trace_pks: dict[str, int]) -> None:
    rows = [
        (project.pk, trace_pks[n.trace_id], n.product_id, parent, position)
        for _, n in nodes
        for position, parent in enumerate(n.parent_ids)
    ]
    insert_many(
        Edge._meta.db_table,
        ["project_id", "trace_id", "child_product_id", "parent_product_id", "position"],
        ["bigint", "bigint", "text", "text", "smallint"],
        rows,
    )


def fuse_row(project: Project, event: NodeEvent | FuseEvent, inline: bool) -> tuple:
    fuse = event.fuse
    return (project.pk, event.trace_id, event.product_id, event.event_id, fuse.decision, fuse.reason,
            fuse.reason_code, fuse.policy_version, fuse.threshold, fuse.by_agent_id, inline, event.timestamp)


def insert_fuses(project: Project, nodes: list, fuse_events: list[FuseEvent]) -> None:
    rows = [fuse_row(project, n, True) for _, n in nodes if n.fuse is not None]
    rows += [fuse_row(project, f, False) for f in fuse_events]
    insert_many(
        Fuse._meta.db_table,
        ["project_id", "trace_id", "product_id", "event_id", "decision", "reason", "reason_code", "policy_version",
         "threshold", "by_agent_id", "inline", "timestamp"],
        ["bigint", "text", "text", "text", "smallint", "text", "text", "int", "float8", "text", "bool",
         "timestamptz"],
        rows,
    )


def apply_fuse_states(project: Project, product_ids: list[str]) -> None:
    """A node's fuse state is the most severe decision on it, whichever arrived
    first: the node, or a consumer's decision about it."""
    if not product_ids:
        return
    clause, params = in_list(sorted(set(product_ids)))
    node_table, fuse_table = Node._meta.db_table, Fuse._meta.db_table
    with bound_cursor() as cursor:
        cursor.execute(
            f"UPDATE {node_table} SET fuse_state = f.worst "
            f"FROM (SELECT product_id, MAX(decision) AS worst FROM {fuse_table} "
            f"      WHERE project_id = %s AND product_id {clause} GROUP BY product_id) AS f "
            f"WHERE {node_table}.project_id = %s AND {node_table}.product_id = f.product_id "
            f"AND {node_table}.fuse_state < f.worst",
            [project.pk, *params, project.pk],
        )


def insert_reviews(project: Project, reviews: list[ReviewEvent], trace_pks: dict[str, int]) -> None:
    insert_many(
        Review._meta.db_table,
        ["project_id", "trace_id", "product_id", "event_id", "verdict", "comment", "timestamp"],
        ["bigint", "bigint", "text", "text", "text", "text", "timestamptz"],
        [(project.pk, trace_pks[r.trace_id], r.product_id, r.event_id, r.verdict, r.comment, r.timestamp) for r in reviews],
    )


def insert_escalations(project: Project, escalations: list[EscalationEvent], trace_pks: dict[str, int]) -> None:
    insert_many(
        Escalation._meta.db_table,
        ["project_id", "trace_id", "product_id", "event_id", "reason", "by_agent_id", "timestamp"],
        ["bigint", "bigint", "text", "text", "text", "text", "timestamptz"],
        [(project.pk, trace_pks[e.trace_id], e.product_id, e.event_id, e.reason, e.by_agent_id, e.timestamp)
         for e in escalations],
    )


def close_escalations(project: Project, reviews: list[ReviewEvent], trace_pks: dict[str, int], now) -> None:
    """A review closes the open escalations of its node, or of every node of its
    trace when it judges the trace as a whole; escalations stored in the same
    batch included. The first of the batch's reviews that applies is recorded."""
    if not reviews:
        return
    esc, review = Escalation._meta.db_table, Review._meta.db_table
    traces, trace_params = in_list(sorted({trace_pks[r.trace_id] for r in reviews}))
    events, event_params = in_list([r.event_id for r in reviews])
    closing = (
        f"SELECT r.id FROM {review} r WHERE r.project_id = {esc}.project_id AND r.trace_id = {esc}.trace_id "
        f"AND (r.product_id = '' OR r.product_id = {esc}.product_id) AND r.event_id {events} "
        "ORDER BY r.timestamp, r.id LIMIT 1"
    )
    with bound_cursor() as cursor:
        cursor.execute(
            f"UPDATE {esc} SET closed_by_review_id = ({closing}), closed_at = %s "
            f"WHERE project_id = %s AND closed_at IS NULL AND trace_id {traces} AND EXISTS ({closing})",
            [*event_params, now, project.pk, *trace_params, *event_params],
        )

"""Keeping FinalAnswer and AnswerCause right: the root causes of every final
answer that went wrong, stored so the aggregate never walks a DAG.

A root cause is a property of a final answer that changes only when its
trace, something upstream of it or a review changes. `refresh` recomputes the
rows of a set of traces from scratch (idempotent, in bulk: a fixed number of
statements whatever the number of traces); `affected_traces` says which
traces a change reaches (the traces downstream of a changed node, in any
trace). Both run over what ingests marked (provenance.root_causes.pending),
before anything reads the stored rows; provenance.root_causes.catch_up
drains the marks every minute and finds what no mark named.

The root causes are those of provenance.dag.walks.root_causes (the per-trace
endpoint), computed by the same code over ancestries read for many traces at
once.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import groupby
from operator import itemgetter

import orjson
from django.db import transaction

from core.bulk import bound_cursor, in_list, insert_many
from core.dialect import is_postgres
from provenance.dag import walks
from provenance.models import AnswerCause, Edge, FinalAnswer, Fuse, Node, Review, ReviewVerdict, Trace
from provenance.vocabulary import FUSED, HIGH_UNCERTAINTY, UNCERTAIN_TRACE, pick_final_answer
from tenancy.models import Project

NODE, TRACE, REVIEW, FUSE, EDGE = (m._meta.db_table for m in (Node, Trace, Review, Fuse, Edge))
ANSWER, CAUSE = FinalAnswer._meta.db_table, AnswerCause._meta.db_table
ARROW = " → "
# Namespace of the PostgreSQL advisory locks that keep two refreshes off one trace.
LOCK_NAMESPACE = 24
# A refresh reads its traces a chunk of about this many nodes at a time: each
# chunk's nodes, edges and reviews in one statement each, however many traces
# that is. (A statement per 500 traces made a drain cost the pending traces
# times the project's size: without statistics, which a server without
# autovacuum never has, PostgreSQL's planner reads those by the project's index
# and so reads every node of the project for each statement.) The bound keeps
# a chunk's rows in memory small on a large catch-up.
NODES_PER_CHUNK = 100_000
# And at most this many traces: a chunk's transaction holds an advisory lock
# per trace until it commits, in a lock table every session shares
# (max_locks_per_transaction × connections, 6,400 by default).
TRACES_PER_CHUNK = 2_000
# SQLite caps a statement's parameters (32,766).
SQLITE_IDS = 10_000
SQLITE_TRACES_PER_CHUNK = 500
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Lists of row ids are sent as the columns' type (core.bulk.in_list).
IDS = "bigint[]"
# A node read for the refresh, as these columns (pick_final_answer's `fields`).
NODE_FIELDS = ("trace_pk", "pk", "product_id", "agent_id", "step", "timestamp", "confidence", "fuse_state",
               "is_error", "source_type", "model")
TRACE_PK, PK, PRODUCT, AGENT, STEP, TIMESTAMP, CONFIDENCE, FUSE_STATE, IS_ERROR, SOURCE_TYPE, MODEL = range(11)


@dataclass
class Answer:
    trace_pk: int
    trace_key: str
    node_pk: int
    product_id: str
    agent_id: str
    step: str
    timestamp: object
    confidence: float | None
    fuse_state: int
    verdict: str | None
    environment: str
    model: str

    def judged(self, threshold: float) -> tuple[bool, bool, bool]:
        """(incorrect, fused, low_confidence)."""
        return (self.verdict == ReviewVerdict.INCORRECT, FUSED.holds(fuse_state=self.fuse_state),
                HIGH_UNCERTAINTY.holds(confidence=self.confidence, threshold=threshold))


@dataclass
class Chunk:
    """What a refresh reads of a chunk of traces (`read_chunk`)."""

    traces: list[tuple]  # (pk, client trace id, environment, min_confidence, node_count)
    nodes: dict[int, list[tuple]]  # trace pk -> its nodes (NODE_FIELDS), oldest first
    edges: dict[int, list[tuple]]  # trace pk -> its edges' (trace pk, child, parent)
    reviews: dict[int, list[tuple[str, str]]]  # trace pk -> its reviews' (product id, verdict), oldest first


def traces_of(project_pk: int, trace_pks: list[int]) -> list[tuple]:
    """(pk, client trace id, environment, min_confidence, node_count) of these traces, by pk."""
    rows = []
    with bound_cursor() as cursor:
        for clause, params in _id_lists(trace_pks, IDS):
            cursor.execute(f"SELECT id, trace_id, environment, min_confidence, node_count FROM {TRACE} "
                           f"WHERE project_id = %s AND id {clause}", [project_pk, *params])
            rows += cursor.fetchall()
    return sorted(rows)


def read_chunk(project_pk: int, traces: list[tuple]) -> Chunk:
    """The nodes, edges and reviews of these traces, one statement each.

    Read once for all the chunk's traces, and the answer picked here
    (vocabulary.pick_final_answer, the Python form of final_answer_sql): a
    lookup per trace let PostgreSQL's planner, on tables without statistics
    (autovacuum off, a table just filled), AND the trace's index with the
    project's, reading every node of the project once per trace."""
    if not traces:
        return Chunk([], {}, {}, {})
    clause, params = in_list([t[0] for t in traces], IDS)
    scoped = [project_pk, *params]
    # On PostgreSQL the timestamp travels as integer microseconds (exact, and
    # loaded in C; Django's timestamp loader was a tenth of a drain's time).
    timestamp = "(EXTRACT(EPOCH FROM timestamp) * 1000000)::bigint" if is_postgres() else "timestamp"
    by_trace = itemgetter(0)
    with bound_cursor() as cursor:
        cursor.execute(f"SELECT trace_id, id, product_id, agent_id, step, {timestamp}, confidence, fuse_state, is_error, "
                       f"source_type, model FROM {NODE} WHERE project_id = %s AND trace_id {clause} "
                       "ORDER BY trace_id, timestamp, id", scoped)
        nodes = {trace_pk: list(rows) for trace_pk, rows in groupby(cursor.fetchall(), by_trace)}
        cursor.execute(f"SELECT trace_id, child_product_id, parent_product_id FROM {EDGE} "
                       f"WHERE project_id = %s AND trace_id {clause} ORDER BY trace_id", scoped)
        edges = {trace_pk: list(rows) for trace_pk, rows in groupby(cursor.fetchall(), by_trace)}
        cursor.execute(f"SELECT trace_id, product_id, verdict FROM {REVIEW} WHERE project_id = %s AND trace_id {clause} "
                       "ORDER BY timestamp, id", scoped)
        reviews: dict[int, list[tuple[str, str]]] = {}
        for trace_pk, product_id, verdict in cursor.fetchall():
            reviews.setdefault(trace_pk, []).append((product_id, verdict))
    return Chunk(traces, nodes, edges, reviews)


def final_answers(chunk: Chunk, threshold: float) -> list[Answer]:
    """The final answers of the chunk's traces that may have gone wrong (traces
    with none are left out), each with the verdict of its newest review (of
    the node or of its trace). A trace whose answer went wrong has an
    incorrect review, a fused node or a node below the threshold: the others
    are passed over."""
    answers = []
    for trace_pk, trace_key, environment, min_confidence, _ in chunk.traces:
        its_nodes, its_reviews = chunk.nodes.get(trace_pk, []), chunk.reviews.get(trace_pk, [])
        if not (UNCERTAIN_TRACE.holds(min_confidence=min_confidence, threshold=threshold)
                or any(verdict == ReviewVerdict.INCORRECT for _, verdict in its_reviews)
                or any(FUSED.holds(fuse_state=n[FUSE_STATE]) for n in its_nodes)):
            continue
        node = pick_final_answer(its_nodes, {edge[2] for edge in chunk.edges.get(trace_pk, ())}, NODE_FIELDS)
        if node is None:
            continue
        verdict = next((v for product_id, v in reversed(its_reviews) if product_id in ("", node[PRODUCT])), None)
        answers.append(Answer(trace_pk, trace_key, node[PK], node[PRODUCT], node[AGENT], node[STEP],
                              _moment(node[TIMESTAMP]), node[CONFIDENCE], node[FUSE_STATE], verdict, environment,
                              node[MODEL]))
    return answers


def _moment(timestamp):
    """A node's timestamp as read_chunk reads it, as a datetime."""
    return EPOCH + timedelta(microseconds=timestamp) if isinstance(timestamp, int) else timestamp


def _walked(node: tuple) -> walks.WalkedNode:
    """A node as read_chunk reads it, as the walks read it (walks.walked_columns)."""
    timestamp = node[TIMESTAMP] / 1_000_000 if isinstance(node[TIMESTAMP], int) else node[TIMESTAMP]
    return walks.WalkedNode(node[PRODUCT], node[TRACE_PK], node[CONFIDENCE], node[FUSE_STATE], node[IS_ERROR],
                            timestamp)


def _id_lists(values, array_type: str = ""):
    """(membership test, parameters) for these values: one on PostgreSQL,
    SQLITE_IDS at a time on SQLite."""
    ordered = sorted(values)
    size = len(ordered) if is_postgres() else SQLITE_IDS
    for start in range(0, len(ordered), size or 1):
        yield in_list(ordered[start:start + size], array_type)


def _product_lists(product_ids):
    """(membership test, parameters) for these product ids. On PostgreSQL one
    JSON array, unpacked by the server: psycopg quotes a text array's elements
    in Python (a second for a drain's 200,000 ids), and the planner, which
    weighs each element of an array constant (almost half a second more), sees
    a set it probes by the index. SQLITE_IDS at a time on SQLite."""
    if is_postgres():
        if product_ids:
            yield "IN (SELECT jsonb_array_elements_text(%s::jsonb))", [_json(sorted(product_ids))]
        return
    yield from _id_lists(product_ids)


def _by_product(project_pk: int, product_ids, sql: str) -> list[tuple]:
    """The rows of `sql` (with {clause}: the product id test) for these product ids."""
    rows = []
    with bound_cursor() as cursor:
        for clause, params in _product_lists(product_ids):
            cursor.execute(sql.format(clause=clause), [project_pk, *params])
            rows += cursor.fetchall()
    return rows


def policy_versions(project_pk: int, trace_of: dict[str, int]) -> dict[int, int]:
    """trace pk -> the policy version named by the newest fuse decision about a
    node of that trace that names one; `trace_of` maps the traces' product ids
    to their trace pks (decisions are found by product, through their index)."""
    rows = _by_product(project_pk, trace_of, f"SELECT product_id, policy_version, timestamp, id FROM {FUSE} "
                                             "WHERE project_id = %s AND product_id {clause} "
                                             "AND policy_version IS NOT NULL")
    return {trace_of[product_id]: version for product_id, version, *_ in sorted(rows, key=lambda r: (r[2], r[3]))}


def node_labels(project_pk: int, product_ids: set[str]) -> dict[str, tuple[str, str, str]]:
    """product id -> (agent_id, step, client trace id)."""
    # The trace's key by a lookup per node: joined, PostgreSQL's planner hashed
    # the whole trace table for a few hundred nodes (a cost growing with the table).
    rows = _by_product(project_pk, product_ids, f"SELECT n.product_id, n.agent_id, n.step, "
                                                f"(SELECT t.trace_id FROM {TRACE} t WHERE t.project_id = n.project_id AND t.id = n.trace_id) "
                                                f"FROM {NODE} n WHERE n.project_id = %s AND n.product_id {{clause}}")
    return {row[0]: row[1:] for row in rows}


@dataclass
class Group:
    agent_id: str
    step: str
    reason: str
    product_ids: list[str]
    path: list[str]
    passed_on: set[str]


def groups_of(answer: Answer, nodes: dict, parents: dict, threshold: float) -> tuple[list[Group], set[str]]:
    """The answer's root causes grouped by (agent, step, reason), still without
    labels (filled in by `label`); and the ids whose labels that needs."""
    ancestors = walks.ancestry_within(answer.product_id, parents)
    own_nodes = {pid: nodes[pid] for pid in ancestors if pid in nodes}
    own_parents = {pid: parents[pid] for pid in ancestors if pid in parents}
    causes, _, _ = walks.causes_in(answer.product_id, own_nodes, own_parents, threshold)
    children: dict[str, list[str]] = {}
    for child, its_parents in own_parents.items():
        for parent in its_parents:
            children.setdefault(parent, []).append(child)
    groups, wanted = [], set()
    for cause in causes:
        downstream = walks.ancestry_within(cause.product_id, children) - {cause.product_id}
        passed = {pid for pid in downstream if pid in own_nodes and not FUSED.holds(own_nodes[pid])}
        path = walks.path_between(cause.product_id, answer.product_id, own_parents)
        groups.append(Group("", "", cause.reason, [cause.product_id], path, passed))
        wanted |= {cause.product_id, *path, *passed}
    return groups, wanted


def label(groups: list[Group], labels: dict) -> list[Group]:
    """Fills in agents and steps, merging the causes that share a group (the
    first keeps its path); passed_on becomes the set of agents."""
    merged: dict[tuple, Group] = {}
    for group in groups:
        agent_id, step, _ = labels.get(group.product_ids[0], ("", "", ""))
        key = (agent_id, step, group.reason)
        agents = {labels[pid][0] for pid in group.passed_on if pid in labels}
        if key in merged:
            merged[key].product_ids += group.product_ids
            merged[key].passed_on |= agents
        else:
            merged[key] = Group(agent_id, step, group.reason, group.product_ids, group.path, agents)
    return list(merged.values())


def refresh(project: Project, trace_pks) -> int:
    """Recomputes the stored root causes of these traces' final answers; returns
    how many answers went wrong among them."""
    trace_pks = sorted(set(trace_pks))
    if not trace_pks:
        return 0
    traces = traces_of(project.pk, trace_pks)
    # A trace gone (deleted) still has its stored rows removed: it joins a chunk without nodes.
    found = {t[0] for t in traces}
    traces = sorted(traces + [(pk, None, None, None, 0) for pk in trace_pks if pk not in found])
    most_traces = TRACES_PER_CHUNK if is_postgres() else SQLITE_TRACES_PER_CHUNK
    stored, chunk, nodes = 0, [], 0
    for trace in traces:
        if chunk and (nodes + trace[4] > NODES_PER_CHUNK or len(chunk) == most_traces):
            stored += _refresh_chunk(project, chunk)
            chunk, nodes = [], 0
        chunk.append(trace)
        nodes += trace[4]
    return stored + _refresh_chunk(project, chunk)


def _refresh_chunk(project: Project, traces: list[tuple]) -> int:
    threshold = project.high_uncertainty_threshold
    trace_pks = [t[0] for t in traces]
    with transaction.atomic():
        if is_postgres():
            with bound_cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, (t %% 2147483648)::int) FROM unnest(%s::bigint[]) t",
                               [LOCK_NAMESPACE, trace_pks])
        chunk = read_chunk(project.pk, [t for t in traces if t[1] is not None])
        answers = final_answers(chunk, threshold)
        wrong = [a for a in answers if any(a.judged(threshold))]
        wrong_traces = {a.trace_pk for a in wrong}
        keys = {t[0]: t[1] for t in traces}
        # The wrong answers' traces, and upstream of them (walks.ancestries_of_traces, from the rows read).
        nodes, labels = {}, {}
        for trace_pk in wrong_traces:
            for node in chunk.nodes.get(trace_pk, ()):
                nodes[node[PRODUCT]] = _walked(node)
                labels[node[PRODUCT]] = (node[AGENT], node[STEP], keys[trace_pk])
        own = list(nodes)
        nodes, parents = walks.with_upstream(
            project.pk, nodes, [edge[1:] for trace_pk in sorted(wrong_traces) for edge in chunk.edges.get(trace_pk, ())])
        grouped, wanted = [], set()
        for answer in wrong:
            groups, needs = groups_of(answer, nodes, parents, threshold)
            grouped.append(groups)
            wanted |= needs
        # Causes upstream in other traces are labelled by a look-up; the wrong traces' own nodes were read already.
        if wanted - labels.keys():
            labels |= node_labels(project.pk, wanted - labels.keys())
        versions = policy_versions(project.pk, {pid: nodes[pid].trace_pk for pid in own})
        _write(project, trace_pks, wrong, [label(g, labels) for g in grouped], labels, versions, threshold)
    return len(wrong)


def _write(project, trace_pks, wrong, grouped, labels, versions, threshold) -> None:
    clause, params = in_list(trace_pks, IDS)
    with bound_cursor() as cursor:
        # The answers' ids first, by their unique trace: in one statement, a
        # planner without statistics scanned every cause of the project once
        # per answer of the project.
        cursor.execute(f"SELECT id FROM {ANSWER} WHERE project_id = %s AND trace_id {clause}", [project.pk, *params])
        stale = [row[0] for row in cursor.fetchall()]
        if stale:
            answers, answer_params = in_list(stale, IDS)
            cursor.execute(f"DELETE FROM {CAUSE} WHERE project_id = %s AND answer_id {answers}",
                           [project.pk, *answer_params])
            cursor.execute(f"DELETE FROM {ANSWER} WHERE project_id = %s AND id {answers}", [project.pk, *answer_params])
    if not wrong:
        return
    rows = []
    for answer, groups in zip(wrong, grouped):
        incorrect, fused, low = answer.judged(threshold)
        rows.append((project.pk, answer.trace_pk, answer.trace_key, answer.node_pk, answer.product_id,
                     answer.agent_id, answer.step, answer.timestamp, answer.confidence, incorrect, fused, low,
                     versions.get(answer.trace_pk), threshold, len(groups), answer.environment, answer.model))
    ids = dict((trace_pk, pk) for pk, trace_pk in insert_many(
        ANSWER,
        ["project_id", "trace_id", "trace_key", "node_pk", "product_id", "agent_id", "step", "timestamp",
         "confidence", "incorrect", "fused", "low_confidence", "policy_version", "threshold", "cause_count",
         "environment", "model"],
        ["bigint", "bigint", "text", "bigint", "text", "text", "text", "timestamptz", "float8", "bool", "bool",
         "bool", "int", "float8", "int", "text", "text"],
        rows,
        returning="id, trace_id",
    ))
    cause_rows = []
    for answer, groups, row in zip(wrong, grouped, rows):
        incorrect, fused, low = row[9:12]
        for group in groups:
            cause_trace = labels.get(group.product_ids[0], ("", "", ""))[2]
            path_agents = ARROW.join(labels.get(pid, ("?",))[0] for pid in group.path)
            cause_rows.append((
                project.pk, ids[answer.trace_pk], answer.timestamp, answer.trace_key, answer.agent_id, incorrect,
                fused, low, row[12], group.agent_id, group.step, group.reason, _json(group.product_ids),
                cause_trace, _json(group.path), path_agents, _json(sorted(group.passed_on)), answer.environment,
                answer.model,
            ))
    insert_many(
        CAUSE,
        ["project_id", "answer_id", "timestamp", "trace_key", "answer_agent_id", "incorrect", "fused",
         "low_confidence", "policy_version", "agent_id", "step", "reason", "product_ids", "cause_trace_key", "path",
         "path_agents", "passed_on", "environment", "answer_model"],
        ["bigint", "bigint", "timestamptz", "text", "text", "bool", "bool", "bool", "int", "text", "text", "text",
         "jsonb", "text", "jsonb", "text", "jsonb", "text", "text"],
        cause_rows,
    )


def _json(value) -> str:
    return orjson.dumps(value).decode()


def affected_traces(project: Project, trace_pks, product_ids, unplaced=None) -> set[int]:
    """These traces, those of these products, and every trace downstream of
    them: a node arriving (a late parent), fused or failing changes the root
    causes of everything that consumed it, in any trace. Followed trace by
    trace past the first step (a trace reached is refreshed whole anyway), so
    the common case, new nodes nothing consumed yet, costs one index probe per
    product and nothing more. `unplaced`: the products whose own trace may not
    be among `trace_pks` (None: any of them), looked up by product id."""
    affected = set(trace_pks)
    seeds = sorted(set(product_ids))
    unplaced = sorted(set(seeds if unplaced is None else unplaced))
    reached: set[int] = set()
    with bound_cursor() as cursor:
        for clause, params in _product_lists(unplaced):
            cursor.execute(f"SELECT DISTINCT trace_id FROM {NODE} WHERE project_id = %s AND product_id {clause}",
                           [project.pk, *params])
            affected |= {row[0] for row in cursor.fetchall()}
        if is_postgres() and seeds:
            # The ids as a JSON array (see _product_lists) joined by position:
            # generate_series tells the planner how many there are, so it
            # probes the index for a few and hashes the project's edges for
            # a drain's hundreds of thousands (probing those took seconds).
            cursor.execute(f"SELECT DISTINCT e.trace_id FROM generate_series(0, %s) AS i JOIN {EDGE} e "
                           "ON e.project_id = %s AND e.parent_product_id = %s::jsonb ->> i",
                           [len(seeds) - 1, project.pk, _json(seeds)])
            reached |= {row[0] for row in cursor.fetchall()}
        else:
            for clause, params in _id_lists(seeds):
                cursor.execute(f"SELECT DISTINCT trace_id FROM {EDGE} WHERE project_id = %s "
                               f"AND parent_product_id {clause}", [project.pk, *params])
                reached |= {row[0] for row in cursor.fetchall()}
        frontier = reached - affected
        while frontier:
            affected |= frontier
            clause, params = in_list(sorted(frontier), IDS)
            cursor.execute(
                f"SELECT DISTINCT e.trace_id FROM {NODE} n JOIN {EDGE} e ON e.project_id = n.project_id "
                f"AND e.parent_product_id = n.product_id WHERE n.project_id = %s AND n.trace_id {clause}",
                [project.pk, *params],
            )
            frontier = {row[0] for row in cursor.fetchall()} - affected
    return affected

"""Finds the faults of one project's provenance DAG and writes them as findings.

Each kind is one `INSERT … SELECT` that PostgreSQL runs as hash (anti-)joins
over two temporary tables made once per run: the columns of the project's
nodes the checks read (`health_node`), and the links between stored nodes
(`health_link`, read by fused use and cycles). Nothing is loaded into Python
except what cycle detection cannot leave to SQL: the links that survive its
search (see `find_cycles`).

What counts, where the contract leaves room:

- broken_link: one finding per parent id that names no node of the project.
  A link gets the grace period from the moment the server received its child
  (`received_at`): the parent may still be on its way. When the check is run as
  of an instant before that arrival (`--now` replaying the client's timeline),
  the child's own `timestamp` stands in for it.
- orphan: a node with no parent ids at all and no consumer, in a trace of two
  or more nodes. Links into other traces count (a node consumed from another
  trace is not an orphan), and so do parent ids not arrived yet: such a node is
  the subject of a broken_link, not an orphan. `retry_of` is a link too, both
  ways: a retry is linked to the attempt it retries, and that attempt to it.
- cycle: every node in a strongly connected group of two or more nodes, and
  every node that lists itself as a parent. Cycles may span traces. A node
  downstream (or upstream) of a cycle but not on it is not reported.
- fused_indirect_use: one finding per node that consumed at least one fused
  (blocked) node while being neither fused nor downweighted itself; the detail
  names the fused parents.
- round_limit_exceeded: one finding per trace with a node whose round exceeds
  the round limit (the fuse policy's default max_rounds, see provenance/health/round_limit.py;
  without a policy the default policy's, as metrics counts breaches), naming
  its highest-round node.
"""

from collections import Counter
from datetime import datetime, timedelta

from django.db import connection

from core.bulk import insert_many
from core.dialect import is_postgres
from provenance.dag.walks import strongly_connected
from provenance.models import Edge, FindingKind, HealthFinding, Node, Trace
from provenance.vocabulary import DEFAULT_ROUND_LIMIT, FUSED, GUARDED, OVER_ROUND_LIMIT, RETRIED

# What each kind means, in a person's words: the page, the API's groups and
# the trend's legend all say it from here.
DESCRIPTIONS = {
    FindingKind.BROKEN_LINK: "A parent id that names no node of this project, ten minutes or more after its "
                             "consumer arrived.",
    FindingKind.ORPHAN: "A node with neither parents nor consumers (a retry is linked to the attempt it "
                        "retries), in a trace of two or more nodes.",
    FindingKind.CYCLE: "A node on a parent cycle (one line per node on it), or a node that lists itself as a "
                       "parent.",
    FindingKind.FUSED_INDIRECT_USE: "A node that consumed a fused (blocked) node without being fused or "
                                    "downweighted itself.",
    FindingKind.ROUND_LIMIT_EXCEEDED: "A trace whose highest round exceeds the fuse policy's max_rounds (one "
                                      "line per trace, naming its highest-round node).",
}

NODE = Node._meta.db_table
EDGE = Edge._meta.db_table
TRACE = Trace._meta.db_table
FINDING = HealthFinding._meta.db_table

# Trimming removes the sources and sinks of the link graph layer by layer (a
# DAG of depth d is gone after about d/2 rounds). It stops once what remains is
# small enough for Tarjan in Python, or after so many rounds that the remainder
# is a chain thousands of links deep, which Tarjan walks faster than more passes.
PYTHON_LINKS = 50_000
MAX_TRIM_ROUNDS = 32
STREAM_BATCH = 10_000
# Going round a cycle of two or more nodes (child to parent), the timestamps
# cannot fall at every link: every cycle has a link whose parent is not older
# than its child. In a sound DAG a parent comes before what consumes it, so
# such links are rare, often absent: with none there is no cycle, and with a
# few the search starts from them instead of trimming the whole graph.
SEEDED_SEARCH_LIMIT = 10_000

INSERT_FINDING = f"INSERT INTO {FINDING} (report_id, project_id, kind, trace_id, product_id, agent_id, step, detail) "


def find_all(report_pk: int, project_pk: int, now: datetime, grace_seconds: int,
             max_rounds: int = DEFAULT_ROUND_LIMIT) -> None:
    with connection.cursor() as cursor:
        if is_postgres():
            # The joins below hash a million-row table; the default 4 MB spills to disk.
            cursor.execute("SET LOCAL work_mem = '128MB'")
        # The node table is wide (texts, metadata); every kind reads a few of
        # its columns, so they are copied once into a narrow table that the
        # joins below scan instead (at 6.5M nodes, 6 GB per scan of the table).
        _create_node_table(cursor, project_pk)
        find_broken_links(cursor, report_pk, project_pk, now, now - timedelta(seconds=grace_seconds))
        find_orphans(cursor, report_pk, project_pk)
        # One join of the edges with both their nodes, read by the next two.
        links = _create_link_table(cursor, project_pk)
        find_fused_indirect_use(cursor, report_pk, project_pk)
        find_cycles(cursor, report_pk, project_pk, links)
        find_round_limit_exceeded(cursor, report_pk, project_pk, max_rounds)
        cursor.execute("DROP TABLE health_node")


def find_broken_links(cursor, report_pk: int, project_pk: int, now: datetime, cutoff: datetime) -> None:
    adapt = connection.ops.adapt_datetimefield_value
    cursor.execute(
        INSERT_FINDING + f"SELECT %s, %s, %s, t.trace_id, e.child_product_id, c.agent_id, c.step, "
        f"'parent ''' || e.parent_product_id || ''' does not exist' "
        f"FROM {EDGE} e JOIN {TRACE} t ON t.id = e.trace_id "
        f"JOIN health_node c ON c.product_id = e.child_product_id "
        f"WHERE e.project_id = %s "
        f"AND (c.received_at <= %s OR (c.received_at > %s AND c.timestamp <= %s)) "
        f"AND NOT EXISTS (SELECT 1 FROM health_node p WHERE p.product_id = e.parent_product_id)",
        [report_pk, project_pk, FindingKind.BROKEN_LINK, project_pk, adapt(cutoff), adapt(now), adapt(cutoff)],
    )


def find_orphans(cursor, report_pk: int, project_pk: int) -> None:
    cursor.execute(
        INSERT_FINDING + f"SELECT %s, %s, %s, t.trace_id, n.product_id, n.agent_id, n.step, "
        f"'no parents and no consumers' "
        f"FROM health_node n JOIN {TRACE} t ON t.id = n.trace_id "
        f"WHERE NOT {RETRIED.sql('n')} "
        # Uncorrelated, so both databases build the set of retried ids once
        # (retry_of has no index: a correlated probe would scan per node on SQLite).
        f"AND n.product_id NOT IN (SELECT r.retry_of FROM health_node r WHERE {RETRIED.sql('r')}) "
        f"AND NOT EXISTS (SELECT 1 FROM {EDGE} e WHERE e.project_id = %s "
        f"                AND e.child_product_id = n.product_id) "
        f"AND NOT EXISTS (SELECT 1 FROM {EDGE} e WHERE e.project_id = %s "
        f"                AND e.parent_product_id = n.product_id) "
        f"AND EXISTS (SELECT 1 FROM health_node m WHERE m.trace_id = n.trace_id AND m.id <> n.id)",
        [report_pk, project_pk, FindingKind.ORPHAN, project_pk, project_pk],
    )


def find_fused_indirect_use(cursor, report_pk: int, project_pk: int) -> None:
    """From the link table (_create_link_table). It leaves out self-loops,
    which cannot count: a fused node is guarded."""
    quoted = "'''' || l.fused_use_parent || ''''"
    if is_postgres():
        names = f"string_agg({quoted}, ', ' ORDER BY l.fused_use_parent)"
    else:
        names = f"group_concat({quoted}, ', ')"
    cursor.execute(
        INSERT_FINDING + f"SELECT %s, %s, %s, t.trace_id, l.fused_use_child, l.fused_use_agent, l.fused_use_step, "
        f"'consumed fused ' || {names} "
        f"FROM health_link l JOIN {TRACE} t ON t.id = l.fused_use_trace "
        f"WHERE l.fused_use_child IS NOT NULL "
        f"GROUP BY t.trace_id, l.fused_use_child, l.fused_use_agent, l.fused_use_step",
        [report_pk, project_pk, FindingKind.FUSED_INDIRECT_USE],
    )


def find_round_limit_exceeded(cursor, report_pk: int, project_pk: int, max_rounds: int) -> None:
    limit = int(max_rounds)
    cursor.execute(
        INSERT_FINDING + f"SELECT %s, %s, %s, t.trace_id, n.product_id, n.agent_id, n.step, "
        f"'round ' || n.round || ' exceeds max_rounds {limit}' "
        f"FROM health_node n JOIN {TRACE} t ON t.id = n.trace_id "
        f"WHERE {OVER_ROUND_LIMIT.sql('n', max_rounds='%s')} "
        f"AND NOT EXISTS (SELECT 1 FROM health_node m WHERE m.trace_id = n.trace_id "
        f"                AND {OVER_ROUND_LIMIT.sql('m', max_rounds='%s')} AND (m.round > n.round OR (m.round = n.round AND m.id < n.id)))",
        [report_pk, project_pk, FindingKind.ROUND_LIMIT_EXCEEDED, limit, limit],
    )


def find_cycles(cursor, report_pk: int, project_pk: int, remaining: int) -> None:
    """Every cycle has a link out of time order (SEEDED_SEARCH_LIMIT): with
    none, there is no cycle; with few, only the links around them are kept.
    Otherwise, since only a link whose parent has parents and whose child
    has consumers can lie on a cycle, SQL trims the rest away round by
    round. What survives (the cycles, paths between cycles, and the middle of
    very deep chains) is streamed into Tarjan's algorithm. Self-loops are
    found by a plain scan. Works on the link table (_create_link_table) of
    `remaining` links, and drops it."""
    cursor.execute("SELECT COUNT(*) FROM health_link WHERE NOT in_time_order")
    seeds = cursor.fetchone()[0]
    if seeds == 0:
        cursor.execute("TRUNCATE health_link" if is_postgres() else "DELETE FROM health_link")
        remaining = 0
    elif seeds <= SEEDED_SEARCH_LIMIT:
        remaining = _keep_links_near_seeds(cursor)
    for _ in range(MAX_TRIM_ROUNDS):
        if remaining <= PYTHON_LINKS:
            break
        cursor.execute(
            "DELETE FROM health_link WHERE NOT EXISTS "
            "(SELECT 1 FROM health_link h WHERE h.child = health_link.parent)"
        )
        trimmed = cursor.rowcount
        cursor.execute(
            "DELETE FROM health_link WHERE NOT EXISTS "
            "(SELECT 1 FROM health_link h WHERE h.parent = health_link.child)"
        )
        trimmed += cursor.rowcount
        if trimmed == 0:
            break
        remaining -= trimmed

    cursor.execute("DROP TABLE IF EXISTS health_cycle")
    cursor.execute("CREATE TEMPORARY TABLE health_cycle (node_id BIGINT PRIMARY KEY, size INTEGER NOT NULL)")
    on_cycle = _strongly_connected_members()
    for start in range(0, len(on_cycle), STREAM_BATCH):
        insert_many("health_cycle", ["node_id", "size"], ["bigint", "int"], on_cycle[start : start + STREAM_BATCH])
    cursor.execute(
        f"INSERT INTO health_cycle (node_id, size) SELECT DISTINCT n.id, 1 FROM {EDGE} e "
        f"JOIN health_node n ON n.product_id = e.child_product_id "
        f"WHERE e.project_id = %s AND e.parent_product_id = e.child_product_id "
        f"AND NOT EXISTS (SELECT 1 FROM health_cycle c WHERE c.node_id = n.id)",
        [project_pk],
    )
    cursor.execute(
        INSERT_FINDING + f"SELECT %s, %s, %s, t.trace_id, n.product_id, n.agent_id, n.step, "
        f"CASE WHEN c.size = 1 THEN 'lists itself as a parent' "
        f"ELSE 'on a parent cycle of ' || c.size || ' nodes' END "
        f"FROM health_cycle c JOIN health_node n ON n.id = c.node_id JOIN {TRACE} t ON t.id = n.trace_id",
        [report_pk, project_pk, FindingKind.CYCLE],
    )
    cursor.execute("DROP TABLE health_link")
    cursor.execute("DROP TABLE health_cycle")


def _create_node_table(cursor, project_pk: int) -> None:
    """health_node: the columns of the project's nodes that the checks read."""
    cursor.execute("DROP TABLE IF EXISTS health_node")
    cursor.execute(
        f"CREATE TEMPORARY TABLE health_node AS SELECT id, product_id, trace_id, agent_id, step, timestamp, "
        f"received_at, fuse_state, retry_of, round FROM {NODE} WHERE project_id = %s",
        [project_pk],
    )
    if is_postgres():
        cursor.execute("ANALYZE health_node")
    else:
        cursor.execute("CREATE UNIQUE INDEX health_node_product ON health_node (product_id)")
        cursor.execute("CREATE INDEX health_node_trace ON health_node (trace_id)")


def _create_link_table(cursor, project_pk: int) -> int:
    """child → parent links between stored nodes, as node pks, self-loops left
    out; returns how many."""
    cursor.execute("DROP TABLE IF EXISTS health_link")
    # A link by which an unguarded node consumed a fused one also carries what
    # its finding names (the others carry NULLs, which take no room).
    cursor.execute("CREATE TEMPORARY TABLE health_link (child BIGINT NOT NULL, parent BIGINT NOT NULL, "
                   "in_time_order BOOLEAN NOT NULL, fused_use_trace BIGINT, fused_use_child VARCHAR(255), "
                   "fused_use_agent VARCHAR(255), fused_use_step VARCHAR(255), fused_use_parent VARCHAR(255))")
    fused_use = f"{FUSED.flag_sql('p')} AND NOT {GUARDED.flag_sql('c')}"
    carried = ", ".join(f"CASE WHEN {fused_use} THEN {column} END"
                        for column in ("c.trace_id", "c.product_id", "c.agent_id", "c.step", "p.product_id"))
    cursor.execute(
        f"INSERT INTO health_link (child, parent, in_time_order, fused_use_trace, fused_use_child, fused_use_agent, "
        f"fused_use_step, fused_use_parent) "
        f"SELECT c.id, p.id, p.timestamp < c.timestamp, {carried} "
        f"FROM {EDGE} e "
        f"JOIN health_node c ON c.product_id = e.child_product_id "
        f"JOIN health_node p ON p.product_id = e.parent_product_id "
        f"WHERE e.project_id = %s AND e.parent_product_id <> e.child_product_id",
        [project_pk],
    )
    count = cursor.rowcount
    _prepare_link_table(cursor)
    return count


def _prepare_link_table(cursor) -> None:
    if is_postgres():
        # Temporary tables are never auto-analyzed; without statistics the
        # trimming deletes would be planned as nested loops.
        cursor.execute("ANALYZE health_link")
    else:
        cursor.execute("CREATE INDEX health_link_child ON health_link (child)")
        cursor.execute("CREATE INDEX health_link_parent ON health_link (parent)")


def _keep_links_near_seeds(cursor) -> int:
    """Keeps only the links between nodes that are both upstream of a seed's
    parent and downstream of a seed's child (a seed: a link out of time
    order). A cycle through the seed c -> p runs p -> ... -> c, so each of its
    nodes is both; and since every cycle has a seed, every cycle is kept whole
    (its strongly connected group too). Returns how many links are left."""
    for column in ("child", "parent"):
        cursor.execute(f"CREATE INDEX IF NOT EXISTS health_link_{column} ON health_link ({column})")
    if is_postgres():
        cursor.execute("ANALYZE health_link")
        # Each step of the walk is a few index lookups; a hash join would
        # read every link again at every step.
        cursor.execute("SET LOCAL enable_hashjoin = off")
        cursor.execute("SET LOCAL enable_mergejoin = off")
    cursor.execute("DROP TABLE IF EXISTS health_candidate")
    cursor.execute(
        "CREATE TEMPORARY TABLE health_candidate AS "
        "WITH RECURSIVE upstream(node) AS ("
        "   SELECT parent FROM health_link WHERE NOT in_time_order"
        "   UNION SELECT l.parent FROM health_link l JOIN upstream u ON l.child = u.node"
        "), downstream(node) AS ("
        "   SELECT child FROM health_link WHERE NOT in_time_order"
        "   UNION SELECT l.child FROM health_link l JOIN downstream d ON l.parent = d.node"
        ") SELECT node FROM upstream INTERSECT SELECT node FROM downstream"
    )
    if is_postgres():
        cursor.execute("SET LOCAL enable_hashjoin = on")
        cursor.execute("SET LOCAL enable_mergejoin = on")
    # Copied rather than deleted from: most links go, and a delete writes each.
    cursor.execute(
        "CREATE TEMPORARY TABLE health_kept AS SELECT child, parent, in_time_order FROM health_link "
        "WHERE child IN (SELECT node FROM health_candidate) AND parent IN (SELECT node FROM health_candidate)"
    )
    cursor.execute("DROP TABLE health_link")
    cursor.execute("DROP TABLE health_candidate")
    cursor.execute("ALTER TABLE health_kept RENAME TO health_link")
    _prepare_link_table(cursor)
    cursor.execute("SELECT COUNT(*) FROM health_link")
    return cursor.fetchone()[0]


def _strongly_connected_members() -> list[tuple[int, int]]:
    """(node pk, size of its strongly connected group) for groups of two or more."""
    neighbours: dict[int, list[int]] = {}
    with connection.chunked_cursor() as stream:
        stream.execute("SELECT child, parent FROM health_link")
        while rows := stream.fetchmany(STREAM_BATCH):
            for child, parent in rows:
                neighbours.setdefault(child, []).append(parent)
    component = strongly_connected(set(neighbours), neighbours)
    sizes = Counter(component.values())
    return [(node, sizes[number]) for node, number in component.items() if sizes[number] > 1]

"""Walks of the provenance DAG: ancestors, descendants, root cause, impact.

Walks are recursive CTEs over the edge table, scoped to one project and joined
on product ids, so they follow parents into other traces and parents that
arrived late. `UNION` (not `UNION ALL`) makes each id visit once, which is what
keeps a cycle in client data from recursing forever.
"""

from collections import deque
from dataclasses import dataclass

from core.bulk import bound_cursor, in_list
from core.dialect import is_postgres
from provenance.models import Edge, Node
from provenance.vocabulary import anomaly_test
from tenancy.models import Project

NODE_TABLE = Node._meta.db_table
EDGE_TABLE = Edge._meta.db_table


@dataclass(slots=True)
class WalkedNode:
    product_id: str
    trace_pk: int
    confidence: float | None
    fuse_state: int
    is_error: bool
    # Only ever compared, never shown: see `walked_columns`.
    timestamp: object


def walked_columns() -> str:
    """The WalkedNode columns. The timestamp is only used to order nodes, so on
    PostgreSQL it travels as epoch seconds: a float loads in C, while a
    timestamptz goes through Django's Python loader, a quarter of a 5,000-node
    root-cause query's time."""
    timestamp = "EXTRACT(EPOCH FROM timestamp)::float8" if is_postgres() else "timestamp"
    return f"product_id, trace_id, confidence, fuse_state, is_error, {timestamp}"


def _walk(project_pk: int, seeds: list[str], up: bool) -> tuple[dict[str, WalkedNode], list[tuple[str, str]]]:
    """Nodes reachable from the seeds (themselves included) and the edges among
    them as (child, parent) pairs. Ids that never arrived appear in edges only."""
    src, dst = ("child_product_id", "parent_product_id") if up else ("parent_product_id", "child_product_id")
    if is_postgres():
        start = "SELECT CAST(s AS VARCHAR(255)) FROM unnest(%s::text[]) AS s"
        start_params = [list(seeds)]
        # Per-row index probes (OFFSET 0 keeps the planner from flattening
        # them): without fresh statistics (a new project, a trace just
        # ingested) a plain join rescans all of the project's edges on every
        # step, seconds on a 5,000-node trace instead of milliseconds.
        step = (
            f"SELECT x.pid FROM reach r CROSS JOIN LATERAL ("
            f"  SELECT e.{dst} AS pid FROM {EDGE_TABLE} e WHERE e.project_id = %s AND e.{src} = r.pid OFFSET 0) x"
        )
        edges_of_reached = (
            f"SELECT x.child_product_id, x.parent_product_id FROM reach r CROSS JOIN LATERAL ("
            f"  SELECT e.child_product_id, e.parent_product_id FROM {EDGE_TABLE} e"
            f"  WHERE e.project_id = %s AND e.{src} = r.pid OFFSET 0) x"
        )
    else:
        start = " UNION ".join(["SELECT CAST(%s AS VARCHAR(255))"] * len(seeds))
        start_params = list(seeds)
        step = f"SELECT e.{dst} FROM {EDGE_TABLE} e JOIN reach r ON e.project_id = %s AND e.{src} = r.pid"
        edges_of_reached = (
            f"SELECT e.child_product_id, e.parent_product_id FROM {EDGE_TABLE} e "
            f"WHERE e.project_id = %s AND e.{src} IN (SELECT pid FROM reach)"
        )
    walk = f"WITH RECURSIVE reach(pid) AS ({start} UNION {step}) "
    with bound_cursor() as cursor:
        cursor.execute(walk + edges_of_reached, [*start_params, project_pk, project_pk])
        edges = cursor.fetchall()
        reached = set(seeds) | {pair[1] if up else pair[0] for pair in edges}
        nodes = {}
        ordered = sorted(reached)
        # SQLite caps the parameters of one statement (32,766).
        for start in range(0, len(ordered), 10_000):
            clause, params = in_list(ordered[start:start + 10_000])
            cursor.execute(
                f"SELECT {walked_columns()} FROM {NODE_TABLE} WHERE project_id = %s AND product_id {clause}",
                [project_pk, *params],
            )
            nodes.update((row[0], WalkedNode(*row)) for row in cursor.fetchall())
    return nodes, edges


def _trace_local_walk(project_pk: int, product_id: str, up: bool):
    """Most of a walk stays in the node's own trace: that part is read with two
    range scans of the trace (its edges and its nodes) and walked in memory.
    Returns the nodes reached in the trace, the (child, parent) edges among
    them and the ids where the walk leaves the trace, still to be followed."""
    of_trace = f"(SELECT trace_id FROM {NODE_TABLE} WHERE project_id = %s AND product_id = %s)"
    with bound_cursor() as cursor:
        cursor.execute(
            f"SELECT child_product_id, parent_product_id FROM {EDGE_TABLE} "
            f"WHERE project_id = %s AND trace_id = {of_trace}",
            [project_pk, project_pk, product_id],
        )
        pairs = cursor.fetchall()
        cursor.execute(
            f"SELECT {walked_columns()} FROM {NODE_TABLE} WHERE project_id = %s AND trace_id = {of_trace}",
            [project_pk, project_pk, product_id],
        )
        in_trace = {row[0]: row for row in cursor.fetchall()}
        next_of: dict[str, list[str]] = {}
        for child, parent in pairs:
            if up:
                next_of.setdefault(child, []).append(parent)
            else:
                next_of.setdefault(parent, []).append(child)
        if not up and in_trace:
            # Consumers in other traces: edges kept with their child's trace,
            # found through the downward index from this trace's nodes.
            cursor.execute(
                f"SELECT e.child_product_id, e.parent_product_id FROM {NODE_TABLE} n "
                f"JOIN {EDGE_TABLE} e ON e.project_id = n.project_id AND e.parent_product_id = n.product_id "
                f"WHERE n.project_id = %s AND n.trace_id = {of_trace} AND e.trace_id <> n.trace_id",
                [project_pk, project_pk, product_id],
            )
            for child, parent in cursor.fetchall():
                next_of.setdefault(parent, []).append(child)
    reached, queue = {product_id}, [product_id]
    while queue:
        for other in next_of.get(queue.pop(), ()):
            if other not in reached:
                reached.add(other)
                queue.append(other)
    nodes = {pid: WalkedNode(*in_trace[pid]) for pid in reached if pid in in_trace}
    if up:
        edges = {(child, parent) for child in reached for parent in next_of.get(child, ())}
    else:
        edges = {(child, parent) for parent in reached for child in next_of.get(parent, ())}
    leaving = [pid for pid in reached if pid not in nodes]
    return nodes, edges, leaving


def _walk_from_trace(project_pk: int, product_id: str, up: bool):
    nodes, edges, leaving = _trace_local_walk(project_pk, product_id, up)
    if leaving:
        # Only the ids outside the trace are followed with the recursive walk;
        # it comes back into the trace if the graph does.
        far_nodes, far_edges = _walk(project_pk, leaving, up=up)
        nodes.update(far_nodes)
        edges.update(far_edges)
    return nodes, list(edges)


def _walks(project_pk: int, seeds: list[str], up: bool):
    """_walk from many seeds, in as few statements as the database allows
    (SQLite caps a compound SELECT at 500 terms)."""
    size = 10_000 if is_postgres() else 400
    for start in range(0, len(seeds), size):
        yield _walk(project_pk, seeds[start:start + size], up)


def ancestry(project_pk: int, product_id: str) -> tuple[dict[str, WalkedNode], list[tuple[str, str]]]:
    """The node, its stored ancestors and the (child, parent) edges among them."""
    return _walk_from_trace(project_pk, product_id, up=True)


def descendants(project: Project, product_id: str) -> list[WalkedNode]:
    """Every stored node that consumed `product_id`, directly or transitively,
    oldest first."""
    nodes, _ = _walk_from_trace(project.pk, product_id, up=False)
    nodes.pop(product_id, None)
    return sorted(nodes.values(), key=lambda n: (n.timestamp, n.product_id))


@dataclass
class RootCause:
    product_id: str
    reason: str
    confidence: float | None
    trace_pk: int


def root_causes(project: Project, product_id: str) -> tuple[list[RootCause], list[str], dict[str, str]]:
    """Anomalous ancestors (or the node itself) with no anomalous ancestor of
    their own, oldest first; the path from the first of them to the node; and
    the anomaly of each anomalous node on that path.

    Nodes on one cycle are each other's ancestors; a node only disqualifies
    another when it is strictly upstream (an ancestor that is not also a
    descendant), so a cycle does not hide its own root cause.
    """
    nodes, edges = ancestry(project.pk, product_id)
    parents: dict[str, list[str]] = {}
    for child, parent in edges:
        parents.setdefault(child, []).append(parent)
    return causes_in(product_id, nodes, parents, project.high_uncertainty_threshold)


def causes_in(product_id: str, nodes: dict[str, WalkedNode], parents: dict[str, list[str]],
              threshold: float) -> tuple[list[RootCause], list[str], dict[str, str]]:
    """root_causes() over an ancestry already read: `nodes` holds the node and
    its stored ancestors (no other node), `parents` at least their edges."""
    anomaly = anomaly_test(threshold)
    anomalous = {pid: reason for pid, n in nodes.items()
                 if (reason := anomaly(n.fuse_state, n.is_error, n.confidence))}
    if not anomalous:
        return [], [], {}

    tainted = _has_anomalous_upstream(set(nodes) | set(parents), parents, set(anomalous))
    causes = [
        RootCause(pid, reason, nodes[pid].confidence, nodes[pid].trace_pk)
        for pid, reason in anomalous.items()
        if not tainted[pid]
    ]
    causes.sort(key=lambda c: (nodes[c.product_id].timestamp, c.product_id))
    path = _path(causes[0].product_id, product_id, parents) if causes else []
    return causes, path, {pid: anomalous[pid] for pid in path if pid in anomalous}


def path_between(source: str, target: str, parents: dict[str, list[str]]) -> list[str]:
    """The shortest path source → … → target along `parents` (as root_causes() draws it)."""
    return _path(source, target, parents)


def ancestry_within(product_id: str, parents: dict[str, list[str]]) -> set[str]:
    """The node and every id upstream of it along `parents` (ids that never arrived included)."""
    reached, queue = {product_id}, [product_id]
    while queue:
        for parent in parents.get(queue.pop(), ()):
            if parent not in reached:
                reached.add(parent)
                queue.append(parent)
    return reached


def ancestries_of_traces(project_pk: int, trace_pks: list[int]) -> tuple[dict[str, WalkedNode], dict[str, list[str]]]:
    """Every node of these traces and of everything upstream of them, and the
    parents of each: what the root causes of any of their nodes read, in a
    fixed number of statements (each trace read whole by its index, then one
    recursive walk from the ids where the traces' edges leave them)."""
    if not trace_pks:
        return {}, {}
    clause, params = in_list(sorted(trace_pks))
    with bound_cursor() as cursor:
        cursor.execute(f"SELECT child_product_id, parent_product_id FROM {EDGE_TABLE} "
                       f"WHERE project_id = %s AND trace_id {clause}", [project_pk, *params])
        edges = cursor.fetchall()
        cursor.execute(f"SELECT {walked_columns()} FROM {NODE_TABLE} WHERE project_id = %s AND trace_id {clause}",
                       [project_pk, *params])
        nodes = {row[0]: WalkedNode(*row) for row in cursor.fetchall()}
    return with_upstream(project_pk, nodes, edges)


def with_upstream(project_pk: int, nodes: dict[str, WalkedNode],
                  edges: list[tuple[str, str]]) -> tuple[dict[str, WalkedNode], dict[str, list[str]]]:
    """ancestries_of_traces() from the traces' nodes and (child, parent) edges
    read already: the ids where the edges leave them are walked upstream (one
    recursive walk), and the parents of each node returned. `nodes` grows."""
    parents: dict[str, list[str]] = {}
    for child, parent in edges:
        parents.setdefault(child, []).append(parent)
    leaving = sorted({parent for _, parent in edges if parent not in nodes})
    known = set(edges)
    for far_nodes, far_edges in _walks(project_pk, leaving, up=True):
        for pid, node in far_nodes.items():
            nodes.setdefault(pid, node)
        for child, parent in far_edges:
            if (child, parent) not in known:
                known.add((child, parent))
                parents.setdefault(child, []).append(parent)
    return nodes, parents


def strongly_connected(vertices: set[str], neighbours: dict[str, list[str]]) -> dict[str, int]:
    """Tarjan's algorithm, iterative (client DAGs can be deeper than Python's
    recursion limit). Components are numbered in reverse topological order of
    `neighbours`: a component's neighbours all have smaller numbers."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    component: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    components = 0
    for root in vertices:
        if root in index:
            continue
        work = [(root, iter(neighbours.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            vertex, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(neighbours.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[vertex] = min(low[vertex], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[vertex])
            if low[vertex] == index[vertex]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = components
                    if member == vertex:
                        break
                components += 1
    return component


def _has_anomalous_upstream(vertices: set[str], parents: dict[str, list[str]], anomalous: set[str]) -> dict[str, bool]:
    """For each vertex: is an anomalous node strictly upstream of it (in an
    ancestor component other than its own)? Acyclic ancestries (the usual
    case) are settled in one pass in topological order; cycles go through the
    strongly connected components."""
    waiting = {vertex: 0 for vertex in vertices}
    children: dict[str, list[str]] = {}
    for child, its_parents in parents.items():
        for parent in its_parents:
            if parent != child:
                waiting[child] += 1
                children.setdefault(parent, []).append(child)
            else:
                waiting[child] = -len(vertices)  # a self-loop is a cycle: never released
    order = [vertex for vertex, count in waiting.items() if count == 0]
    tainted = dict.fromkeys(vertices, False)
    for vertex in order:  # grows while it is walked
        upstream = tainted[vertex] or vertex in anomalous
        for child in children.get(vertex, ()):
            if upstream:
                tainted[child] = True
            waiting[child] -= 1
            if waiting[child] == 0:
                order.append(child)
    if len(order) == len(vertices):
        return tainted
    return _has_anomalous_upstream_cyclic(vertices, parents, anomalous)


def _has_anomalous_upstream_cyclic(vertices, parents, anomalous) -> dict[str, bool]:
    component = strongly_connected(vertices, parents)
    members: dict[int, list[str]] = {}
    for vertex, number in component.items():
        members.setdefault(number, []).append(vertex)
    tainted_component: dict[int, bool] = {}
    anomalous_component: dict[int, bool] = {}
    # Parents' components have smaller numbers, so ascending order sees them first.
    for number in sorted(members):
        anomalous_component[number] = any(v in anomalous for v in members[number])
        tainted_component[number] = any(
            (anomalous_component[p] or tainted_component[p])
            for v in members[number]
            for p in (component[parent] for parent in parents.get(v, ()))
            if p != number
        )
    return {vertex: tainted_component[component[vertex]] for vertex in vertices}


def _path(source: str, target: str, parents: dict[str, list[str]]) -> list[str]:
    """Shortest path source → … → target, found by walking parents from target.
    Of several equally short paths, the one through the smallest product ids
    (edges are read in no particular order: the same answer must show the
    same path on the trace page and in the aggregate)."""
    if source == target:
        return [target]
    previous = {target: None}
    queue = deque([target])
    while queue:
        current = queue.popleft()
        for parent in sorted(parents.get(current, ())):
            if parent not in previous:
                previous[parent] = current
                if parent == source:
                    path, step = [], parent
                    while step is not None:
                        path.append(step)
                        step = previous[step]
                    return path
                queue.append(parent)
    return [source, target]

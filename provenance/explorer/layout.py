"""Layered layout of a provenance graph, computed on the server for the trace page.

x is the topological depth (longest path from a source), y the slot within
that depth. Slots are chosen by barycenter sweeps (each node moves towards the
mean height of its neighbours in other layers), the classic Sugiyama heuristic
for fewer edge crossings. Client data may hold cycles: they are collapsed to
their strongly connected components first, and the members of one component
share a layer, so a cycle never breaks the depth computation.

The result depends only on the input order, never on hashing or randomness, so
the same trace always draws the same picture.
"""

from dataclasses import dataclass
from math import ceil
from operator import itemgetter

from provenance.dag.walks import strongly_connected

SWEEPS = 4


@dataclass
class Layout:
    x: list[int]
    y: list[float]
    depth_count: int


def layered(node_count: int, edges: list[tuple[int, int]]) -> Layout:
    """Positions for nodes 0..node_count-1, given (parent, child) index pairs.

    The input order (e.g. by timestamp) is the starting order within a layer
    and breaks every tie afterwards.
    """
    depth = depths(node_count, edges)
    return Layout(x=depth, y=arranged(depth, edges), depth_count=max(depth, default=-1) + 1)


def depths(node_count: int, edges: list[tuple[int, int]]) -> list[int]:
    """Each node's longest-path depth from a source; a cycle's members share one."""
    if all(parent < child for parent, child in edges):
        return _depths_in_order(node_count, edges)
    parents: list[list[int]] = [[] for _ in range(node_count)]
    children: list[list[int]] = [[] for _ in range(node_count)]
    for parent, child in edges:
        if parent != child:
            parents[child].append(parent)
            children[parent].append(child)
    return _depths(node_count, parents, children)


def arranged(column: list[int], edges: list[tuple[int, int]]) -> list[float]:
    """Heights for nodes placed in the given columns (any non-negative
    integers), by barycenter sweeps over (parent, child) pairs."""
    node_count = len(column)
    upstream: list[list[int]] = [[] for _ in range(node_count)]
    downstream: list[list[int]] = [[] for _ in range(node_count)]
    # Each sweep looks at the neighbours on one side only; edges within a
    # column (a cycle's) pull on nothing.
    for parent, child in edges:
        if column[parent] < column[child]:
            upstream[child].append(parent)
            downstream[parent].append(child)
        elif column[parent] > column[child]:
            upstream[parent].append(child)
            downstream[child].append(parent)
    by_column: dict[int, list[int]] = {}
    for node in range(node_count):
        by_column.setdefault(column[node], []).append(node)
    layers = [by_column[c] for c in sorted(by_column)]
    y = [0.0] * node_count
    for layer in layers:
        _place(layer, y)
    for _ in range(SWEEPS):
        for layer in layers[1:]:
            _reorder(layer, y, upstream)
        for layer in reversed(layers[:-1]):
            _reorder(layer, y, downstream)
    return y


def _depths_in_order(node_count: int, edges: list[tuple[int, int]]) -> list[int]:
    """Longest-path depth when every parent comes before its child in the node
    order (a trace read oldest first, the usual case): the order is then a
    topological one, and one pass over the edges sorted by child settles every
    depth, where Kahn's algorithm builds two adjacency lists per node."""
    depth = [0] * node_count
    for parent, child in sorted(edges, key=itemgetter(1)):
        below = depth[parent] + 1
        if depth[child] < below:
            depth[child] = below
    return depth


def _depths(node_count: int, parents: list[list[int]], children: list[list[int]]) -> list[int]:
    """Longest-path depth: Kahn's order when the graph is acyclic (the usual
    case, and the cheap one), else over the condensation (one vertex per cycle)."""
    waiting = [len(p) for p in parents]
    order = [node for node in range(node_count) if not waiting[node]]
    depth = [0] * node_count
    for node in order:  # grows while it is walked
        below = depth[node] + 1
        for child in children[node]:
            if depth[child] < below:
                depth[child] = below
            waiting[child] -= 1
            if not waiting[child]:
                order.append(child)
    if len(order) == node_count:
        return depth
    return _condensed_depths(node_count, parents)


def _condensed_depths(node_count: int, parents: list[list[int]]) -> list[int]:
    neighbours = {node: parents[node] for node in range(node_count) if parents[node]}
    component = strongly_connected(set(range(node_count)), neighbours)
    members: dict[int, list[int]] = {}
    for node in range(node_count):
        members.setdefault(component[node], []).append(node)
    component_depth: dict[int, int] = {}
    # Components are numbered so that parents come first in ascending order.
    for number in sorted(members):
        component_depth[number] = max(
            (
                component_depth[component[parent]] + 1
                for node in members[number]
                for parent in parents[node]
                if component[parent] != number
            ),
            default=0,
        )
    return [component_depth[component[node]] for node in range(node_count)]


def _place(layer: list[int], y: list[float]) -> None:
    """Centres a layer around 0, one unit per slot, in the layer's order."""
    middle = (len(layer) - 1) / 2
    for slot, node in enumerate(layer):
        y[node] = slot - middle


def _reorder(layer: list[int], y: list[float], neighbours: list[list[int]]) -> None:
    """Sorts a layer by the mean height of its neighbours on the swept side; a
    node without any keeps its current height as its key."""
    keyed = []
    for node in layer:
        around = neighbours[node]
        if around:
            total = 0.0
            for other in around:
                total += y[other]
            keyed.append((total / len(around), y[node], node))
        else:
            keyed.append((y[node], y[node], node))
    keyed.sort()
    layer[:] = [node for _, _, node in keyed]
    _place(layer, y)


# Nodes of an opened cluster sit this far apart: a third of the distance
# between two columns, or between two slots of a column.
BLOCK_PITCH = 1 / 3
# An opened cluster is at most this many columns wide; a bigger one grows
# taller instead, so that it never pushes the rest of the graph aside.
BLOCK_COLUMNS = 8


@dataclass
class Block:
    """Where the members of an opened cluster go, in reading order: rows of
    `per_row` that turn at each end (left to right, then right to left), so
    that a chain stays a line of neighbours however it wraps."""

    count: int
    per_row: int

    @property
    def rows(self) -> int:
        return -(-self.count // self.per_row)

    @property
    def columns(self) -> int:
        """The whole columns it takes, its last node's column included."""
        return ceil((self.per_row - 1) * BLOCK_PITCH - 1e-9) + 1

    def offsets(self) -> list[tuple[float, float]]:
        """(dx, dy) of each member from the block's top left corner, y upwards."""
        placed = []
        for k in range(self.count):
            row, slot = divmod(k, self.per_row)
            if row % 2:
                slot = self.per_row - 1 - slot
            placed.append((slot * BLOCK_PITCH, -row * BLOCK_PITCH))
        return placed


def block(count: int, span: float) -> Block:
    """The block for `count` nodes beside a graph whose heights span `span`
    slots: as many rows as fit that span, as wide as that needs (up to
    BLOCK_COLUMNS)."""
    fit_rows = int(span / BLOCK_PITCH + 1e-9) + 1
    widest = int((BLOCK_COLUMNS - 1) / BLOCK_PITCH + 1e-9) + 1
    return Block(count=count, per_row=max(1, min(widest, -(-count // fit_rows))))

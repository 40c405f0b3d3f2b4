"""Folding a large trace into something a person can read.

A trace of thousands of nodes is cut, along its topological depth, into bands
of consecutive layers; within a band the nodes of one agent in one round fold
into one cluster, shown with its count and its worst confidence. A linear chain
is such a run of layers, so a 5,000-step chain reads as a few dozen clusters.

Anomalies are never folded: a fused, failed or low-confidence node is drawn on
its own, and so is every node outside the trace, the final answer, and the
nodes a reader asked to see. Each layer holding one of them is a band of its
own, which keeps the folded graph acyclic: every edge between bands runs
forwards, so folding never invents a cycle.

Everything here works on indices and plain lists, and depends only on the
input order, so the same trace folds the same way on every request.
"""

from dataclasses import dataclass, field
from math import ceil

# Traces up to this size are drawn whole; beyond it they open folded.
FOLD_ABOVE = 400
# About how many columns a folded trace spreads over.
BAND_BUDGET = 12
# Beyond this many markers, a band's agents fold together too.
MAX_MARKERS = 120


@dataclass
class Cluster:
    key: str
    band: int
    agent: str
    round: str | None  # the rounds it spans, e.g. "3–7"
    members: list[int] = field(default_factory=list)
    # The reader opened it: its members are drawn one by one, in its place.
    expanded: bool = False


@dataclass
class Folding:
    """`cluster_of[node]` is the node's cluster number (an expanded one too),
    or -1 when it is drawn on its own; `band_of[node]` its band; bands are
    (first, last) depths."""

    cluster_of: list[int]
    band_of: list[int]
    bands: list[tuple[int, int]]
    clusters: list[Cluster]


def bands_for(depth: list[int], cuts: list[bool]) -> tuple[list[int], list[tuple[int, int]]]:
    """Cuts the layers into bands of about equal length that fit the budget,
    and also where a layer holds a cutting node (a pinned node that feeds
    others): that layer starts a band, so within a band every edge from it
    runs into the band's folds, never back out of them."""
    depth_count = max(depth, default=-1) + 1
    chunk = max(1, ceil(depth_count / BAND_BUDGET))
    cut = [layer % chunk == 0 for layer in range(depth_count)]
    for node, cuts_here in enumerate(cuts):
        if cuts_here:
            cut[depth[node]] = True
    bands: list[tuple[int, int]] = []
    band_of_layer = [0] * depth_count
    for layer in range(depth_count):
        if cut[layer] or not bands:
            bands.append((layer, layer))
        bands[-1] = (bands[-1][0], layer)
        band_of_layer[layer] = len(bands) - 1
    return [band_of_layer[d] for d in depth], bands


def fold(depth: list[int], agents: list[str], rounds: list, pinned: list[bool], feeds: list[bool],
         expanded: set[str]) -> Folding:
    """Groups the unpinned nodes of each band by agent. A group of one is
    drawn on its own; one whose key is in `expanded` stays a cluster marked
    `expanded`, which the drawing opens node by node. When that still leaves
    more than MAX_MARKERS to draw, each band's groups fold into one band
    cluster (unless that band is expanded), so any trace opens at a size a
    person can take in. `feeds[node]`: some other node consumed it."""
    band_of, bands = bands_for(depth, [p and f for p, f in zip(pinned, feeds)])
    groups: dict[tuple, Cluster] = {}
    for node in range(len(depth)):
        if pinned[node]:
            continue
        band = band_of[node]
        key = (band, agents[node])
        group = groups.get(key)
        if group is None:
            first, last = bands[band]
            group = groups[key] = Cluster(f"{first}-{last}:{agents[node]}", band, agents[node], None)
        group.members.append(node)

    cluster_of = [-1] * len(depth)
    for group in groups.values():
        group.expanded = group.key in expanded
    # Whether bands fold whole is decided on the unexpanded drawing, so that
    # expanding one cluster never folds its neighbours differently.
    folding_groups = [group for group in groups.values() if len(group.members) > 1]
    singles = len(depth) - sum(len(group.members) for group in folding_groups)
    # An expanded group stays a cluster, marked open: it keeps its place in
    # the layout, and its members are drawn around that place.
    kept = list(folding_groups)
    if singles + len(folding_groups) > MAX_MARKERS:
        opened = {group.band for group in groups.values() if group.key in expanded}
        opened |= {number for number, (first, last) in enumerate(bands) if f"{first}-{last}:*" in expanded}
        merged: dict[int, Cluster] = {}
        for group in groups.values():
            if group.band in opened:
                continue
            band = merged.get(group.band)
            if band is None:
                first, last = bands[group.band]
                band = merged[group.band] = Cluster(f"{first}-{last}:*", group.band, "", None)
            band.members.extend(group.members)
        kept = [band for band in merged.values() if len(band.members) > 1] + [
            group for group in kept if group.band not in merged
        ]
    clusters: list[Cluster] = []
    for group in kept:
        group.members.sort()
        group.round = _rounds(rounds[m] for m in group.members)
        for node in group.members:
            cluster_of[node] = len(clusters)
        clusters.append(group)
    return Folding(cluster_of=cluster_of, band_of=band_of, bands=bands, clusters=clusters)


def _rounds(values) -> str | None:
    known = sorted({v for v in values if v is not None})
    if not known:
        return None
    return str(known[0]) if len(known) == 1 else f"{known[0]}–{known[-1]}"


def within_hops(start: int, hops: int | None, parents: list[list[int]], children: list[list[int]]) -> set[int]:
    """The node, its ancestors and its descendants up to `hops` edges away
    (all of them when `hops` is None); never the cousins in between."""
    kept = {start}
    for neighbours in (parents, children):
        frontier, seen, step = [start], {start}, 0
        while frontier and (hops is None or step < hops):
            step += 1
            following = []
            for node in frontier:
                for other in neighbours[node]:
                    if other not in seen:
                        seen.add(other)
                        following.append(other)
            frontier = following
        kept |= seen
    return kept

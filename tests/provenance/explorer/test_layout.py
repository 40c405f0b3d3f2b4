"""The trace page's layered layout: depth, crossing reduction, cycles, determinism."""

import random

from provenance.explorer.layout import layered


def slots(layout, nodes):
    """The nodes of one layer, top to bottom."""
    return sorted(nodes, key=lambda node: layout.y[node])


def test_x_is_the_longest_path_depth():
    # 0 → 1 → 2 → 3, and a shortcut 0 → 3: 3 still sits after 2.
    layout = layered(4, [(0, 1), (1, 2), (2, 3), (0, 3)])
    assert layout.x == [0, 1, 2, 3]
    assert layout.depth_count == 4


def test_sources_without_edges_share_the_first_layer():
    layout = layered(3, [])
    assert layout.x == [0, 0, 0]
    assert sorted(layout.y) == [-1.0, 0.0, 1.0]


def test_layers_are_centred_one_slot_apart():
    layout = layered(4, [(0, 1), (0, 2), (0, 3)])
    assert layout.y[0] == 0.0
    assert sorted(layout.y[1:]) == [-1.0, 0.0, 1.0]


def test_barycenter_sweeps_remove_an_avoidable_crossing():
    # Input order puts child 2 (of parent 1) above child 3 (of parent 0): one crossing.
    layout = layered(4, [(0, 3), (1, 2)])
    parents_top_down = slots(layout, [0, 1])
    children_top_down = slots(layout, [2, 3])
    assert [{0: 3, 1: 2}[p] for p in parents_top_down] == children_top_down


def crossings(layout, edges):
    count = 0
    for a, (p1, c1) in enumerate(edges):
        for p2, c2 in edges[a + 1:]:
            same_layers = layout.x[p1] == layout.x[p2] and layout.x[c1] == layout.x[c2]
            if same_layers and (layout.y[p1] - layout.y[p2]) * (layout.y[c1] - layout.y[c2]) < 0:
                count += 1
    return count


def test_sweeps_never_add_crossings_to_a_tangled_two_layer_graph():
    rng = random.Random(7)
    edges = [(p, 10 + rng.randrange(10)) for p in range(10) for _ in range(2)]
    before = layered(20, edges)
    # The starting order is the input order: compare with no reordering at all.
    unswept = type(before)(x=before.x, y=[float(i % 10) for i in range(20)], depth_count=2)
    assert crossings(before, edges) <= crossings(unswept, edges)


def test_a_cycle_shares_one_layer_and_does_not_break_depths():
    # 0 → 1 → 2 → 1 (cycle 1 ⇄ 2), then 2 → 3.
    layout = layered(4, [(0, 1), (1, 2), (2, 1), (2, 3)])
    assert layout.x[0] == 0
    assert layout.x[1] == layout.x[2] == 1
    assert layout.x[3] == 2
    assert layout.y[1] != layout.y[2]


def test_a_self_loop_and_a_whole_graph_cycle_are_laid_out():
    self_loop = layered(2, [(0, 0), (0, 1)])
    assert self_loop.x == [0, 1]
    ring = layered(3, [(0, 1), (1, 2), (2, 0)])
    assert ring.x == [0, 0, 0]
    assert len(set(ring.y)) == 3


def test_the_same_input_always_gives_the_same_layout():
    rng = random.Random(3)
    edges = [(rng.randrange(200), rng.randrange(200)) for _ in range(600)]
    first = layered(200, edges)
    for _ in range(3):
        again = layered(200, list(edges))
        assert (again.x, again.y) == (first.x, first.y)


def test_a_deep_chain_does_not_hit_the_recursion_limit():
    n = 5000
    layout = layered(n, [(i, i + 1) for i in range(n - 1)])
    assert layout.x[-1] == n - 1

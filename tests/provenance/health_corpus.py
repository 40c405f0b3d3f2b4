"""A labelled corpus for the DAG health check: traces of healthy shapes that
look like faults at first sight (a fused fragment dropped, a fused input used
by a consumer that downweighted itself, a retry recorded without parents, a
link into another trace, a one-node trace) mixed with planted faults of every
kind, each labelled with the finding it must produce."""

import random

from tests.support.events import fuse_event, node_event

MAX_ROUNDS = 5  # the default policy's


def corpus(traces: int = 240, seed: int = 22) -> tuple[list[dict], set[tuple[str, str, str]]]:
    """(events, labels): the labels are (kind, trace id, product id)."""
    rng = random.Random(seed)
    events, labels = [], set()
    shapes = [_chain, _fused_and_dropped, _fused_used_by_a_downweighted_consumer, _retry_without_parents,
              _linked_across_traces, _single_node, _broken_link, _orphan, _cycle, _self_loop,
              _fused_indirect_use, _round_limit]
    for n in range(traces):
        shape = shapes[rng.randrange(len(shapes))]
        made, found = shape(f"c{n:03d}", rng)
        events += made
        labels |= found
    return events, labels


def _node(trace, name, parents=(), **body):
    return node_event(f"{trace}:{name}", trace, parents=[f"{trace}:{p}" for p in parents],
                      event_id=f"ev:{trace}:{name}", agent_id=body.pop("agent_id", name.split("-")[0]), **body)


def _fuse(trace, name, decision="block", by="reasoner"):
    return fuse_event(f"{trace}:{name}", decision, trace, event_id=f"fuse:{trace}:{name}:{decision}",
                      by_agent_id=by)


def _chain(t, rng):
    length = rng.randint(2, 6)
    made = [_node(t, "q")] + [_node(t, f"step-{k}", [("q" if k == 0 else f"step-{k - 1}")],
                                    round=min(MAX_ROUNDS, k + 1)) for k in range(length)]
    return made, set()


def _fused_and_dropped(t, rng):
    return [_node(t, "q"), _node(t, "frag-1", ["q"]), _node(t, "frag-2", ["q"]), _fuse(t, "frag-2"),
            _node(t, "reason", ["frag-1"])], set()


def _fused_used_by_a_downweighted_consumer(t, rng):
    decision = rng.choice(["downweight", "block"])
    return [_node(t, "q"), _node(t, "frag", ["q"]), _fuse(t, "frag"), _node(t, "reason", ["frag"]),
            _fuse(t, "reason", decision, by="verifier")], set()


def _retry_without_parents(t, rng):
    return [_node(t, "q"), _node(t, "frag", ["q"]), _fuse(t, "frag"),
            _node(t, "frag-retry", retry_of=f"{t}:frag", attempt=2), _node(t, "answer", ["frag-retry"])], set()


def _linked_across_traces(t, rng):
    other = f"{t}-other"
    return [_node(t, "q"), _node(t, "lonely"), _node(other, "use", agent_id="consumer"),
            node_event(f"{other}:uses", other, parents=[f"{t}:lonely", f"{other}:use"], event_id=f"ev:{other}:uses"),
            _node(t, "a", ["q"])], set()


def _single_node(t, rng):
    return [_node(t, "only")], set()


def _broken_link(t, rng):
    child = f"{t}:frag"
    return [_node(t, "q"), node_event(child, t, parents=[f"{t}:q", f"{t}:ghost"], event_id=f"ev:{child}")], {
        ("broken_link", t, child)}


def _orphan(t, rng):
    return [_node(t, "q"), _node(t, "a", ["q"]), _node(t, "stray")], {("orphan", t, f"{t}:stray")}


def _cycle(t, rng):
    size = rng.randint(2, 4)
    names = [f"loop-{k}" for k in range(size)]
    made = [_node(t, "q")] + [_node(t, names[k], [names[k - 1]] + (["q"] if k == 0 else [])) for k in range(size)]
    return made, {("cycle", t, f"{t}:{name}") for name in names}


def _self_loop(t, rng):
    return [_node(t, "q"), _node(t, "me", ["q", "me"])], {("cycle", t, f"{t}:me")}


def _fused_indirect_use(t, rng):
    return [_node(t, "q"), _node(t, "frag", ["q"]), _fuse(t, "frag"), _node(t, "reason", ["frag", "q"])], {
        ("fused_indirect_use", t, f"{t}:reason")}


def _round_limit(t, rng):
    top = rng.randint(MAX_ROUNDS + 1, MAX_ROUNDS + 4)
    made = [_node(t, "q", round=1)] + [_node(t, f"plan-{r}", ["q" if r == 1 else f"plan-{r - 1}"], round=r)
                                       for r in range(1, top + 1)]
    return made, {("round_limit_exceeded", t, f"{t}:plan-{top}")}

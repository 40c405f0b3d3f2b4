"""The node vocabulary, written once: what a node counts as, and the default
fuse policy. Every layer above (metrics, alerts, health, retention, the pages
and the API) asks these definitions instead of spelling a rule out.

What a node counts as:

- accepted, downweighted, fused: its fuse_state is accept, downweight, block
  (the most severe decision on it, FuseDecision);
- errored: its status is error; failed: fused or errored;
- high-uncertainty: its confidence is below the project's
  high_uncertainty_threshold (a node without a confidence is not);
- anomalous (root cause): the first of fused, errored, high-uncertainty that
  applies, named as the contract names it (`ANOMALIES`);
- retried: it has `retry_of` (it replaces a fused node); retried_ok: retried
  and not fused;
- over the round limit: its `round` exceeds the policy's `max_rounds`;
- an uncertain trace (a trace, not a node): one of its nodes is
  high-uncertainty, read off the trace's min_confidence;
- a blocking fuse decision (a Fuse row, not a node): its decision is block.

Each rule is one small expression over a row's columns that yields its three
forms, so they cannot disagree:

- `rule.sql(table, **params)`: a portable SQL boolean (PostgreSQL and SQLite),
  for the rollup refresh, the raw scan, the recent rows and the health check;
- `rule.q(**params)`: an ORM `Q` over the row's fields (filters, `Exists`,
  aggregates' `filter=`); `rule.condition(**params)` is the SQL as an ORM
  expression to annotate with;
- `rule.holds(row, **params)`: the Python test of one row, over an object's
  attributes or a mapping's keys (`rule.holds(fuse_state=row[5])` for a tuple
  row); `rule.function("fuse_state", ...)` compiles it once for many rows.

Parameters are `threshold` (the high-uncertainty threshold) and `max_rounds`.

The SDK (`sdk/denoiseflow/vocabulary.py`) keeps its own copy of the thresholds
and defaults, since it never imports the server; tests/denoiseflow holds the
two equal.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from django.db import models
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL


class FuseDecision(models.IntegerChoices):
    """Ordered by severity: a node's fuse state is the most severe decision on it."""

    NONE = 0, "none"
    ACCEPT = 1, "accept"
    DOWNWEIGHT = 2, "downweight"
    BLOCK = 3, "block"


# ---- the default fuse policy (the contract's version 0)

DEFAULT_PROFILE = {
    "accept": 0.8,
    "block": 0.5,
    "by_agent_type": {},
    "by_step": {},
    "max_rounds": 5,
    "max_retries": 2,
    "escalate_after": 3,
}
DEFAULT_ROUND_LIMIT = DEFAULT_PROFILE["max_rounds"]


# ---- rules as expressions over one row's columns

class Rule:
    """A boolean over a row's columns: `&`, `|` and `~` combine rules. Each
    kind renders itself as SQL text, as a `Q` and as Python source."""

    def render(self, n: str, params: Mapping[str, str]) -> str:
        raise NotImplementedError

    def to_q(self, params: Mapping) -> Q:
        raise NotImplementedError

    def source(self) -> str:
        raise NotImplementedError

    def columns(self) -> list[str]:
        """The columns the rule reads, once each, in order."""
        raise NotImplementedError

    def parameters(self) -> list[str]:
        """The parameters the rule's SQL names, in order (one entry per use)."""
        return []

    def __and__(self, other: "Rule") -> "Rule":
        return Both(self, other)

    def __or__(self, other: "Rule") -> "Rule":
        return Either(self, other)

    def __invert__(self) -> "Rule":
        return Negated(self)

    # The three forms.

    def sql(self, table: str = "", **params: str) -> str:
        """The rule over `table`'s columns (no table: bare column names); each
        parameter is the SQL text standing for it (a column, `%s`, a number)."""
        return "(" + self.render(f"{table}." if table else "", {"threshold": "threshold", **params}) + ")"

    def flag_sql(self, table: str = "", **params: str) -> str:
        """The rule as a value that is never NULL (a NULL column makes the bare rule NULL)."""
        return f"COALESCE({self.sql(table, **params)}, false)"

    def condition(self, **params) -> RawSQL:
        """The rule as an ORM expression over the node table (to annotate a flag with)."""
        from provenance.models import Node

        sql = self.sql(Node._meta.db_table, **{name: "%s" for name in params})
        return RawSQL(sql, [params[name] for name in self.parameters()], output_field=BooleanField())

    def q(self, **params) -> Q:
        """The rule as an ORM filter over the row's fields."""
        return self.to_q(params)

    def function(self, *columns: str, **params) -> Callable[..., bool]:
        """The rule in Python as a function of these columns (positional, in
        this order), the parameters bound: for loops over many rows."""
        return _compiled(self, columns or tuple(self.columns()), tuple(sorted(params.items())))

    def holds(self, row=None, /, **values) -> bool:
        """The rule over one row: `row` an object (a Node) or a mapping, keyword
        columns and parameters (`threshold=`, `max_rounds=`) given or overriding."""
        params = {name: values.pop(name) for name in set(self.parameters()) if name in values}
        found = []
        for name in self.columns():
            if name in values:
                found.append(values[name])
            else:
                found.append(row[name] if isinstance(row, Mapping) else getattr(row, name))
        return self.function(**params)(*found)


@lru_cache(maxsize=256)
def _compiled(rule: Rule, columns: tuple[str, ...], params: tuple) -> Callable[..., bool]:
    missing = set(rule.columns()) - set(columns)
    if missing:
        raise TypeError(f"the rule reads {sorted(missing)} too")
    return eval(f"lambda {', '.join(columns)}: {rule.source()}", {"__builtins__": {"bool": bool}, **dict(params)})


def _literal(value) -> str:
    return repr(value) if isinstance(value, str) else str(int(value))


@dataclass(frozen=True)
class Compare(Rule):
    """`column op value`, where value is a constant or a named parameter. A
    NULL (None) column is never equal, less, greater or different, as in SQL."""

    column: str
    op: str  # "=", "<>", "<", ">"
    value: object = None
    param: str = ""

    LOOKUPS = {"=": "exact", "<>": "exact", "<": "lt", ">": "gt"}
    PYTHON = {"=": "==", "<>": "!=", "<": "<", ">": ">"}

    def render(self, n, params):
        right = params[self.param] if self.param else _literal(self.value).replace('"', "'")
        return f"{n}{self.column} {self.op} {right}"

    def to_q(self, params):
        value = params[self.param] if self.param else self.value
        q = Q(**{f"{self.column}__{self.LOOKUPS[self.op]}": value})
        return ~q if self.op == "<>" else q

    def source(self):
        right = self.param or _literal(self.value)
        return f"({self.column} is not None and {self.column} {self.PYTHON[self.op]} {right})"

    def columns(self):
        return [self.column]

    def parameters(self):
        return [self.param] if self.param else []


@dataclass(frozen=True)
class Flag(Rule):
    """A boolean column."""

    column: str

    def render(self, n, params):
        return f"{n}{self.column}"

    def to_q(self, params):
        return Q(**{self.column: True})

    def source(self):
        return f"bool({self.column})"

    def columns(self):
        return [self.column]


@dataclass(frozen=True)
class Both(Rule):
    left: Rule
    right: Rule

    def render(self, n, params):
        return f"({self.left.render(n, params)}) AND ({self.right.render(n, params)})"

    def to_q(self, params):
        return self.left.to_q(params) & self.right.to_q(params)

    def source(self):
        return f"({self.left.source()} and {self.right.source()})"

    def columns(self):
        return list(dict.fromkeys(self.left.columns() + self.right.columns()))

    def parameters(self):
        return self.left.parameters() + self.right.parameters()


@dataclass(frozen=True)
class Either(Rule):
    left: Rule
    right: Rule

    def render(self, n, params):
        return f"({self.left.render(n, params)}) OR ({self.right.render(n, params)})"

    def to_q(self, params):
        return self.left.to_q(params) | self.right.to_q(params)

    def source(self):
        return f"({self.left.source()} or {self.right.source()})"

    def columns(self):
        return list(dict.fromkeys(self.left.columns() + self.right.columns()))

    def parameters(self):
        return self.left.parameters() + self.right.parameters()


@dataclass(frozen=True)
class Negated(Rule):
    """NOT over a rule whose columns are never NULL (Django's `~Q` and SQL's NOT
    differ on NULLs)."""

    rule: Rule

    def render(self, n, params):
        return f"NOT ({self.rule.render(n, params)})"

    def to_q(self, params):
        return ~self.rule.to_q(params)

    def source(self):
        return f"(not {self.rule.source()})"

    def columns(self):
        return self.rule.columns()

    def parameters(self):
        return self.rule.parameters()


# ---- what a node counts as

ACCEPTED = Compare("fuse_state", "=", FuseDecision.ACCEPT)
DOWNWEIGHTED = Compare("fuse_state", "=", FuseDecision.DOWNWEIGHT)
FUSED = Compare("fuse_state", "=", FuseDecision.BLOCK)
ERRORED = Flag("is_error")
FAILED = FUSED | ERRORED
HIGH_UNCERTAINTY = Compare("confidence", "<", param="threshold")
RETRIED = Compare("retry_of", "<>", "")
RETRIED_OK = RETRIED & ~FUSED
# What the folded trace graph never hides, and what a root cause is made of.
ANOMALOUS = FAILED | HIGH_UNCERTAINTY
# Guarded: the consumer itself downweighted or blocked what it consumed (the
# health check's "consumed a fused artifact anyway" is a fused parent of an
# unguarded child).
GUARDED = Compare("fuse_state", ">", FuseDecision.ACCEPT)
OVER_ROUND_LIMIT = Compare("round", ">", param="max_rounds")

# A trace (not a node) with a high-uncertainty node: the least confidence of
# its nodes, kept on the trace as they arrive, is below the threshold.
UNCERTAIN_TRACE = Compare("min_confidence", "<", param="threshold")

# A Fuse row (a consumer's decision about a node) that blocks it.
BLOCKING_DECISION = Compare("decision", "=", FuseDecision.BLOCK)

# A root cause's reason: the first that applies, in the contract's words.
ANOMALIES = (("fused", FUSED), ("error", ERRORED), ("low_confidence", HIGH_UNCERTAINTY))


def anomaly_test(threshold: float) -> Callable[[int, bool, float | None], str | None]:
    """`test(fuse_state, is_error, confidence)`: the name of the first anomaly
    that applies, else None."""
    tests = [(name, rule.function("fuse_state", "is_error", "confidence", threshold=threshold))
             for name, rule in ANOMALIES]

    def test(fuse_state: int, is_error: bool, confidence: float | None) -> str | None:
        for name, holds in tests:
            if holds(fuse_state, is_error, confidence):
                return name
        return None

    return test


def decision_name(code: int) -> str | None:
    """A fuse state's contract name (`accept`, `downweight`, `block`), None for none."""
    return FuseDecision(code).label if code else None


# ---- the final answer of a trace
# A trace's final answer (spec/api-v1.md, "Reading"): its newest node with
# `source_type: final_answer`, else its newest node that no node of the trace
# consumed, unless that node is fused: a run that ended in a fuse gave no
# answer. "Newest" is the latest timestamp, ties by the larger node id. The
# fuse exception applies to the second choice only: a node the workflow itself
# calls its final answer stays its answer when a consumer blocked it (what
# `GET /api/v1/root-causes?answers=fused` asks about), while a run whose last
# unconsumed node is a fused artifact stopped at the fuse and answered nothing.
# "Consumed" counts consumers in the same trace only. Three forms: SQL
# (`final_answer_sql`), the ORM (`final_answer_pk`) and Python (`pick_final_answer`).

FINAL_ANSWER = "final_answer"


def final_answer_sql(trace_pk: str, project_pk: str, among: str = "") -> str:
    """The final answer's node id (NULL: none) of the trace whose pk is the SQL
    expression `trace_pk`, of the project whose pk is `project_pk` (so the
    statement stays in one project). Portable: PostgreSQL and SQLite. `among` is an extra
    condition on the candidate nodes, aliased `fa` (the rollup refresh reads
    only the nodes up to its mark: `"fa.id <= %(new_node)s"`)."""
    from provenance.models import Edge, Node

    node, edge = Node._meta.db_table, Edge._meta.db_table
    among = f"AND {among}" if among else ""
    return f"""COALESCE(
        (SELECT fa.id FROM {node} fa WHERE fa.project_id = {project_pk} AND fa.trace_id = {trace_pk}
         AND fa.source_type = '{FINAL_ANSWER}' {among}
         ORDER BY fa.timestamp DESC, fa.id DESC LIMIT 1),
        (SELECT CASE WHEN {FUSED.sql("fa")} THEN NULL ELSE fa.id END FROM {node} fa
         WHERE fa.project_id = {project_pk} AND fa.trace_id = {trace_pk} {among} AND NOT EXISTS (
             SELECT 1 FROM {edge} fe WHERE fe.project_id = fa.project_id
                 AND fe.parent_product_id = fa.product_id AND fe.trace_id = {trace_pk})
         ORDER BY fa.timestamp DESC, fa.id DESC LIMIT 1))"""


def final_answer_pk():
    """The final answer's node pk as an ORM expression over Trace rows (None: none)."""
    from django.db.models import Case, Exists, F, OuterRef, Subquery, Value, When
    from django.db.models.functions import Coalesce

    from provenance.models import Edge, Node
    from tenancy.colocation import in_outer_project

    nodes = Node.objects.filter(in_outer_project(trace=OuterRef("pk")))
    consumed = Edge.objects.filter(
        project=OuterRef("project"), trace=OuterRef("trace"), parent_product_id=OuterRef("product_id")
    )
    newest = ("-timestamp", "-pk")
    unconsumed = nodes.exclude(Exists(consumed)).order_by(*newest).annotate(
        answer=Case(When(FUSED.q(), then=Value(None)), default=F("pk")))
    return Coalesce(
        Subquery(nodes.filter(source_type=FINAL_ANSWER).order_by(*newest).values("pk")[:1]),
        Subquery(unconsumed.values("answer")[:1]),
    )


def pick_final_answer(nodes, consumed: set[str], fields: tuple[str, ...] = ()):
    """The final answer among one trace's `nodes` (objects or mappings with
    product_id, source_type, fuse_state, timestamp and pk), None for none;
    `consumed` holds the product ids some node of the trace consumed.

    With `fields`, the nodes are tuples of those columns (product_id,
    source_type and fuse_state among them) already ordered oldest first (by
    timestamp, then pk), as the trace page reads them."""
    if fields:
        position = {name: k for k, name in enumerate(fields)}

        def get(node, name):
            return node[position[name]]

        def newest(items):
            return items[-1] if items else None
    else:
        def get(node, name):
            return node[name] if isinstance(node, Mapping) else getattr(node, name)

        def newest(items):
            return max(items, key=lambda n: (get(n, "timestamp"), get(n, "pk")), default=None)

    nodes = list(nodes)
    final = newest([n for n in nodes if get(n, "source_type") == FINAL_ANSWER])
    if final is not None:
        return final
    last = newest([n for n in nodes if get(n, "product_id") not in consumed])
    if last is None or FUSED.holds(fuse_state=get(last, "fuse_state")):
        return None
    return last

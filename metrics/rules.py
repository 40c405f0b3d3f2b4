"""What a node counts as, written once for every path that counts nodes.

- accepted, downweighted, fused: its fuse_state is accept, downweight, block
- failed: fused, or its status is error
- high-uncertainty: its confidence is below the project's
  high_uncertainty_threshold (a node without a confidence is not)
- retried: it has `retry_of` (it replaces a fused node); retried_ok: retried
  and not fused (retry_success_rate = retried_ok / retried)

Each rule is one SQL boolean expression over a node's columns (portable:
PostgreSQL and SQLite). The rollup refresh aggregates with it
(metrics.rollups.refresh), the raw scan filters its counts with it
(metrics.windows.scan), and the recent rows select it as a column
(metrics.windows.recent_rows), so Python only ever adds flags up: the three
paths cannot disagree about what a node counts as.

A rule that feeds a per-node count of metrics.catalog.Totals is listed in
COUNTED under the name of that count (which is also the HourRollup column).
"""

from dataclasses import dataclass

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from metrics.rollups.schema import ACCEPT, BLOCK, DOWNWEIGHT, NODE


@dataclass(frozen=True)
class NodeRule:
    """`template` uses {n} for the node table's alias prefix and {threshold}
    for the project's high-uncertainty threshold."""

    template: str

    def sql(self, table: str = "", threshold: str = "threshold") -> str:
        return "(" + self.template.format(n=f"{table}." if table else "", threshold=threshold) + ")"

    def flag_sql(self, table: str = "", threshold: str = "threshold") -> str:
        """The rule as a value that is never NULL (a NULL column makes the bare rule NULL)."""
        return f"COALESCE({self.sql(table, threshold)}, false)"

    def condition(self, threshold: float | None = None) -> RawSQL:
        """The rule for the ORM (a filter or an aggregate's filter) over the node table."""
        params = [] if threshold is None else [threshold]
        return RawSQL(self.sql(NODE, threshold="%s"), params, output_field=BooleanField())


ACCEPTED = NodeRule(f"{{n}}fuse_state = {ACCEPT}")
DOWNWEIGHTED = NodeRule(f"{{n}}fuse_state = {DOWNWEIGHT}")
FUSED = NodeRule(f"{{n}}fuse_state = {BLOCK}")
FAILED = NodeRule(f"{{n}}fuse_state = {BLOCK} OR {{n}}is_error")
HIGH_UNCERTAINTY = NodeRule("{n}confidence < {threshold}")
RETRIED = NodeRule("{n}retry_of <> ''")
RETRIED_OK = NodeRule(f"{RETRIED.template} AND NOT ({FUSED.template})")

COUNTED = {"accepted": ACCEPTED, "downweighted": DOWNWEIGHTED, "fused": FUSED, "failed": FAILED,
           "retried": RETRIED, "retried_ok": RETRIED_OK}

"""Every metric of the contract (the README's "Alerts" section; their names in
the OpenAPI schema, `GET /api/v1/schema`): what it means and how it is
computed from a window's Totals. Alerts, the dashboards,
the metrics API and the Prometheus exposition all read these definitions
(through metrics.values), so a number means the same everywhere.

Every metric is a function of the nodes of a project whose timestamp falls
in `[start, end)` and that match the filters. An empty window has counts 0,
ratios 0.0, consecutive_fuses 0 and mean_confidence None.

Where a new metric goes
-----------------------
- A formula over counts Totals already has: one `Metric` in CATALOG below.
- A metric that counts nodes by a new rule (e.g. retry_success_rate,
  round_limit_breaches): the rule in provenance/vocabulary.py (listed in COUNTED below), a
  field of the same name in Totals and a column in metrics.models.HourRollup
  (with its migration); the refresh job, the raw scan, the recent rows and
  the rollup reader all take their lists of counts from those two places.
  Then the `Metric` here, and a case in the rollups-equal-raw-scan test's
  traffic (tests/metrics/traffic.py) if the rule needs data it lacks.
  A rule needing a value owned elsewhere (the policy's round limit) takes it
  as a parameter, as high-uncertainty takes the project's threshold:
  `metrics` never imports `policy`.
- A metric read from another table (e.g. escalation_rate over
  provenance.Escalation): a module under metrics/windows/ answering a batch
  of windows, called from metrics/values.py `many_window_values` for the
  names it owns (metrics.windows.fuse_loop: retry_success_rate,
  escalation_rate, round_limit_breaches; metrics.windows.root_causes:
  root_cause_share; `values.ALL_METRICS` lists them with these).
- A metric computed outside this app (evaluation accuracy, in `evals`) does
  not belong here: the caller (alerts) combines it with these.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields

from provenance.vocabulary import ACCEPTED, DOWNWEIGHTED, FAILED, FUSED, RETRIED, RETRIED_OK


@dataclass
class Totals:
    """The additive and set-valued figures of a window every metric derives from."""

    nodes: int = 0
    traces: int = 0
    confidence_count: int = 0
    confidence_sum: float = 0.0
    low_traces: int = 0  # distinct traces with a high-uncertainty node (provenance.vocabulary.HIGH_UNCERTAINTY)
    accepted: int = 0
    fused: int = 0
    failed: int = 0
    downweighted: int = 0
    retried: int = 0  # nodes with retry_of (provenance.vocabulary.RETRIED); retry_success_rate reads these two
    retried_ok: int = 0
    longest_fused_run: int = 0

    def values(self, metrics: Iterable[str] | None = None) -> dict[str, float | None]:
        names = METRICS if metrics is None else metrics
        return {name: CATALOG[name].compute(self) for name in names}


# The vocabulary's rules that feed a per-node count of Totals, under the name of
# that count (which is also the HourRollup column). The refresh job aggregates
# with them, the raw scan filters its counts with them and the recent rows select
# them as columns, so Python only adds flags up and the paths cannot disagree.
COUNTED = {"accepted": ACCEPTED, "downweighted": DOWNWEIGHTED, "fused": FUSED, "failed": FAILED,
           "retried": RETRIED, "retried_ok": RETRIED_OK}

# The figures that add up across hours and raw rows (everything but the run).
SUMS = tuple(f.name for f in fields(Totals) if f.name != "longest_fused_run")
# Those a rollup row sums over its nodes (distinct traces are counted, not summed).
NODE_SUMS = tuple(name for name in SUMS if name not in ("traces", "low_traces"))
# Those summed as floats (the others are counts).
FLOAT_SUMS = tuple(f.name for f in fields(Totals) if f.type in (float, "float"))


def ratio(part: str, whole: str) -> Callable[[Totals], float]:
    return lambda t: getattr(t, part) / getattr(t, whole) if getattr(t, whole) else 0.0


@dataclass(frozen=True)
class Metric:
    name: str
    meaning: str
    compute: Callable[[Totals], float | None]
    # Work beyond the additive sums, done only when a metric asking for it is read.
    needs_traces: bool = False  # distinct traces
    needs_runs: bool = False  # fused runs per agent


CATALOG = {metric.name: metric for metric in [
    Metric("node_count", "nodes", lambda t: t.nodes),
    Metric("trace_count", "distinct traces among those nodes", lambda t: t.traces, needs_traces=True),
    Metric("mean_confidence", "mean normalized confidence of the nodes that have one (None if none)",
           lambda t: t.confidence_sum / t.confidence_count if t.confidence_count else None),
    Metric("high_uncertainty_ratio", "share of those traces with at least one of those nodes below the "
           "project's high-uncertainty threshold", ratio("low_traces", "traces"), needs_traces=True),
    Metric("fuse_rate", "fused nodes (fuse_state block) / nodes", ratio("fused", "nodes")),
    Metric("failure_rate", "nodes fused or with status error / nodes", ratio("failed", "nodes")),
    Metric("downweight_rate", "downweighted nodes / nodes", ratio("downweighted", "nodes")),
    Metric("consecutive_fuses", "per agent, its nodes in timestamp order (ties by id), the longest run of "
           "fused ones in a row; the largest over agents", lambda t: t.longest_fused_run, needs_runs=True),
]}
METRICS = tuple(CATALOG)


def check_metrics(metrics: Iterable[str]) -> tuple[str, ...]:
    metrics = tuple(metrics)
    unknown = [name for name in metrics if name not in CATALOG]
    if unknown:
        raise ValueError(f"unknown metric(s): {', '.join(unknown)}")
    return metrics


def needs_traces(metrics: Iterable[str]) -> bool:
    return any(CATALOG[name].needs_traces for name in metrics)


def needs_runs(metrics: Iterable[str]) -> bool:
    return any(CATALOG[name].needs_runs for name in metrics)

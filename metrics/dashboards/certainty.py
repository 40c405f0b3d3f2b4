"""What certainty costs, per fuse policy version (metrics.counts.certainty):
the Fuse rates page loads it after its charts, as it reads raw rows."""

from metrics.counts import certainty
from metrics.params import ChartParams


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    return {"query": params.query(),
            "by_policy_version": certainty.by_policy_version(project, params.start, params.end, params.filters)}

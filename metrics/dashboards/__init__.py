"""One module per dashboard: `build(project, params, use_rollups=True) -> dict`,
the JSON both the page's script and GET /api/v1/metrics/<name> return."""

from metrics.dashboards import calibration, certainty, cost, distributions, drift, fuses, overview

DASHBOARDS = {
    "overview": overview.build,
    "fuses": fuses.build,
    "distributions": distributions.build,
    "drift": drift.build,
    "calibration": calibration.build,
    "cost": cost.build,
    "certainty": certainty.build,
}

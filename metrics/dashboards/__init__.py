"""One module per dashboard: `build(project, params, use_rollups=True) -> dict`,
the JSON both the page's script and GET /api/v1/metrics/<name> return."""

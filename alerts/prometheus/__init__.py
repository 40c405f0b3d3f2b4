"""`GET /metrics`: a project's figures in the Prometheus text format.

It lives in `alerts` because it reports alert rule states next to the
metrics and the health findings, and `alerts` is the one app allowed to
read all three (metrics never imports alerts; nothing imports alerts).
The process's own metrics for operators are project-level instead:
core.process_metrics.
"""

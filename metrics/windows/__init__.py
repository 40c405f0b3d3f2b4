"""A window's totals, the figures every metric of metrics.catalog derives from.

- totals.py: the entry (`answer`): rollup part and recent rows stitched, or
  the raw scan where the rollups cannot help;
- rollup_part.py: what the hour rollups answer for a window;
- recent_rows.py: the rows no rollup covers, fetched once per batch;
- recent_sql.py: the same rows added up by the database, for a few questions;
- fresh_runs.py: fused runs of hours read as their rollup plus newer nodes;
- scan.py: the same totals straight from the node table (the reference);
- fused_runs.py: longest runs of fused nodes, composable across pieces;
- fuse_loop.py: the fuse loop's metrics (retries, escalations, round limit),
  read from the provenance tables, not the rollups.

Callers outside the app go through metrics.values.
"""

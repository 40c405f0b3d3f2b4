"""The rollup tables' write side and what their readers share.

- refresh.py: the job (every 30 s) that folds new nodes, fuse decisions and
  reviews into metrics.models' rollups;
- schema.py: dimensions, masks, fuse codes, histogram bins, metric values and
  the SQL fragments both the job and the readers run;
- watermark.py: how far the rollups have read (one read for every reader);
- snapshot.py: the one snapshot a read combining rollups and raw rows needs;
- sql.py: small builders for the readers' SQL (time ranges, filters, buckets).
"""

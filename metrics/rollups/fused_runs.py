"""The fused runs of node sequences in SQL, as the rollups store them
(metrics.windows.fused_runs.Run): what the hour and the minute rollups share."""

from metrics.rollups.schema import partition_sql
from provenance.vocabulary import FUSED


def runs_sql(key: str, source: str, selected: str = "") -> str:
    """Gaps and islands per `key` over the node rows of `source`: the fused
    nodes of one run have the same number of other nodes before them in the
    key's sequence (one sort; the count of all nodes, for the suffix, shares
    it). Selects `selected` (default: the key), best, prefix and suffix."""
    fused, partition = FUSED.sql(), partition_sql(key)
    return f"""
        SELECT {selected or key}, MAX(length) AS best,
            COALESCE(MAX(length) FILTER (WHERE first = 1), 0) AS prefix,
            COALESCE(MAX(length) FILTER (WHERE last = total), 0) AS suffix
        FROM (
            SELECT {key}, MIN(pos) AS first, MAX(pos) AS last, COUNT(*) AS length, MAX(total) AS total
            FROM (
                SELECT {key}, {fused} AS fused, row_number() OVER w AS pos,
                    SUM(CASE WHEN {fused} THEN 0 ELSE 1 END) OVER w AS others_before,
                    COUNT(*) OVER (PARTITION BY {partition}) AS total
                FROM {source}
                WINDOW w AS (PARTITION BY {partition} ORDER BY timestamp, id ROWS UNBOUNDED PRECEDING)
            ) AS seq
            WHERE fused GROUP BY {key}, others_before
        ) AS runs
        GROUP BY {key}
    """

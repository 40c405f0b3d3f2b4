#!/usr/bin/env python
"""The DAG health check over a large project, against a plain scan of the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/health.py [--nodes 1000000] [--keep]

1. Recreates the scratch database `denoise_bench_health` (the server and user
   come from DATABASE_URL), migrates it, and generates server-side (one
   `INSERT … SELECT generate_series` per table) a project of N nodes in traces
   of 10 (small trees, a second parent on every third node, every fifth trace
   fed from the one before), plus planted faults: a 1,000-node ring across 100
   traces with a node upstream and one downstream of it, 3-node cycles,
   self-loops, broken links, orphans, fused nodes consumed by unfused,
   downweighted and blocked nodes, downweighted (not fused) parents, and a
   5,000-node chain (deep enough that trimming alone cannot remove it).
2. Baseline: `SELECT count(*)` over the project's nodes and edges (warm cache).
3. Runs the check once, prints its time, the process's peak RSS, the ratio to
   the baseline, and compares the findings with what was planted.
"""

import argparse
import resource
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

DATABASE = "denoise_bench_health"
RING = 1000
CHAIN = 5000


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def bulk_load(tables: list[str]):
    """Drops the plain indexes of `tables` and builds them again afterwards (one
    sort per index instead of a million btree inserts), and skips the per-row
    foreign-key triggers meanwhile: the generator joins every row to its trace."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i "
            "WHERE i.indrelid = ANY(%s::regclass[]) AND NOT i.indisprimary "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
            [tables],
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute("SET session_replication_role = replica")
        yield
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for _, definition in indexes:
            cursor.execute(definition)


def generate(project_pk: int, nodes: int) -> dict[str, int]:
    """Writes the graph; returns the findings it planted, per kind."""
    from django.db import connection

    from provenance.models import Edge, Node, Trace

    traces = nodes // 10
    node, edge, trace = Node._meta.db_table, Edge._meta.db_table, Trace._meta.db_table
    node_columns = (
        "project_id, trace_id, product_id, event_id, agent_id, step, source_type, content, raw_input, confidence, "
        "confidence_raw, confidence_scale, round, is_error, fuse_state, metrics, metadata, timestamp, received_at, "
        "retry_of, model"
    )
    yesterday = "now() - interval '1 day'"

    def node_values(product: str, fuse: str = "0") -> str:
        """The select list of one generated node; `i` numbers it (an int, or text for named extras)."""
        return (
            f"%(p)s, tr.id, {product}, 'e-' || {product}, 'agent', 'step', 'retrieval', '', '', "
            f"random(), NULL::float8, 1.0, 1, false, {fuse}, '{{}}'::jsonb, '{{}}'::jsonb, {yesterday}, {yesterday}, '', ''"
        )

    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {trace} (project_id, trace_id, created_at, started_at, ended_at, node_count, error_count, "
            f"environment) SELECT %(p)s, key, {yesterday}, {yesterday}, {yesterday}, 10, 0, 'production' FROM ("
            f"  SELECT 'bt' || t AS key FROM generate_series(0, %(traces)s - 1) t"
            f"  UNION ALL SELECT 'ring-' || t FROM generate_series(0, {RING // 10 - 1}) t"
            f"  UNION ALL SELECT 'chain-' || t FROM generate_series(0, {CHAIN // 10 - 1}) t) keys",
            {"p": project_pk, "traces": traces},
        )
        # In trace t, node k = i % 10; fused: node 1 of t % 100 == 3 (its consumer 4 is downweighted);
        # downweighted, not fused: node 1 of t % 100 == 4.
        fuse = (
            "CASE WHEN i %% 10 = 1 AND (i / 10) %% 100 = 3 THEN 3 "
            "WHEN (i %% 10 = 1 AND (i / 10) %% 100 = 4) OR (i %% 10 = 4 AND (i / 10) %% 100 = 3) THEN 2 ELSE 0 END"
        )
        cursor.execute(
            f"INSERT INTO {node} ({node_columns}) SELECT {node_values("'n' || i", fuse)} "
            f"FROM generate_series(0, %(traces)s * 10 - 1) i JOIN {trace} tr "
            f"ON tr.project_id = %(p)s AND tr.trace_id = 'bt' || (i / 10)",
            {"p": project_pk, "traces": traces},
        )
        cursor.execute(
            f"INSERT INTO {node} ({node_columns}) SELECT {node_values("'r' || i")} "
            f"FROM generate_series(0, {RING - 1}) i JOIN {trace} tr "
            f"ON tr.project_id = %(p)s AND tr.trace_id = 'ring-' || (i / 10) "
            f"UNION ALL SELECT {node_values("'c' || i")} "
            f"FROM generate_series(0, {CHAIN - 1}) i JOIN {trace} tr "
            f"ON tr.project_id = %(p)s AND tr.trace_id = 'chain-' || (i / 10) "
            f"UNION ALL SELECT {node_values("'ring-' || i")} "
            f"FROM (VALUES ('up'), ('down')) AS i(i) JOIN {trace} tr "
            f"ON tr.project_id = %(p)s AND tr.trace_id = 'ring-0'",
            {"p": project_pk},
        )
        orphan = "(i / 10) %% 100 = 7 AND i %% 10 = 9"
        cursor.execute(
            f"WITH planned(child, parent, trace_key, pos) AS ("
            # the tree: node k consumes node (k - 1) / 2; every third node also consumes the one before
            f"  SELECT 'n' || i, 'n' || ((i / 10) * 10 + (i %% 10 - 1) / 2), 'bt' || (i / 10), 0 "
            f"  FROM generate_series(0, %(traces)s * 10 - 1) i WHERE i %% 10 >= 1 AND NOT ({orphan})"
            f"  UNION ALL SELECT 'n' || i, 'n' || (i - 1), 'bt' || (i / 10), 1 "
            f"  FROM generate_series(0, %(traces)s * 10 - 1) i WHERE i %% 10 IN (3, 6, 9) AND NOT ({orphan})"
            # every fifth trace's root consumes node 8 of the trace before
            f"  UNION ALL SELECT 'n' || i, 'n' || (i - 2), 'bt' || (i / 10), 0 "
            f"  FROM generate_series(10, %(traces)s * 10 - 1) i WHERE i %% 10 = 0 AND (i / 10) %% 5 = 0"
            f"  UNION ALL SELECT 'n' || i, 'missing-' || (i / 10), 'bt' || (i / 10), 2 "
            f"  FROM generate_series(0, %(traces)s * 10 - 1) i WHERE i %% 10 = 7 AND (i / 10) %% 100 = 11"
            # 3-node cycles: the root consumes node 5, which consumes 2, which consumes the root
            f"  UNION ALL SELECT 'n' || i, 'n' || (i + 5), 'bt' || (i / 10), 2 "
            f"  FROM generate_series(0, %(traces)s * 10 - 1) i WHERE i %% 10 = 0 AND (i / 10) %% 1000 = 13"
            f"  UNION ALL SELECT 'n' || i, 'n' || i, 'bt' || (i / 10), 2 "
            f"  FROM generate_series(0, %(traces)s * 10 - 1) i WHERE i %% 10 = 6 AND (i / 10) %% 1000 = 17"
            f"  UNION ALL SELECT 'r' || i, 'r' || ((i + 1) %% {RING}), 'ring-' || (i / 10), 0 "
            f"  FROM generate_series(0, {RING - 1}) i"
            f"  UNION ALL VALUES ('r{RING // 2}', 'ring-up', 'ring-{RING // 20}', 1), ('ring-down', 'r0', 'ring-0', 0)"
            f"  UNION ALL SELECT 'c' || i, 'c' || (i - 1), 'chain-' || (i / 10), 0 "
            f"  FROM generate_series(1, {CHAIN - 1}) i"
            f") INSERT INTO {edge} (project_id, trace_id, child_product_id, parent_product_id, position) "
            f"SELECT %(p)s, tr.id, child, parent, pos FROM planned "
            f"JOIN {trace} tr ON tr.project_id = %(p)s AND tr.trace_id = trace_key",
            {"p": project_pk, "traces": traces},
        )

    def every(modulo: int, rest: int) -> int:
        return len(range(rest, traces, modulo))

    return {
        "broken_link": every(100, 11),
        "orphan": every(100, 7),
        "cycle": 3 * every(1000, 13) + every(1000, 17) + RING,
        "fused_indirect_use": every(100, 3),
        "round_limit_exceeded": 0,  # every generated node is in round 1
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    with scratch_django(DATABASE, keep=args.keep):
        from django.db import connection

        from provenance import health
        from provenance.models import Edge, Node
        from tenancy.models import Project

        project = Project.objects.create(slug="bench")
        started = time.perf_counter()
        with bulk_load([Node._meta.db_table, Edge._meta.db_table]):
            planted = generate(project.pk, args.nodes)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        node_count = Node.objects.filter(project=project).count()
        edge_count = Edge.objects.filter(project=project).count()
        print(f"generated {node_count:,} nodes, {edge_count:,} edges in {time.perf_counter() - started:.1f} s")

        scans = []
        for _ in range(3):
            started = time.perf_counter()
            Node.objects.filter(project=project).count()
            Edge.objects.filter(project=project).count()
            list(Node.objects.filter(project=project).values_list("product_id").order_by()[:0])
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT count(*), sum(length(product_id)) FROM {Node._meta.db_table} WHERE project_id = %s",
                    [project.pk],
                )
                cursor.execute(
                    f"SELECT count(*), sum(length(parent_product_id)) FROM {Edge._meta.db_table} WHERE project_id = %s",
                    [project.pk],
                )
            scans.append(time.perf_counter() - started)
        baseline = min(scans)

        rss_before = peak_rss_mb()
        started = time.perf_counter()
        report = health.check_project(project)
        elapsed = time.perf_counter() - started
        rss_after = peak_rss_mb()

        print(f"baseline: full scan of nodes + edges        {baseline:8.2f} s")
        print(f"health check                               {elapsed:8.2f} s   ({elapsed / baseline:.1f}x the scan)")
        print(f"peak RSS: {rss_before:.0f} MB before the check, {rss_after:.0f} MB after (+{rss_after - rss_before:.0f} MB)")
        print(f"findings: {report.counts}")
        verdict = "as planted" if report.counts == planted else f"MISMATCH, planted {planted}"
        print(f"findings {verdict}; budget 120 s: {'met' if elapsed < 120 else 'MISSED'}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""The rollup refresh's throughput: built from nothing, and in steady state.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/rollups.py [--nodes 200000] \
        [--days 90] [--slice 20000] [--database denoise_bench_rollups] [--reuse] [--no-analyze] [--explain 3]

1. Loads --nodes nodes over the last --days days into a scratch database
   (`--database`, recreated unless --reuse finds one kept by an earlier run;
   kept at the end with --keep or --reuse): bench/scale.py's load (bench/
   ingest.py's 20-node traces, its confidence mix, fuse decisions and
   reviews) through the ingest itself (provenance.ingest.write, in process),
   not timed. Then ANALYZEs every table, as autovacuum would on a server that
   runs it (this machine's runs without it; --no-analyze leaves the tables
   without statistics, the worst case).
2. Empties the rollups and times refresh_rollups() building them from
   nothing: nodes/s, the seconds of each part of the refresh
   (RefreshReport.phases) and of its slowest statements.
3. Ingests one more slice (--slice nodes, timestamps over the last minute,
   plus fuse decisions arriving late for nodes an hour old) and times the
   steady-state refresh the same way.
With --explain K, the K slowest statements of each refresh that return no
rows (INSERT, UPDATE, DELETE, CREATE TABLE AS) are run a second time under
EXPLAIN (ANALYZE, BUFFERS) and their plans printed; that second run is in a
separate refresh, rolled back, so it does not change the timed figures.
"""

import argparse
import os
import secrets
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scale import load_events  # noqa: E402
from bench.scratch import scratch_django  # noqa: E402

BATCH = 2000


class StatementTimes:
    """A Django execute wrapper: the wall time of every statement run, and,
    when `explain` names statements, their EXPLAIN (ANALYZE, BUFFERS) plans
    in place of running them bare."""

    def __init__(self, explain: set[str] | None = None):
        self.times: list[tuple[float, str]] = []
        self.cpu: list[float] = []  # the server process's CPU seconds per statement (the machine is shared)
        self.explain = explain or set()
        self.plans: dict[str, str] = {}
        self.backend = None

    def __call__(self, execute, sql, params, many, context):
        if self.backend is None:
            self.backend = 0
            context["cursor"].execute("SELECT pg_backend_pid()")
            self.backend = context["cursor"].fetchone()[0]
        cpu = backend_cpu(self.backend)
        started = time.perf_counter()
        if sql in self.explain:
            cursor = context["cursor"]
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            self.plans[sql] = "\n".join(row[0] for row in cursor.fetchall())
            result = None
        else:
            result = execute(sql, params, many, context)
        self.times.append((time.perf_counter() - started, sql))
        self.cpu.append(backend_cpu(self.backend) - cpu)
        return result

    def slowest(self, count: int) -> list[tuple[float, str]]:
        return sorted(self.times, key=lambda item: -item[0])[:count]


def backend_cpu(pid: int) -> float:
    """User and system CPU seconds of a local server process so far (0 when it is not local)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_line(sql: str, width: int = 110) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def ingest(project, events: list[dict]) -> None:
    from provenance.ingest.write import ingest_events

    for i in range(0, len(events), BATCH):
        result = ingest_events(project, events[i : i + BATCH])
        assert not result.errors, result.errors[:3]


def load(project, nodes: int, days: int) -> None:
    from django.utils import timezone

    end = timezone.now() - timedelta(minutes=5)
    span = timedelta(days=days)
    for first in range(0, nodes, 50_000):
        ingest(project, load_events(first, min(50_000, nodes - first), nodes, end - span, span))


def analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def late_fuses(project, count: int = 50) -> list[dict]:
    """Fuse decisions arriving now about nodes an hour old or more (old hours change)."""
    from django.db import connection
    from django.utils import timezone

    with connection.cursor() as cursor:
        cursor.execute("SELECT n.product_id, t.trace_id FROM provenance_node n JOIN provenance_trace t ON t.id = n.trace_id "
                       "WHERE n.project_id = %s AND n.timestamp < now() - interval '1 hour' ORDER BY n.id DESC LIMIT %s",
                       [project.pk, count])
        old = cursor.fetchall()
    run = secrets.token_hex(3)
    return [{"id": f"late-fuse-{run}-{product}", "type": "fuse", "timestamp": timezone.now().isoformat(),
             "body": {"trace_id": trace, "product_id": product, "decision": "block", "reason": "late review"}}
            for product, trace in old]


def new_slice(project, count: int, total_before: int) -> None:
    """`count` nodes of the load continued, over the last minute (new trace keys on every run), and late fuses."""
    from django.utils import timezone

    prefix_first = total_before + secrets.randbelow(10**6) * 10**4 * 20  # fresh node numbers, whole traces
    events = load_events(prefix_first, count, count, timezone.now() - timedelta(minutes=1), timedelta(minutes=1))
    ingest(project, events + late_fuses(project))


def timed_refresh(label: str, args) -> None:
    from django.db import connection, transaction

    from metrics.models import Watermark
    from metrics.rollups.refresh import refresh_rollups

    before = Watermark.objects.filter(pk=1).values("node_id", "fuse_id", "review_id", "escalation_id").first()
    times = StatementTimes()
    with connection.execute_wrapper(times):
        report = refresh_rollups()
    rate = report.nodes / report.seconds if report.seconds else float("nan")
    cpu = sum(times.cpu)
    print(f"\n{label}: {report}\n  -> {rate:,.0f} nodes/s   (load average {load_average()}); "
          f"server CPU {cpu:.2f} s in statements ({report.nodes / cpu if cpu else float('nan'):,.0f} nodes per CPU s)")
    accounted = 0.0
    for name, seconds in report.phases.items():
        accounted += seconds
        print(f"  {name:28} {seconds:8.2f} s")
    print(f"  {'rest (marks, watermark, commit)':28} {report.seconds - accounted:8.2f} s")
    print(f"  statements over {args.over} s, in the order run ({len(times.times)} run):")
    for number, ((seconds, sql), cpu) in enumerate(zip(times.times, times.cpu, strict=True)):
        if seconds >= args.over:
            print(f"  {number:3d} {seconds:8.2f} s (CPU {cpu:6.2f} s)  {one_line(sql)}")
    if not args.explain:
        return
    wanted = [sql for _, sql in times.slowest(len(times.times))
              if sql.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE", "CREATE", "WITH")
              and "RETURNING" not in sql.upper()][: args.explain]
    explained = StatementTimes(set(wanted))
    # The same refresh again from the same marks, rolled back: nothing it writes stays.
    try:
        with transaction.atomic():
            if before is None:
                from bench.metrics import forget_rollups

                forget_rollups()
            else:
                Watermark.objects.filter(pk=1).update(**before)
            with connection.execute_wrapper(explained):
                refresh_rollups()
            raise Rollback
    except Rollback:
        pass
    for sql in wanted:
        print(f"\n  EXPLAIN (ANALYZE, BUFFERS) {one_line(sql, 90)}\n{explained.plans.get(sql, '  (not rerun)')}")


class Rollback(Exception):
    pass


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--slice", type=int, default=20_000, help="nodes added before the steady-state refresh")
    parser.add_argument("--database", default="denoise_bench_rollups", help="the scratch database's name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true", help="reuse the scratch database's nodes when it exists")
    parser.add_argument("--no-analyze", action="store_true", help="do not ANALYZE after loading")
    parser.add_argument("--no-build", action="store_true", help="keep the rollups there are; time the steady state only")
    parser.add_argument("--over", type=float, default=0.5, help="statements slower than this are printed")
    parser.add_argument("--explain", type=int, default=0, help="EXPLAIN (ANALYZE, BUFFERS) this many slowest statements")
    args = parser.parse_args()

    with scratch_django(args.database, keep=args.keep or args.reuse, reuse=args.reuse):
        from bench.ingest import PRICES
        from bench.metrics import forget_rollups, node_count
        from tenancy.models import Project

        project = Project.objects.filter(slug="bench").first() if args.reuse else None
        if project is None:
            project = Project.objects.create(slug="bench", prices=PRICES)
            started = time.perf_counter()
            load(project, args.nodes, args.days)
            print(f"loaded {args.nodes:,} nodes over {args.days} days in {time.perf_counter() - started:.1f} s")
        else:
            print(f"reused {node_count(project):,} nodes of database {args.database}")
        if not args.no_analyze:
            analyze()
        print(f"statistics: {'none (never analyzed)' if args.no_analyze else 'ANALYZE after the load'}")
        if not args.no_build:
            forget_rollups()
            timed_refresh("built from nothing", args)
        total = node_count(project)
        new_slice(project, args.slice, total)
        timed_refresh(f"steady state ({args.slice:,} new nodes over the last minute, 50 late fuses)", args)


if __name__ == "__main__":
    main()

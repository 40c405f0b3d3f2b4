#!/usr/bin/env python
"""The Overview under hot ingest: minute rollups vs the hour rollups alone vs
the raw scan, in the same run, on the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/hot_overview.py [--nodes 1280000] \
        [--minutes 21] [--runs 3] [--database denoise_bench_hot] [--keep]

The scale-out bench's last Overview held 1,280,000 nodes written over 21
minutes, and its window started 10 minutes into them: every node in a
partial hour, which the hour rollups cannot answer. This lays out the same:

1. Generates --nodes nodes of ten-node traces starting over the last
   --minutes minutes (bench/metrics.py's traffic, written by PostgreSQL
   itself) into a scratch database, recreated, dropped unless --keep.
2. Builds the rollups, then ingests a minute of new nodes at the same rate
   (through the ingest, in process) and refreshes again, timed, with the
   seconds of each part: the steady state of a live project. Then the same
   with the hour rollups regrouped whole, as before they were folded in.
3. Ingests 20 more seconds of nodes, left past the watermark (a live
   project's between two refreshes), then times the Overview's computation
   (median of --runs) over the window starting 10 minutes into the data
   and over the last hour: with the minute rollups, with the hour rollups
   alone (the minute rows switched off), and from the raw scan; and checks
   that all three show the same figures.
"""

import argparse
import json
import sys
import time
from contextlib import nullcontext
from datetime import timedelta
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.metrics import PIPELINE, generate, timed  # noqa: E402
from bench.rollups import StatementTimes  # noqa: E402
from bench.scratch import scratch_django  # noqa: E402


def new_nodes(project, seconds: int, rate: float, label: str) -> int:
    """`seconds` of traffic at `rate` nodes/s ending now, through the ingest."""
    from django.utils import timezone

    from provenance.ingest.write import ingest_events

    now = timezone.now()
    count = int(rate * seconds)
    for first in range(0, count, 1000):
        ingest_events(project, [
            {"id": f"{label}-{i}", "type": "node", "timestamp": (now - timedelta(seconds=seconds * i / count)).isoformat(),
             "body": {"trace_id": f"{label}-trace-{i // 10}", "product_id": f"{label}-{i}",
                      "agent_id": PIPELINE[i % 10][0].format(variant=1), "step": PIPELINE[i % 10][1],
                      "source_type": PIPELINE[i % 10][2], "confidence": (i * 37 % 100) / 100, "round": 1,
                      **({"fuse": {"decision": "block", "reason": "low"}} if i * 37 % 100 < 20 else {})}}
            for i in range(first, min(first + 1000, count))])
    return count


def figures(shown):
    """What the page shows, floats to 9 digits (sums added in another order differ past them)."""
    if isinstance(shown, float):
        return round(shown, 9)
    if isinstance(shown, dict):
        return {key: figures(value) for key, value in shown.items()}
    if isinstance(shown, list | tuple):
        return [figures(value) for value in shown]
    return shown


def shows(project, chart_params, use_rollups: bool = True) -> str:
    from metrics.dashboards import overview

    built = overview.build(project, chart_params, use_rollups=use_rollups)
    return json.dumps(figures(json.loads(json.dumps(built, default=str))), sort_keys=True)


def without_minute_rows():
    from metrics.windows import minute_part, minute_series

    return mock.patch.multiple(minute_part, holds_question=lambda question: False), \
        mock.patch.object(minute_series, "holds_question", lambda question: False)


def regrouping_hours():
    """The refresh as before it folded hours in: every dirty hour regrouped whole."""
    from metrics.rollups import appended_hours

    plan = appended_hours.plan

    def everything_whole(cursor, bounds):
        cursor.execute("UPDATE metrics_dirty_hours SET whole = true")
        plan(cursor, bounds)

    return mock.patch.object(appended_hours, "plan", everything_whole)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_280_000)
    parser.add_argument("--minutes", type=float, default=21)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database", default="denoise_bench_hot", help="the scratch database's name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true", help="reuse the scratch database kept by --keep (implies --keep)")
    parser.add_argument("--statements", type=int, default=0, help="print the N slowest statements of each Overview")
    args = parser.parse_args()

    with scratch_django(args.database, keep=args.keep or args.reuse, reuse=args.reuse):
        from django.db import connection
        from django.utils import timezone

        from metrics.dashboards import overview
        from metrics.params import ChartParamsSerializer
        from metrics.rollups.refresh import refresh_rollups
        from tenancy.models import Project

        rate = args.nodes / (args.minutes * 60)
        project = Project.objects.filter(slug="bench").first() if args.reuse else None
        if project is None:
            project = Project.objects.create(slug="bench")
            started = time.perf_counter()
            generate(project.pk, args.nodes, days=args.minutes / 1440)
            print(f"generated {args.nodes:,} nodes over {args.minutes:g} minutes ({rate:,.0f} nodes/s) "
                  f"in {time.perf_counter() - started:.1f} s")
            print(f"rollups built: {refresh_rollups()}")
        else:
            print("reused the kept database: its data is older by the time since")
        for label, forced in (("hours folded in", nullcontext()), ("hours regrouped whole", regrouping_hours())):
            new_nodes(project, 60, rate, f"steady-{time.time():.0f}")
            with forced:
                report = refresh_rollups()
            print(f"steady-state refresh after a minute of nodes, {label}: {report}")
            print("  its parts: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in report.phases.items()))
        print(f"{new_nodes(project, 20, rate, f'unrolled-{time.time():.0f}'):,} nodes left past the watermark")

        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute("SELECT MIN(timestamp) FROM provenance_node WHERE project_id = %s", [project.pk])
            data_start = cursor.fetchone()[0]

        def params(**query):
            serializer = ChartParamsSerializer(data=query)
            serializer.is_valid(raise_exception=True)
            return serializer.validated_data

        windows = [
            ("window starting 10 min into the data", params(start=(data_start + timedelta(minutes=10)).isoformat(),
                                                            end=now.isoformat())),
            ("last hour", params(start=(now - timedelta(hours=1)).isoformat(), end=now.isoformat())),
        ]
        print(f"\n{'Overview':40} {'minute rows ms':>15} {'hours only ms':>14} {'raw ms':>9} {'hours/min':>10} "
              f"{'raw/min':>8}")
        for name, chart_params in windows:
            with_minutes = timed(lambda p=chart_params: overview.build(project, p, use_rollups=True), args.runs)
            shown = shows(project, chart_params)
            first, second = without_minute_rows()
            with first, second:
                hours_only = timed(lambda p=chart_params: overview.build(project, p, use_rollups=True), args.runs)
                shown_hours = shows(project, chart_params)
            raw = timed(lambda p=chart_params: overview.build(project, p, use_rollups=False), args.runs)
            shown_raw = shows(project, chart_params, use_rollups=False)
            same = "same figures" if shown == shown_hours == shown_raw else "FIGURES DIFFER"
            print(f"{name:40} {with_minutes:15.0f} {hours_only:14.0f} {raw:9.0f} {hours_only / with_minutes:9.1f}x "
                  f"{raw / with_minutes:7.1f}x  {same}")
            if args.statements:
                times = StatementTimes()
                with connection.cursor() as cursor:  # outside the snapshot, whose first statement sets it up
                    cursor.execute("SELECT pg_backend_pid()")
                    times.backend = cursor.fetchone()[0]
                with connection.execute_wrapper(times):
                    overview.build(project, chart_params, use_rollups=True)
                for seconds, sql in times.slowest(args.statements):
                    print(f"    {seconds * 1000:7.0f} ms  {' '.join(sql.split())[:150]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""GET /metrics for a project with 50 agents and 500 alert rules over
1,000,000 nodes, against the raw scan of the same figures in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/prometheus.py \
        [--nodes 1000000] [--agents 50] [--rules 500] [--days 1] [--runs 30] [--skip-refresh] [--keep]

1. Recreates the scratch database `denoise_bench_prometheus` (server and user
   from DATABASE_URL; `--database` to name another), has PostgreSQL generate
   the nodes as bench/alerts.py does (traces of 10 over the last `--days`
   days, spread over `--agents` agents), builds the rollups, adds the rules
   (a third of them firing) and a health report.
2. Times `GET /metrics` through Django's full request path (middleware, key
   lookup, exposition) with the per-project cache off, the median of
   `--runs`; then with the cache on (what a 15 s scrape from two Prometheus
   replicas mostly sees); then the same per-agent figures from the raw scan
   of the node table (`use_rollups=False`), the baseline.
"""

import argparse
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.alerts import generate  # noqa: E402
from bench.scratch import scratch_django  # noqa: E402

GOAL_MS = 100


def timed(action, runs: int) -> float:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--rules", type=int, default=500)
    parser.add_argument("--days", type=float, default=1.0, help="the nodes span this many days up to now")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--database", default="denoise_bench_prometheus")
    parser.add_argument("--skip-refresh", action="store_true", help="do not build the rollups first")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    with scratch_django(args.database, keep=args.keep):
        from django.conf import settings
        from django.db import connection
        from django.test import Client
        from django.utils import timezone
        from prometheus_client.parser import text_string_to_metric_families

        from alerts.models import AlertRule, RuleState
        from metrics.rollups.refresh import refresh_rollups
        from metrics.values import Question, answer
        from provenance.models import FindingKind, HealthReport
        from tenancy.models import Project

        settings.ALLOWED_HOSTS = ["*"]
        project = Project.objects.create(slug="bench")
        _, key = project.issue_api_key()
        now = timezone.now()
        agents = [f"agent_{i:02d}" for i in range(args.agents)]
        started = time.perf_counter()
        generate(project.pk, args.nodes, args.days, now, agents)
        print(f"generated {args.nodes:,} nodes over {args.days:g} day(s), {args.agents} agents "
              f"in {time.perf_counter() - started:.1f} s")
        if not args.skip_refresh:
            print(f"rollups: {refresh_rollups()}")
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        condition = {"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.05}
        AlertRule.objects.bulk_create([
            AlertRule(project=project, name=f'rule {n} "quoted"', conditions=[condition],
                      state=RuleState.FIRING if n % 3 == 0 else RuleState.OK)
            for n in range(args.rules)
        ])
        HealthReport.objects.create(project=project, checked_at=now, finished_at=now, finding_count=3,
                                    counts={kind: 1 for kind in FindingKind.values[:3]})

        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

        def scrape() -> bytes:
            response = client.get("/metrics")
            assert response.status_code == 200, response.content[:200]
            return response.content

        text = scrape().decode()
        families = {f.name: len(f.samples) for f in text_string_to_metric_families(text)}
        window_nodes = sum(s.value for f in text_string_to_metric_families(text) if f.name == "denoise_node_count"
                           for s in f.samples)
        print(f"one scrape: {len(text.splitlines())} lines, {len(text):,} bytes; series {families}; "
              f"{window_nodes:,.0f} nodes in the last 15 minutes")

        settings.PROMETHEUS_CACHE_SECONDS = 0
        uncached = timed(scrape, args.runs)
        settings.PROMETHEUS_CACHE_SECONDS = 5
        cached = timed(scrape, args.runs)
        question = Question(now - timedelta(minutes=15), now, by="agent_id",
                            metrics=("node_count", "fuse_rate", "failure_rate", "mean_confidence",
                                     "high_uncertainty_ratio"))
        raw = timed(lambda: answer(project, [question], use_rollups=False), max(3, args.runs // 3))
        print(f"\nGET /metrics, cache off (median of {args.runs})   {uncached:8.1f} ms")
        print(f"GET /metrics, cache on                    {cached:8.1f} ms")
        print(f"baseline: the per-agent gauges from the raw scan   {raw:8.1f} ms  "
              f"-> /metrics uncached is {raw / uncached:.1f}x the baseline's speed")
        print(f"goal: under {GOAL_MS} ms uncached: {'met' if uncached < GOAL_MS else 'MISSED'}"
              f"{' (machine load ' + str(round(os.getloadavg()[0], 1)) + ')'}")


if __name__ == "__main__":
    main()

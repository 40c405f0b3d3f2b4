#!/usr/bin/env python
"""Metrics dashboards at volume: rollups vs the raw scan, in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/metrics.py [--nodes 1000000] [--runs 5] \
        [--database denoise_bench_metrics] [--keep] [--reuse [--keep-rollups]]

1. Generates a month of ten-node workflow traces ending now (PostgreSQL writes
   them itself, INSERT … SELECT over generate_series) into a scratch database
   (`--database`, default `denoise_bench_metrics`, recreated, dropped at the
   end unless --keep; with --reuse a database kept by an earlier run is
   migrated and its nodes kept, older by the time since):
   user input, three retrievals, entity extraction, reasoning, verification, a
   tool call, a summary and the final answer, each consuming the one before.
   Entity extraction is bimodal (a split task), the reasoner drifts down over
   the last week, low-confidence retrievals are downweighted or blocked, a
   fifth of traces get a review following the final answer's confidence.
   The fuse loop has data too: fuse decisions name policy version 1, then 2
   for the last 10 days (a few none); a third of second retrievals are
   retries of the first; final answers below 0.6 are escalated.
   Every node carries a duration (retrieval 200-800 ms, reasoning 1-4 s,
   the rest 20-300 ms); model steps a model, token usage and a cost (one
   model in ten unpriced: no cost); 5% of traces are in `evaluation`.
2. Builds the rollups from nothing (`refresh_rollups`; a reused database's
   are emptied first, so both time the same build), then times a steady
   state refresh after 30 s worth of new nodes and late fuse decisions.
3. Times every chart's computation over the last 30 days (median of --runs),
   with rollups and with the raw scan, and prints both and their ratio; then
   one alert tick: 500 windows (15 min and the 15 min before, 250 filter sets)
   through metrics.values.many_window_values.
"""

import argparse
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This file is called metrics.py: the project root must come before bench/ so
# `import metrics` finds the app, not this script.
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

PIPELINE = [
    # (agent_id, step, source_type)
    ("intake_agent", "intake", "user_input"),
    ("retrieval_agent_v{variant}", "retrieval", "retrieval"),
    ("retrieval_agent_v{variant}", "retrieval", "retrieval"),
    ("web_search_agent", "retrieval", "tool_result"),
    ("extraction_agent", "entity_extraction", "reasoning"),
    ("reasoning_agent", "reasoning", "reasoning"),
    ("verifier_agent", "verification", "verification"),
    ("calculator_tool", "tool_call", "tool_call"),
    ("summary_agent", "summary", "summary"),
    ("answer_agent", "final_answer", "final_answer"),
]
NODES_PER_TRACE = len(PIPELINE)


def sql_case(values: list[str]) -> str:
    return "CASE k " + " ".join(f"WHEN {i} THEN '{v}'" for i, v in enumerate(values)) + " END"


def generate(project_id: int, nodes: int, days: int = 30, seed: float = 0.42) -> None:
    from django.db import connection

    traces = max(1, nodes // NODES_PER_TRACE)
    agents = sql_case([a for a, _, _ in PIPELINE]).replace("{variant}", "' || (1 + t %% 2) || '")
    steps, sources = sql_case([s for _, s, _ in PIPELINE]), sql_case([s for _, _, s in PIPELINE])
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(%s)", [seed])
        cursor.execute(
            f"""
            INSERT INTO provenance_trace (project_id, trace_id, created_at, started_at, ended_at, node_count,
                error_count, environment)
            SELECT %s, 'trace-' || t, now(), s, s + interval '5 minutes', {NODES_PER_TRACE}, 0,
                CASE WHEN t %% 20 = 0 THEN 'evaluation' ELSE 'production' END
            FROM (SELECT t, now() - make_interval(secs => random() * %s) AS s FROM generate_series(1, %s) t) x
            """,
            [project_id, days * 86400, traces],
        )
        cursor.execute(
            f"""
            CREATE TEMP TABLE bench_nodes AS
            SELECT tr.id AS trace_pk, tr.trace_id, tr.started_at, t, k,
                tr.started_at + make_interval(secs => k * (2 + random() * 28)) AS ts,
                {agents} AS agent_id, {steps} AS step, {sources} AS source_type,
                CASE
                    WHEN k = 4 THEN CASE WHEN random() < 0.45 THEN 0.15 + random() * 0.2 ELSE 0.75 + random() * 0.2 END
                    WHEN k = 5 AND tr.started_at > now() - interval '7 days' THEN 0.25 + random() * 0.5
                    WHEN k IN (1, 2, 3) THEN 0.3 + (random() + random()) * 0.35
                    ELSE 0.55 + random() * 0.45
                END AS confidence,
                random() AS r1, random() AS r2, random() AS r3
            FROM provenance_trace tr, generate_series(0, {NODES_PER_TRACE - 1}) k,
                 LATERAL (SELECT substr(tr.trace_id, 7)::int AS t) tn
            WHERE tr.project_id = %s
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_node (project_id, trace_id, product_id, event_id, agent_id, step, source_type,
                content, raw_input, confidence, confidence_raw, confidence_scale, round, is_error, fuse_state,
                metrics, metadata, timestamp, received_at, retry_of, duration_ms, model, input_tokens, output_tokens,
                cost_usd)
            SELECT %s, trace_pk, trace_id || '-' || k, 'ev-' || trace_id || '-' || k, agent_id, step, source_type,
                'artifact ' || k || ' of ' || trace_id, '', c, c, 1,
                CASE WHEN r3 < 0.1 THEN NULL ELSE 1 + (r3 * 3)::int %% 3 END,
                r2 < 0.02,
                CASE WHEN k IN (1, 2, 3, 4) AND c IS NOT NULL THEN
                    CASE WHEN c < 0.3 THEN 3 WHEN c < 0.5 THEN 2 ELSE 1 END ELSE 0 END,
                CASE WHEN k IN (4, 5, 6) THEN jsonb_build_object(
                    'self_consistency_score', round((COALESCE(c, 0.5) * 0.8 + r1 * 0.2)::numeric, 3),
                    'semantic_entropy', round(((1 - COALESCE(c, 0.5)) * 2 + r2 * 0.3)::numeric, 3))
                ELSE '{}'::jsonb END,
                '{}'::jsonb, ts, ts, CASE WHEN k = 2 AND r3 > 0.67 THEN trace_id || '-1' ELSE '' END,
                CASE WHEN k IN (1, 2, 3) THEN 200 + r2 * 600 WHEN k IN (4, 5, 6) THEN 1000 + r2 * 3000
                     ELSE 20 + r2 * 280 END,
                model, CASE WHEN model <> '' THEN tokens_in END, CASE WHEN model <> '' THEN tokens_out END,
                CASE WHEN model = 'local-llama' OR model = '' THEN NULL
                     ELSE (tokens_in * 0.15 + tokens_out * 0.6) / 1e6 * CASE model WHEN 'gpt-4o' THEN 16 ELSE 1 END END
            FROM (SELECT *, CASE WHEN r1 < 0.08 THEN NULL ELSE confidence END AS c,
                    CASE WHEN k IN (4, 5, 6, 8, 9) THEN
                        (ARRAY['gpt-4o-mini', 'gpt-4o', 'gpt-4o-mini', 'local-llama', 'gpt-4o-mini',
                               'gpt-4o-mini', 'gpt-4o', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini'])[1 + (t + k) %% 10]
                    ELSE '' END AS model,
                    (300 + r1 * 2500)::int AS tokens_in, (50 + r3 * 600)::int AS tokens_out
                  FROM bench_nodes) n
            ORDER BY ts
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_fuse (project_id, trace_id, product_id, event_id, decision, reason, threshold,
                by_agent_id, inline, timestamp, reason_code, policy_version)
            SELECT n.project_id, t.trace_id, n.product_id, n.event_id, n.fuse_state,
                CASE n.fuse_state WHEN 3 THEN
                    (ARRAY['confidence below 0.3', 'contradicts retrieval', 'stale source'])[1 + (n.id %% 3)]
                WHEN 2 THEN (ARRAY['confidence below 0.5', 'low vote ratio'])[1 + (n.id %% 2)]
                ELSE 'ok' END,
                0.5, 'router_agent', true, n.timestamp, '',
                CASE WHEN n.id %% 50 = 0 THEN NULL WHEN n.timestamp < now() - interval '10 days' THEN 1 ELSE 2 END
            FROM provenance_node n JOIN provenance_trace t ON t.id = n.trace_id
            WHERE n.project_id = %s AND n.fuse_state > 0
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_edge (project_id, trace_id, child_product_id, parent_product_id, position)
            SELECT %s, trace_pk, trace_id || '-' || k, trace_id || '-' || (k - 1), 0
            FROM bench_nodes WHERE k > 0
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_review (project_id, trace_id, product_id, event_id, verdict, comment, timestamp)
            SELECT n.project_id, n.trace_id, '', 'review-' || n.product_id,
                CASE WHEN random() < COALESCE(n.confidence, 0.5) THEN 'correct' ELSE 'incorrect' END, '',
                n.timestamp + interval '1 hour'
            FROM provenance_node n
            WHERE n.project_id = %s AND n.source_type = 'final_answer' AND random() < 0.2
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_escalation (project_id, trace_id, product_id, event_id, reason, by_agent_id,
                timestamp)
            SELECT n.project_id, n.trace_id, n.product_id, 'esc-' || n.product_id, 'low final answer', 'router_agent',
                n.timestamp + interval '1 minute'
            FROM provenance_node n
            WHERE n.project_id = %s AND n.source_type = 'final_answer' AND n.confidence < 0.6
            """,
            [project_id],
        )
        cursor.execute("DROP TABLE bench_nodes")
        cursor.execute("ANALYZE")


def chart_cases(params) -> list[tuple]:
    """(name, build, chart params) of every chart; `params(**query)` makes the
    params of a 30-day range unless the query names another."""
    from metrics.dashboards import calibration, cost, distributions, drift, fuses, overview

    return [
        ("overview", overview.build, params()),
        ("overview, agent filter", overview.build, params(agent_id="retrieval_agent_v1")),
        ("fuse rates", fuses.build, params()),
        ("fuse rates, step filter", fuses.build, params(step="retrieval")),
        ("uncertainty distributions", distributions.build, params()),
        ("drift (confidence), 7d", drift.build, params(range="7d")),
        ("drift (confidence), 7d in day buckets", drift.build, params(range="7d", resolution="day")),
        ("drift (semantic_entropy), reasoning", drift.build, params(metric="semantic_entropy", step="reasoning")),
        ("calibration", calibration.build, params()),
        ("cost & latency (by agent)", cost.build, params()),
        ("cost & latency, by model", cost.build, params(by="model")),
        ("cost & latency, by step", cost.build, params(by="step")),
    ]


def summary_cases() -> list[tuple]:
    """(metric name, Filters) of every summary the bench times."""
    from metrics.values import Filters

    return [("confidence", Filters()), ("duration_ms", Filters()), ("cost_usd", Filters()),
            ("tokens", Filters()), ("semantic_entropy", Filters()),
            ("duration_ms", Filters(step="reasoning")), ("cost_usd", Filters(model="gpt-4o"))]


def node_count(project) -> int:
    from provenance.models import Node

    return Node.objects.filter(project=project).count()


def forget_rollups() -> None:
    """Empties the rollups and their watermark: the next refresh builds them from nothing."""
    from django.db import connection

    from metrics.models import RolledProject, Watermark
    from metrics.rollups.refresh import ROLLUP_MODELS

    tables = [model._meta.db_table for model in (*ROLLUP_MODELS, RolledProject, Watermark)]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)}")


def timed(fn, runs: int) -> float:
    """Median wall time of `runs` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def steady_state_traffic(project, seconds: int = 30) -> None:
    """What 30 s of traffic at the generated rate looks like: new nodes now,
    and fuse decisions about nodes an hour old."""
    from django.db import connection
    from django.utils import timezone

    from provenance.ingest.write import ingest_events

    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) / 2592000.0 FROM provenance_node WHERE project_id = %s", [project.pk])
        rate = float(cursor.fetchone()[0])
        cursor.execute("SELECT product_id, t.trace_id FROM provenance_node n JOIN provenance_trace t ON t.id = n.trace_id "
                       "WHERE n.project_id = %s AND n.timestamp < now() - interval '1 hour' ORDER BY n.id DESC LIMIT 5",
                       [project.pk])
        old = cursor.fetchall()
    now = timezone.now()
    count = max(10, int(rate * seconds))
    run = f"{now:%Y%m%d%H%M%S}"  # new ids on every run over a reused database
    events = [{"id": f"steady-{run}-{i}", "type": "node", "timestamp": (now - timedelta(seconds=i % seconds)).isoformat(),
               "body": {"trace_id": f"steady-trace-{run}-{i // 10}", "product_id": f"steady-{run}-{i}",
                        "agent_id": PIPELINE[i % 10][0].format(variant=1), "step": PIPELINE[i % 10][1],
                        "source_type": PIPELINE[i % 10][2], "confidence": (i * 37 % 100) / 100, "round": 1}}
              for i in range(count)]
    events += [{"id": f"late-fuse-{run}-{product}", "type": "fuse", "timestamp": now.isoformat(),
                "body": {"trace_id": trace, "product_id": product, "decision": "block", "reason": "late review"}}
               for product, trace in old]
    ingest_events(project, events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--database", default="denoise_bench_metrics", help="the scratch database's name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the scratch database's nodes when it exists (kept by --keep); implies --keep")
    parser.add_argument("--keep-rollups", action="store_true",
                        help="with --reuse: keep the rollups as an earlier run (or refresh_metric_rollups) left "
                             "them, refreshed once, instead of building them from nothing")
    args = parser.parse_args()

    with scratch_django(args.database, keep=args.keep or args.reuse, reuse=args.reuse):
        from django.utils import timezone

        from metrics.counts import summaries
        from metrics.params import ChartParamsSerializer
        from metrics.rollups.refresh import refresh_rollups
        from metrics.rollups.values import stored_metric
        from metrics.values import Filters, many_window_values, summary
        from tenancy.models import Project

        project = Project.objects.filter(slug="bench").first() if args.reuse else None
        if project is None:
            project = Project.objects.create(slug="bench")
            started = time.perf_counter()
            generate(project.pk, args.nodes)
            print(f"generated {args.nodes:,} nodes in {time.perf_counter() - started:.1f} s")
        else:
            print(f"reused {node_count(project):,} nodes of database {args.database}")
            if not args.keep_rollups:
                forget_rollups()

        report = refresh_rollups()
        print(f"rollups {'refreshed' if args.keep_rollups else 'built from nothing'}: {report}")
        steady_state_traffic(project)
        report = refresh_rollups()
        print(f"steady-state refresh (30 s of traffic + late fuses): {report.seconds * 1000:.0f} ms ({report})")

        def params(**query):
            serializer = ChartParamsSerializer(data={"range": "30d", **query})
            serializer.is_valid(raise_exception=True)
            return serializer.validated_data

        charts = chart_cases(params)
        print(f"\n{'chart (last 30 days unless noted)':42} {'rollups ms':>11} {'raw ms':>9} {'raw/rollup':>11}")
        slowest = 0.0
        for name, build, chart_params in charts:
            with_rollups = timed(lambda b=build, p=chart_params: b(project, p, use_rollups=True), args.runs)
            raw = timed(lambda b=build, p=chart_params: b(project, p, use_rollups=False), max(1, args.runs // 2))
            slowest = max(slowest, with_rollups)
            print(f"{name:42} {with_rollups:11.1f} {raw:9.1f} {raw / with_rollups:10.1f}x")
        print(f"slowest chart with rollups: {slowest:.0f} ms (goal: 382 ms)")

        now = timezone.now()
        print(f"\n{'GET /api/v1/metrics/summary, last 30 days':42} {'rollups ms':>11} {'raw ms':>9} {'raw/rollup':>11}")
        slowest, window = 0.0, (now - timedelta(days=30), now)
        for name, filters in summary_cases():
            with_rollups = timed(lambda n=name, f=filters: summary(project, n, *window, f), args.runs)
            raw = timed(lambda n=name, f=filters: summaries.distributions(project, *window, f, stored_metric(n),
                                                                          use_rollups=False), max(1, args.runs // 2))
            slowest = max(slowest, with_rollups)
            chosen = ", ".join(f"{k}={v}" for k, v in vars(filters).items() if v and k != "environment")
            label = f"{name} ({chosen})" if chosen else name
            print(f"{label:42} {with_rollups:11.1f} {raw:9.1f} {raw / with_rollups:10.1f}x")
        print(f"slowest summary with rollups: {slowest:.0f} ms (goal: 300 ms)")

        agents = [PIPELINE[k][0].format(variant=v) for k in range(10) for v in (1, 2)]
        filter_sets = [Filters(agent_id=agents[i % len(agents)]) if i % 3 == 0 else
                       Filters(step=PIPELINE[i % 10][1]) if i % 3 == 1 else
                       Filters(source_type=PIPELINE[i % 10][2], agent_id=agents[i % len(agents)])
                       for i in range(250)]
        requests = []
        for filters in filter_sets:
            requests.append((now - timedelta(minutes=15), now, filters))
            requests.append((now - timedelta(minutes=30), now - timedelta(minutes=15), filters))
        tick = timed(lambda: many_window_values(project, requests), args.runs)
        print(f"\nalert tick: {len(requests)} windows through many_window_values: {tick:.0f} ms")


if __name__ == "__main__":
    main()

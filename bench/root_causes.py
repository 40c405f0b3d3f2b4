#!/usr/bin/env python
"""Why answers go wrong, at volume: `GET /api/v1/root-causes` over 30 days
from the stored root causes, against recomputing every answer's root cause
in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/root_causes.py [--nodes 1000000] \
        [--runs 7] [--database denoise_bench_root_causes] [--keep]

1. Generates a month of ten-node workflow traces (bench/metrics.py's
   generator: low-confidence retrievals downweighted or blocked, a bimodal
   extractor, a drifting reasoner, 2% failed steps) and keeps reviews of 5%
   of the final answers.
2. Stores every trace's root causes from nothing (`refresh_root_causes --all`,
   the catch-up a new installation runs once), timed.
3. Times the aggregate of the last 30 days (median of --runs), in process and
   through the API view with a key; then the baseline: every incorrect answer's
   root cause recomputed with the per-trace walk (provenance.dag.walks.root_causes)
   and grouped, as a read without the stored rows would have to, and checks
   both give the same groups.
4. Times the refresh of one ingest batch (1,000 nodes in 100 new traces, a
   fifth of them reviewed): the drain of its mark (what the first reader, or
   a worker, pays: provenance.root_causes.pending) once, then the refresh
   itself repeated.

With --drain, the drain of what the ingest leaves pending instead
(provenance.root_causes.pending; --nodes defaults to 200,000):

    DATABASE_URL=... .venv/bin/python bench/root_causes.py --drain [--nodes 200000] [--days 90] [--fresh 50000] \
        [--profile]

1. Ingests --nodes nodes through the ingest path (provenance.ingest.write.
   ingest_events, in process, batches of 1,000: bench/scale.py's load of
   20-node traces over --days days, a fifth reviewed), leaving one mark per
   batch pending, and keeps a copy of the marks.
2. Drains every mark (pending.drain_all, the catch-up's drain) on tables
   never analyzed (this server runs without autovacuum), timed: traces/s.
3. ANALYZE, the stored rows emptied and the marks put back: the same drain
   on analyzed tables (what a server with autovacuum sees), timed; both
   drains must store the same rows (a digest of them is printed, so two
   versions of the code can be compared). Each drain's time is attributed
   to its statements (the five costliest, by their first words); --profile
   adds cProfile's top functions of the analyzed drain.
4. Ingests --fresh more nodes (in the same span) and times the first
   `GET /api/v1/root-causes` over the whole span, which drains their marks,
   then the same read once settled.
"""

import argparse
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402


def timed(fn, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), times


def recompute(project, start, end) -> dict:
    """The aggregate without the stored rows: every final answer of the window
    found, its newest review read and, when incorrect, its root causes walked."""
    from django.db.models import Q

    from provenance.dag import walks
    from provenance.explorer.reads import final_answer_nodes
    from provenance.models import Node, Trace

    traces = Trace.objects.filter(project=project, started_at__gte=start - timedelta(hours=1), started_at__lt=end)
    reviewed = traces.filter(reviews__isnull=False).distinct()
    answers = [n for n in final_answer_nodes(project.pk, reviewed).filter(timestamp__gte=start, timestamp__lt=end)
               .filter(Q(verdict="incorrect")).select_related("trace")]
    groups, unexplained = defaultdict(list), 0
    labels = {}
    for answer in answers:
        causes, _, _ = walks.root_causes(project, answer.product_id)
        if not causes:
            unexplained += 1
        missing = [c.product_id for c in causes if c.product_id not in labels]
        if missing:
            labels.update((pid, (a, s)) for pid, a, s in
                          Node.objects.filter(project=project, product_id__in=missing).values_list(
                              "product_id", "agent_id", "step"))
        for key in {(*labels[c.product_id], c.reason) for c in causes}:
            groups[key].append(answer.trace.trace_id)
    return {"answers": len(answers), "unexplained": unexplained,
            "counts": {key: len(v) for key, v in groups.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, help="default 1,000,000 (200,000 with --drain)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--database", default="denoise_bench_root_causes")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--drain", action="store_true", help="time the drain of what the ingest leaves pending")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--fresh", type=int, default=50_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--explain", action="store_true", help="explain the costliest statements of each drain")
    args = parser.parse_args()
    if args.drain:
        drain_bench(args)
        return

    args.nodes = args.nodes or 1_000_000
    with scratch_django(args.database, keep=args.keep):
        from django.db import connection
        from django.utils import timezone
        from rest_framework.test import APIClient

        from bench.metrics import generate
        from provenance.ingest.write import ingest_events
        from provenance.models import AnswerCause, FinalAnswer, Node, Review
        from provenance.root_causes import aggregate, catch_up, pending, store
        from tenancy.models import Project

        project = Project.objects.create(slug="bench")
        _, key = project.issue_api_key()
        started = time.perf_counter()
        generate(project.pk, args.nodes)
        with connection.cursor() as cursor:
            # A quarter of the generator's 20%: 5% of the final answers reviewed.
            cursor.execute("DELETE FROM provenance_review WHERE id % 4 <> 0")
            cursor.execute("ANALYZE")
        print(f"generated {Node.objects.count():,} nodes, {Review.objects.count():,} reviews "
              f"in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        catch_up.rebuild(project)
        rebuilt = time.perf_counter() - started
        print(f"stored root causes from nothing: {rebuilt:.1f} s; {FinalAnswer.objects.count():,} wrong answers "
              f"({FinalAnswer.objects.filter(incorrect=True).count():,} reviewed incorrect), "
              f"{AnswerCause.objects.count():,} cause groups")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

        end = timezone.now() + timedelta(hours=2)
        start = end - timedelta(days=30)
        answers = aggregate.Answers(start, end)
        stored = aggregate.causes(project, answers)
        median, times = timed(lambda: aggregate.causes(project, answers), args.runs)
        print(f"aggregate, 30 days, in process: median {median:.1f} ms (runs: {', '.join(f'{t:.0f}' for t in times)}); "
              f"{stored['answers']:,} incorrect answers, {stored['unexplained']:,} unexplained, "
              f"{len(stored['causes'])} groups")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        params = {"start": start.isoformat(), "end": end.isoformat()}
        assert client.get("/api/v1/root-causes", params).status_code == 200
        http, http_times = timed(lambda: client.get("/api/v1/root-causes", params), args.runs)
        print(f"aggregate, 30 days, through the API view: median {http:.1f} ms "
              f"(runs: {', '.join(f'{t:.0f}' for t in http_times)})")
        for kind in ("fused", "low_confidence"):
            other, _ = timed(lambda k=kind: aggregate.causes(project, aggregate.Answers(start, end, k)), args.runs)
            print(f"  answers={kind}: median {other:.1f} ms")

        started = time.perf_counter()
        baseline = recompute(project, start, end)
        walked = (time.perf_counter() - started) * 1000
        same = (baseline["answers"] == stored["answers"] and baseline["unexplained"] == stored["unexplained"]
                and baseline["counts"] == {(c["agent_id"], c["step"], c["reason"]): c["count"]
                                           for c in stored["causes"]})
        print(f"baseline, every incorrect answer's root cause recomputed: {walked:,.0f} ms "
              f"({baseline['answers']:,} answers); stored is {walked / median:,.0f}x faster; same groups: {same}")

        now = timezone.now()
        batch = []
        for t in range(100):
            trace = f"bench-batch-{t}"
            for k in range(10):
                batch.append({"id": f"{trace}-{k}", "type": "node", "timestamp": (now + timedelta(seconds=k)).isoformat(),
                              "body": {"trace_id": trace, "product_id": f"{trace}-{k}", "agent_id": f"agent-{k}",
                                       "step": f"step-{k}", "confidence": 0.3 if k == 2 and t % 3 == 0 else 0.9,
                                       "parent_ids": [f"{trace}-{k - 1}"] if k else [],
                                       **({"source_type": "final_answer"} if k == 9 else {})}})
            if t % 5 == 0:
                batch.append({"id": f"{trace}-review", "type": "review", "timestamp": now.isoformat(),
                              "body": {"trace_id": trace, "verdict": "incorrect"}})
        ingest_events(project, batch)
        started = time.perf_counter()
        pending.drain(project)
        drained = (time.perf_counter() - started) * 1000
        pks = list(FinalAnswer.objects.filter(trace_key__startswith="bench-batch-").values_list("trace_id", flat=True))
        traces = list(project.traces.filter(trace_id__startswith="bench-batch-").values_list("pk", flat=True))
        product_ids = [e["body"]["product_id"] for e in batch if e["type"] == "node"]
        refresh, _ = timed(lambda: store.refresh(project, store.affected_traces(project, traces, product_ids)),
                           args.runs)
        print(f"refresh after one ingest batch (1,000 nodes, 100 traces, {len(pks)} wrong answers): "
              f"median {refresh:.1f} ms; the first drain of its mark {drained:.1f} ms")


def stored_digest() -> str:
    """A digest of every stored answer and cause, ids left out: equal for two drains that stored the same."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT md5(coalesce(string_agg(r, '|' ORDER BY r), '')) || ' (' || count(*) || ' rows)' FROM (
                   SELECT concat_ws(',', trace_key, product_id, node_pk, agent_id, step, timestamp, confidence,
                                    incorrect, fused, low_confidence, policy_version, threshold, cause_count,
                                    environment, model) AS r FROM provenance_finalanswer
                   UNION ALL
                   SELECT concat_ws(',', trace_key, timestamp, answer_agent_id, incorrect, fused, low_confidence,
                                    policy_version, agent_id, step, reason, product_ids::text, cause_trace_key,
                                    path::text, path_agents, passed_on::text, environment, answer_model)
                   FROM provenance_answercause) AS rows""")
        return cursor.fetchone()[0]


class StatementTimes:
    """Time per statement, by its first words (the connection's execute
    wrapper), and the slowest run of each, to be explained."""

    def __init__(self):
        self.totals: dict[str, list] = defaultdict(lambda: [0, 0.0, 0.0, None])

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            seconds = time.perf_counter() - started
            entry = self.totals[" ".join(sql.split())[:110]]
            entry[0] += 1
            entry[1] += seconds
            if seconds > entry[2]:
                entry[2:] = [seconds, (sql, params)]

    def ranked(self, top: int) -> list:
        return sorted(self.totals.items(), key=lambda kv: -kv[1][1])[:top]

    def report(self, top: int = 5) -> str:
        return "\n".join(f"    {total:7.2f} s {count:6d}x  {sql}" for sql, (count, total, _, _) in self.ranked(top))

    def explain(self, top: int = 3) -> None:
        """EXPLAIN (ANALYZE, BUFFERS) of the slowest run of the costliest
        statements that only read (a write would be done twice)."""
        from core.bulk import bound_cursor

        for shape, (_, _, slowest, (sql, params)) in self.ranked(top):
            if not shape.startswith("SELECT") or "pg_advisory" in shape:
                continue
            with bound_cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
                # The arrays of ids shortened: their length is what matters.
                plan = "\n".join(f"      {re.sub(r"'[{][^}]{60,}[}]'", _elements, row[0])}"
                                  for row in cursor.fetchall())
            print(f"    slowest run {slowest * 1000:,.0f} ms of: {shape}\n{plan}")


def _elements(match) -> str:
    return f"'{{...{match.group(0).count(',') + 1:,} elements}}'"


def load_avg() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def drain_bench(args) -> None:
    """The --drain measurement (the docstring's second part)."""
    nodes = args.nodes or 200_000
    with scratch_django(args.database if args.database != "denoise_bench_root_causes"
                        else "denoise_bench_root_causes_drain", keep=args.keep):
        from django.db import connection
        from django.utils import timezone
        from rest_framework.test import APIClient

        from bench.scale import load_events
        from provenance.ingest.write import ingest_events
        from provenance.models import RootCausePending
        from provenance.root_causes import pending
        from tenancy.models import Project

        project = Project.objects.create(slug="bench")
        _, key = project.issue_api_key()
        # Today's midnight: two runs of a day store the same rows (the digest compares them).
        end = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
        span = timedelta(days=args.days)
        total = nodes + args.fresh

        def load(first: int, count: int) -> float:
            started = time.perf_counter()
            for piece in range(first, first + count, 10_000):
                events = load_events(piece, min(10_000, first + count - piece), total, end - span, span)
                for i in range(0, len(events), 1000):
                    ingest_events(project, events[i:i + 1000])
            return time.perf_counter() - started

        seconds = load(0, nodes)
        traces = project.traces.count()
        print(f"ingested {nodes:,} nodes ({traces:,} traces) over {args.days} days in {seconds:.0f} s; "
              f"{RootCausePending.objects.count():,} marks pending; {load_avg()}", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE bench_marks AS SELECT * FROM provenance_rootcausepending")

        def drain(label: str, profile: bool = False) -> None:
            times = StatementTimes()
            profiler = None
            if profile:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            started = time.perf_counter()
            with connection.execute_wrapper(times):
                refreshed = pending.drain_all()
            seconds = time.perf_counter() - started
            if profiler:
                import pstats

                profiler.disable()
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
            print(f"drain, {label}: {refreshed:,} traces in {seconds:.1f} s = {refreshed / seconds:,.0f} traces/s "
                  f"({seconds / refreshed * 1000:.2f} ms per trace); {load_avg()}; stored: {stored_digest()}")
            print(times.report(), flush=True)
            if args.explain:
                times.explain()

        drain("tables never analyzed")
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE provenance_answercause, provenance_finalanswer")
            cursor.execute("INSERT INTO provenance_rootcausepending SELECT * FROM bench_marks")
            cursor.execute("DROP TABLE bench_marks")
            cursor.execute("ANALYZE")
        drain("after ANALYZE", profile=args.profile)

        seconds = load(nodes, args.fresh)
        print(f"ingested {args.fresh:,} more nodes in {seconds:.0f} s; "
              f"{RootCausePending.objects.count():,} marks pending", flush=True)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        params = {"start": (end - span).isoformat(), "end": (end + timedelta(hours=1)).isoformat()}
        firsts, first_times = [], StatementTimes()
        for _ in range(2):
            started = time.perf_counter()
            with connection.execute_wrapper(first_times if not firsts else StatementTimes()):
                response = client.get("/api/v1/root-causes", params)
            firsts.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content
        print(f"GET /api/v1/root-causes over {args.days} days after {args.fresh:,} new nodes: first {firsts[0]:,.0f} ms "
              f"(drains their marks), then {firsts[1]:,.0f} ms; {response.json()['answers']:,} incorrect answers; "
              f"{load_avg()}")
        print(first_times.report(), flush=True)


if __name__ == "__main__":
    main()

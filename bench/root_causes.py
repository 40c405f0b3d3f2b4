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
"""

import argparse
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
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--database", default="denoise_bench_root_causes")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()

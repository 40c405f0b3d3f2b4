#!/usr/bin/env python
"""An evaluation run of 10,000 results: stored and judged in 10 batches, then
its summary and its comparison with another 10,000-result run read back,
against naive baselines measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/evaluation.py \
        [--items 10000] [--batch 1000] [--reads 15] [--keep]

1. Recreates the scratch database `denoise_bench_evals` (server and user from
   DATABASE_URL), migrates it, creates a project and a truth set of N items
   (number, percentages, label and exact kinds, 20 tags) through the API.
2. Times storing and judging a run of N results in N/batch calls of
   `POST /api/v1/runs/{id}/results` (the whole HTTP API stack in-process,
   Django's test client: no network), then a second run the same way.
   Goal: < 5 s for the whole run.
3. Times `GET /api/v1/runs/{id}` (the summary with every result) and
   `GET /api/v1/runs/{id}/compare?to=` (median of --reads). Goal: < 300 ms each.
4. Baselines in the same run: one batch stored with one ORM save per result
   (scaled to N), and the summary computed from model instances (every result
   and item loaded as objects, counted in Python).
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

DATABASE = "denoise_bench_evals"
TAGS = [f"tag-{i:02d}" for i in range(20)]


def make_items(n: int, rng: random.Random) -> list[dict]:
    items = []
    for i in range(n):
        kind = ("number", "percentages", "label", "exact")[i % 4]
        expected = {
            "number": round(rng.uniform(0, 20000), 2),
            "percentages": {"mail": 50, "chat": 30, "phone": 20},
            "label": rng.choice(["refund", "delivery", "login", "cancel"]),
            "exact": {"order": f"A-{i}", "items": [i % 7, i % 11]},
        }[kind]
        items.append({"id": f"case-{i:05d}", "input": {"question": f"question {i}"}, "expected": expected,
                      "kind": kind, "tags": rng.sample(TAGS, 2), "origin": rng.choice(["production", "synthetic"])})
    return items


def make_results(items: list[dict], rng: random.Random, fail_share: float) -> list[dict]:
    results = []
    for item in items:
        actual = item["expected"]
        if rng.random() < fail_share:
            actual = {"number": 1e9, "percentages": {"mail": 97}, "label": "other", "exact": {"order": "x"}}[
                item["kind"]]
        elif item["kind"] == "number":
            actual = item["expected"] * 1.001
        results.append({"item_id": item["id"], "actual": actual, "trace_id": f"eval-{item['id']}",
                        "latency_ms": rng.uniform(100, 2000), "escalated": rng.random() < 0.1})
    return results


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    with scratch_django(DATABASE, keep=args.keep):
        from django.conf import settings
        from rest_framework.test import APIClient

        from evals.judge import judge
        from evals.models import Dataset, Item, Result, Run
        from tenancy.models import Project

        settings.ALLOWED_HOSTS = ["*"]
        project = Project.objects.create(slug="bench")
        _, key = project.issue_api_key()
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        rng = random.Random(7)
        items = make_items(args.items, rng)

        def post(path, body, expect):
            response = api.post(path, body, format="json")
            assert response.status_code == expect, response.content[:500]
            return response

        post("/api/v1/datasets", {"name": "bench"}, 201)
        load_s = timed(lambda: [post("/api/v1/datasets/bench/items", {"items": items[i: i + args.batch]}, 200)
                                for i in range(0, len(items), args.batch)])

        def analyze():
            # What autovacuum does for a live table; a fresh scratch table has no statistics.
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute("ANALYZE evals_item")
                cursor.execute("ANALYZE evals_result")

        analyze()

        def store_run(results) -> tuple[int, float]:
            run_id = post("/api/v1/runs", {"dataset": "bench", "name": "bench"}, 201).json()["id"]
            seconds = timed(lambda: [post(f"/api/v1/runs/{run_id}/results",
                                          {"results": results[i: i + args.batch]}, 207)
                                     for i in range(0, len(results), args.batch)])
            post(f"/api/v1/runs/{run_id}/finish", None, 200)
            return run_id, seconds

        first, first_s = store_run(make_results(items, rng, 0.2))
        second, second_s = store_run(make_results(items, rng, 0.15))
        analyze()

        def median_ms(path) -> float:
            samples = []
            for _ in range(args.reads):
                started = time.perf_counter()
                response = api.get(path)
                samples.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.content[:500]
            return statistics.median(samples)

        summary_ms = median_ms(f"/api/v1/runs/{second}")
        compare_ms = median_ms(f"/api/v1/runs/{second}/compare?to={first}")
        summary = api.get(f"/api/v1/runs/{second}").json()
        compared = api.get(f"/api/v1/runs/{second}/compare?to={first}").json()

        # Baseline: one ORM save per result, one batch, scaled to the whole run.
        baseline_run = Run.objects.create(project=project, dataset=Dataset.objects.get(name="bench"),
                                          dataset_version=1)
        sample = make_results(items[: args.batch], rng, 0.2)
        by_id = {item["id"]: item for item in items}

        def naive_store():
            for result in sample:
                item = by_id[result["item_id"]]
                verdict = judge(item["kind"], item["expected"], result["actual"], None)
                Result.objects.create(project_id=baseline_run.project_id, run=baseline_run, item_id=result["item_id"], actual=result["actual"],
                                      passed=verdict.passed, detail=verdict.detail, trace_id=result["trace_id"],
                                      latency_ms=result["latency_ms"], escalated=result["escalated"])

        naive_store_s = timed(naive_store) * (len(items) / args.batch)

        def naive_summary():
            run = Run.objects.get(pk=second)
            rows = list(Item.objects.filter(dataset=run.dataset, until__isnull=True))
            results = list(Result.objects.filter(run=run))
            passed = {r.item_id for r in results if r.passed}
            return len(passed) / len(rows), [(r.item_id, r.actual, r.detail) for r in results]

        naive_summary_ms = statistics.median(timed(naive_summary) * 1000 for _ in range(max(3, args.reads // 3)))

    n = len(items)
    print(f"evaluation bench: {n:,} items, runs of {n:,} results in {n // args.batch} batches of {args.batch:,}")
    print(f"  truth set loaded (items API)      {load_s:7.2f} s")
    print(f"  run stored + judged (first run)   {first_s:7.2f} s   {n / first_s:9,.0f} results/s   goal < 5 s")
    print(f"  run stored + judged (second run)  {second_s:7.2f} s   {n / second_s:9,.0f} results/s")
    print(f"  baseline: one ORM save per result {naive_store_s:7.2f} s   (1 batch timed, scaled)  "
          f"ratio {naive_store_s / second_s:5.1f}x")
    print(f"  GET run summary (median)          {summary_ms:7.1f} ms  goal < 300 ms   "
          f"accuracy {summary['accuracy']:.3f}, {len(summary['results']):,} results listed")
    print(f"  baseline: summary from instances  {naive_summary_ms:7.1f} ms  ratio {naive_summary_ms / summary_ms:5.2f}x")
    print(f"  GET compare (median)              {compare_ms:7.1f} ms  goal < 300 ms   "
          f"fixed {len(compared['fixed']):,}, broken {len(compared['broken']):,}, "
          f"still failing {len(compared['still_failing']):,}")
    print(f"  (machine: {os.cpu_count()} cores, shared with other work; ratios are same-run)")


if __name__ == "__main__":
    main()

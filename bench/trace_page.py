#!/usr/bin/env python
"""The trace page's graph endpoint vs the API's trace read, for one big trace.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/trace_page.py [--nodes 5000] [--runs 40]

1. Creates a scratch database (`denoise_bench_trace_page` on the server of
   DATABASE_URL), migrates it, and ingests one trace of N nodes (1-3 parents
   each among the previous 300, 2% of nodes also consuming a node of another
   trace, some fused, some without a confidence) through the ingest module.
2. Times, server-side and in-process (middleware, view, queries, layout and JSON
   encoding; no network), `GET /p/<slug>/traces/<id>/graph.json` for a
   signed-in member and `GET /api/v1/traces/<id>` for an API key, interleaved.
3. Prints the median and p95 of both and the ratio of the medians, plus the
   layout's own share. The target: graph.json under 300 ms median at 5,000 nodes.
"""

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

SCRATCH = "denoise_bench_trace_page"


def events(count: int, seed: int = 11) -> list[dict]:
    rng = random.Random(seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    out = [{"id": f"ev-x{i}", "type": "node", "timestamp": start.isoformat(),
            "body": {"trace_id": "elsewhere", "product_id": f"x{i}", "agent_id": "other"}} for i in range(20)]
    for i in range(count):
        parents = sorted({f"n{rng.randrange(max(0, i - 300), i)}" for _ in range(rng.randint(1, 3))}) if i >= 30 else []
        if rng.random() < 0.02:
            parents.append(f"x{rng.randrange(20)}")
        body = {"trace_id": "big", "product_id": f"n{i}", "agent_id": f"agent_{i % 17}", "step": f"step_{i % 9}",
                "source_type": ("retrieval", "reasoning", "verification", "tool_call")[i % 4],
                "content": "x" * 200, "parent_ids": parents, "metrics": {"self_consistency_score": rng.random()}}
        if i % 9:
            body["confidence"] = round(rng.random(), 3)
        if i % 53 == 0:
            body["fuse"] = {"decision": "block", "reason": "below threshold", "threshold": 0.5}
        out.append({"id": f"ev-n{i}", "type": "node", "timestamp": (start + timedelta(milliseconds=i)).isoformat(),
                    "body": body})
    return out


def timed(call, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    return samples


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    options = parser.parse_args()

    with scratch_django(SCRATCH, keep=options.keep):
        from django.contrib.auth import get_user_model
        from django.test import Client
        from rest_framework.test import APIClient

        from provenance import explorer
        from provenance.ingest import ingest_events
        from provenance.models import Project, Trace

        project = Project.objects.create(slug="bench", name="bench")
        _, key = project.issue_api_key()
        batch = events(options.nodes)
        for start in range(0, len(batch), 1000):
            result = ingest_events(project, batch[start:start + 1000])
            assert not result.errors, result.errors[:3]
        user = get_user_model().objects.create_user("bench")
        project.members.add(user)
        page, api = Client(), APIClient()
        page.force_login(user)
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

        def graph():
            response = page.get("/p/bench/traces/big/graph.json")
            assert response.status_code == 200
            return response

        def trace():
            response = api.get("/api/v1/traces/big")
            assert response.status_code == 200
            return response

        size = len(graph().content)
        assert len(trace().json()["nodes"]) == options.nodes
        for _ in range(3):
            graph(), trace()
        graph_ms, api_ms = [], []
        for _ in range(options.runs):
            graph_ms += timed(graph, 1)
            api_ms += timed(trace, 1)
        big = Trace.objects.get(project=project, trace_id="big")
        layout_ms = timed(lambda: explorer.graph(project, big), 5)

        print(f"trace of {options.nodes} nodes, {options.runs} runs each, payload {size / 1024:.0f} KiB")
        print(f"GET graph.json       median {statistics.median(graph_ms):7.1f} ms   p95 {p95(graph_ms):7.1f} ms")
        print(f"GET /api/v1/traces/  median {statistics.median(api_ms):7.1f} ms   p95 {p95(api_ms):7.1f} ms")
        print(f"ratio graph.json / API (medians): {statistics.median(graph_ms) / statistics.median(api_ms):.2f}")
        print(f"  of which explorer.graph (queries + layout): median {statistics.median(layout_ms):.1f} ms")
        verdict = "meets" if statistics.median(graph_ms) < 300 else "MISSES"
        print(f"target: graph.json median < 300 ms at 5,000 nodes: {verdict}")


if __name__ == "__main__":
    main()

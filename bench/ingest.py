#!/usr/bin/env python
"""Ingest throughput through the HTTP API vs a raw COPY of the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/ingest.py [--nodes 100000] [--keep]

1. Starts the API in its production shape (`manage.py serve --workers 2`, or
   gunicorn's sync workers with --server gunicorn) on a scratch database of its
   own (`denoise_bench_ingest_<pid>_<random>`, so two runs never collide;
   dropped at the end unless --keep), posts N nodes (traces of 20 nodes, 1-3 parents each, ~300-byte
   content, ~200-byte metadata, a duration, a model and token usage: the
   project has prices, so ingest computes the cost) in batches of 1,000 from
   2 concurrent clients.
2. COPYs the same node rows into a scratch table shaped like the node table
   (same columns and indexes) in the same database.
3. Prints nodes/s for both and their ratio; then the first
   `GET /api/v1/root-causes` over the load's window, which refreshes the
   stored root causes every batch marked pending (the ingest leaves that to
   the first reader, or the minutely catch-up: provenance.root_causes.pending),
   and the same read once settled; then the median latency of the trace,
   root-cause and impact reads for a 5,000-node trace.
"""

import argparse
import http.client
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

BATCH = 1000
TRACE_SIZE = 20
# Every node carries a duration, a model and usage; two of the three models are
# priced, so ingest computes most costs and leaves the rest unpriced.
MODELS = ("fake-llm-small", "fake-llm-large", "fake-llm-unpriced")
PRICES = {"fake-llm-small": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
          "fake-llm-large": {"input_per_mtok": 2.5, "output_per_mtok": 10.0}}


# The agents and steps of the generated traces, position by position (bench/scale.py's alert rules filter by them).
AGENTS = [f"agent_{position}" for position in range(6)]
STEPS = ["intent", "entity_extraction", "retrieval", "reasoning", "verification", "summary"]

def make_events(count: int, seed: int = 7, prefix: str = "b", first: int = 0, start: datetime | None = None,
                spacing: timedelta = timedelta(seconds=1)) -> list[dict]:
    """Nodes `first` to `first + count` of a load of 20-node traces, node i at
    `start + i * spacing` (bench/scale.py generates its load in pieces)."""
    rng = random.Random(seed + first)
    start = start or datetime(2026, 11, 1, tzinfo=UTC)
    events = []
    for i in range(first, first + count):
        trace, position = divmod(i, TRACE_SIZE)
        product = f"{prefix}-{trace}-{position}"
        parents = (
            [f"{prefix}-{trace}-{p}" for p in rng.sample(range(position), min(position, rng.randint(1, 3)))]
            if position
            else []
        )
        events.append(
            {
                "id": f"ev-{product}",
                "type": "node",
                "timestamp": (start + i * spacing).isoformat(),
                "body": {
                    "trace_id": f"{prefix}-trace-{trace}",
                    "product_id": product,
                    "agent_id": AGENTS[position % 6],
                    "step": STEPS[position % 6],
                    "source_type": "reasoning",
                    "content": "".join(rng.choices("abcdefghij klmnop", k=300)),
                    "confidence": round(rng.random(), 3),
                    "parent_ids": parents,
                    "round": 1 + position // 10,
                    "metrics": {"self_consistency_score": round(rng.random(), 3)},
                    "metadata": {"notes": "x" * 150},
                    "duration_ms": round(rng.uniform(200, 4000), 1),
                    "model": MODELS[position % len(MODELS)],
                    "usage": {"input_tokens": rng.randint(100, 4000), "output_tokens": rng.randint(10, 900)},
                },
            }
        )
    return events


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(db_url: str, port: int, kind: str, workers: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": db_url, "DJANGO_SETTINGS_MODULE": "denoise_dashboard.settings",
           "EMBEDDED_SCHEDULER": "0"}
    env.pop("REDIS_URL", None)
    if kind == "serve":
        command = [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}", "--workers", str(workers)]
    else:
        command = [sys.executable, "-m", "gunicorn", "denoise_dashboard.wsgi", "-w", str(workers),
                   "-b", f"127.0.0.1:{port}", "--log-level", "warning", "--timeout", "120"]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(450):  # a loaded machine boots workers slowly
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/api/v1/traces")
            conn.getresponse().read()
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("server did not start")


def post_batches(port: int, key: str, bodies: list[bytes], clients: int = 2) -> float:
    queue = list(enumerate(bodies))
    lock = threading.Lock()
    failures = []

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if not queue:
                    return
                _, body = queue.pop()
            conn.request("POST", "/api/v1/ingest", body,
                         {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            response = conn.getresponse()
            payload = response.read()
            if response.status != 207 or b'"errors":[]' not in payload.replace(b" ", b""):
                failures.append(payload[:300])

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"ingest failed: {failures[0]!r}")
    return elapsed


def copy_baseline(db_url: str, events: list[dict]) -> float:
    """COPY the same node and edge rows into tables shaped like the node and
    edge tables (same columns, defaults and indexes), one COPY per table per
    batch: the floor any ingest path stands on."""
    import psycopg

    with psycopg.connect(db_url, autocommit=True) as conn:
        create_copy_tables(conn)
        elapsed = copy_rows(conn, events)
        drop_copy_tables(conn)
    return elapsed


def create_copy_tables(conn) -> None:
    for table in ("node", "edge"):
        conn.execute(f"DROP TABLE IF EXISTS bench_copy_{table}")
        conn.execute(f"CREATE TABLE bench_copy_{table} (LIKE provenance_{table} INCLUDING ALL)")


def drop_copy_tables(conn) -> None:
    for table in ("node", "edge"):
        conn.execute(f"DROP TABLE IF EXISTS bench_copy_{table}")


def copy_rows(conn, events: list[dict]) -> float:
    """COPYs `events`' node and edge rows into the bench_copy tables, a COPY per
    table per batch; returns the seconds the COPYs took (building rows apart)."""
    from provenance.ingest.write import NODE_COLUMNS

    project_id = conn.execute("SELECT id FROM provenance_project LIMIT 1").fetchone()[0]
    trace_id = conn.execute("SELECT id FROM provenance_trace LIMIT 1").fetchone()[0]
    now = datetime.now(UTC)
    nodes, edges = [], []
    for e in events:
        if e["type"] != "node":
            continue
        b = e["body"]
        product = "c" + b["product_id"]
        values = {
            "project_id": project_id, "trace_id": trace_id, "product_id": product, "event_id": e["id"],
            "agent_id": b["agent_id"], "step": b["step"], "source_type": b["source_type"],
            "content": b["content"], "raw_input": "", "confidence": b["confidence"],
            "confidence_raw": b["confidence"], "confidence_scale": 1.0, "round": b["round"], "is_error": False,
            "fuse_state": 0, "metrics": json.dumps(b["metrics"]), "metadata": json.dumps(b["metadata"]),
            "timestamp": e["timestamp"], "received_at": now, "retry_of": "", "attempt": None,
            "duration_ms": b["duration_ms"], "model": b["model"], "input_tokens": b["usage"]["input_tokens"],
            "output_tokens": b["usage"]["output_tokens"], "cost_usd": None,
        }
        nodes.append(tuple(values[c] for c in NODE_COLUMNS))
        edges.append([(project_id, trace_id, product, "c" + parent, position)
                      for position, parent in enumerate(b["parent_ids"])])
    node_columns = ", ".join(NODE_COLUMNS)
    edge_columns = "project_id, trace_id, child_product_id, parent_product_id, position"
    started = time.perf_counter()
    with conn.cursor() as cur:
        for i in range(0, len(nodes), BATCH):
            with conn.transaction():
                with cur.copy(f"COPY bench_copy_node ({node_columns}) FROM STDIN") as copy:
                    for row in nodes[i : i + BATCH]:
                        copy.write_row(row)
                with cur.copy(f"COPY bench_copy_edge ({edge_columns}) FROM STDIN") as copy:
                    for batch_edges in edges[i : i + BATCH]:
                        for row in batch_edges:
                            copy.write_row(row)
    return time.perf_counter() - started


def read_latencies(port: int, key: str, trace_id: str, final: str, root: str, runs: int = 25) -> dict[str, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    paths = {
        "trace": f"/api/v1/traces/{trace_id}",
        "root-cause": f"/api/v1/traces/{trace_id}/nodes/{final}/root-cause",
        "impact": f"/api/v1/traces/{trace_id}/nodes/{root}/impact",
    }
    result = {}
    for name, path in paths.items():
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
            response = conn.getresponse()
            response.read()
            samples.append(time.perf_counter() - started)
            assert response.status == 200, (path, response.status)
        result[name] = statistics.median(samples) * 1000
    return result


def aggregate_reads(port: int, key: str, runs: int = 5) -> tuple[float, float]:
    """Seconds of the first `GET /api/v1/root-causes` over the load's window and
    the median of the next `runs`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    samples = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        conn.request("GET", "/api/v1/root-causes?start=2026-10-01T00:00:00Z&end=2026-12-01T00:00:00Z",
                     headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        response.read()
        samples.append(time.perf_counter() - started)
        assert response.status == 200, response.status
    return samples[0], statistics.median(samples[1:])


def big_trace_events(size: int) -> list[dict]:
    """One trace of `size` nodes: a wide DAG with 1-3 parents each, some fused."""
    rng = random.Random(11)
    start = datetime(2026, 11, 2, tzinfo=UTC)
    events = []
    for i in range(size):
        parents = [f"big-{p}" for p in rng.sample(range(i), min(i, rng.randint(1, 3)))] if i else []
        body = {"trace_id": "big-trace", "product_id": f"big-{i}", "agent_id": f"agent_{i % 7}",
                "confidence": round(0.3 + 0.7 * rng.random(), 3), "parent_ids": parents, "content": "x" * 100}
        if rng.random() < 0.02:
            body["fuse"] = {"decision": "block", "reason": "low", "threshold": 0.5}
        events.append({"id": f"ev-big-{i}", "type": "node", "timestamp": (start + timedelta(seconds=i)).isoformat(),
                       "body": body})
    return events


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--server", choices=["serve", "gunicorn"], default="serve")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trace-size", type=int, default=5000)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    args.port = args.port or free_port()
    with scratch_django(f"denoise_bench_ingest_{os.getpid()}_{secrets.token_hex(3)}", keep=args.keep) as db_url:
        from tenancy.models import Project

        # (A tree from before the price table is benched with the same events, which it ignores in part.)
        priced = {"prices": PRICES} if any(f.name == "prices" for f in Project._meta.get_fields()) else {}
        project = Project.objects.create(slug="bench", **priced)
        _, key = project.issue_api_key()
        run(args, db_url, key)


def run(args, db_url: str, key: str) -> None:
    events = make_events(args.nodes)
    bodies = [json.dumps({"batch": events[i : i + BATCH]}).encode() for i in range(0, len(events), BATCH)]
    server = start_server(db_url, args.port, args.server, args.workers)
    try:
        # Warm up: connections, pools, first-request imports.
        post_batches(args.port, key, [json.dumps({"batch": make_events(200, prefix="warm")}).encode()])
        api_seconds = post_batches(args.port, key, bodies)
        copy_seconds = copy_baseline(db_url, events)
        api_rate, copy_rate = args.nodes / api_seconds, args.nodes / copy_seconds
        shape = "manage.py serve" if args.server == "serve" else "gunicorn (sync)"
        print(f"nodes: {args.nodes} in batches of {BATCH}, 2 concurrent clients, {shape} with {args.workers} workers")
        print(f"API ingest:  {api_rate:10.0f} nodes/s ({api_seconds:.2f} s)")
        print(f"raw COPY:    {copy_rate:10.0f} nodes/s ({copy_seconds:.2f} s)")
        print(f"ratio API/COPY: {api_rate / copy_rate:.2f}  (goal >= 0.5, issue 28)")

        first, settled = aggregate_reads(args.port, key)
        print(f"GET /api/v1/root-causes after the load: first {first:.2f} s (refreshes the {args.nodes // TRACE_SIZE} "
              f"traces the ingest marked), then median {settled * 1000:.1f} ms")

        big = big_trace_events(args.trace_size)
        post_batches(args.port, key, [json.dumps({"batch": big[i : i + BATCH]}).encode()
                                      for i in range(0, len(big), BATCH)], clients=1)
        latencies = read_latencies(args.port, key, "big-trace", f"big-{args.trace_size - 1}", "big-0")
        for name, ms in latencies.items():
            print(f"{args.trace_size}-node trace, {name:>10}: median {ms:7.1f} ms")
        print(f"root-cause goal < 100 ms median: {'met' if latencies['root-cause'] < 100 else 'NOT met'}")
    finally:
        server.terminate()
        server.wait(10)

if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""The policy read agents poll, and the SDK's degrade ladder's own cost.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/policy.py \
        [--requests 2000] [--projects 2000] [--versions 20] [--calls 20000]

1. Creates a scratch database (`denoise_bench_policy` on the server of
   DATABASE_URL), migrates it, and stores `--versions` policy versions for each
   of `--projects` projects, so the version probe runs against a real index.
2. Serves the app with `manage.py serve` (the production server, one worker)
   on a free loopback port; two concurrent clients (one keep-alive connection
   each) send `GET /api/v1/policy`, first plain (200 with the document), then
   with `If-None-Match` set to the current ETag (304). Prints the median and
   p95 latency of each and the ratio.
3. In-process, the database time of the 304 path: every statement the view
   runs is timed (a connection execute wrapper), per request; median and p95,
   and the statements it runs.
4. `denoiseflow.guard()` against a bare call of the same producer, on a policy
   fetched from the server, when no retry happens: with a recorder that
   discards events (the ladder's own cost; the goal is under 50 µs), and with
   a real recorder whose transport answers at once (encoding and buffering,
   no network), beside record() of the same node alone, in the same run.
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

SCRATCH = "denoise_bench_policy"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def populate(projects: int, versions: int):
    from policy.document import default_profiles
    from policy.models import PolicyVersion
    from tenancy.models import Project

    made = Project.objects.bulk_create([Project(slug=f"bench-{i}") for i in range(projects)])
    rows = []
    for project in made:
        for version in range(1, versions + 1):
            profiles = default_profiles()
            profiles["default"]["by_agent_type"] = {f"agent_{k}": {"accept": 0.8, "block": 0.3 + k / 100}
                                                    for k in range(20)}
            rows.append(PolicyVersion(project=project, version=version, profiles=profiles, note=f"v{version}"))
    PolicyVersion.objects.bulk_create(rows, batch_size=5000)
    project = made[len(made) // 2]
    _, key = project.issue_api_key()
    return project, key


def serve(url: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": url, "EMBEDDED_SCHEDULER": "0", "API_RATE_LIMIT": "0"}
    env.pop("REDIS_URL", None)
    process = subprocess.Popen([sys.executable, "manage.py", "serve", f"127.0.0.1:{port}", "--workers", "1"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start")


def hammer(port: int, key: str, requests: int, etag: str | None) -> list[float]:
    """Two clients at once, `requests` each; the latency of every request, in seconds."""
    latencies: list[float] = []
    lock = threading.Lock()
    headers = {"Authorization": f"Bearer {key}"}
    if etag:
        headers["If-None-Match"] = etag
    expected = 304 if etag else 200

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        for _ in range(requests):
            started = time.perf_counter()
            connection.request("GET", "/api/v1/policy", headers=headers)
            response = connection.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            assert response.status == expected, response.status
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def database_time_of_304(key: str, etag: str, runs: int) -> tuple[list[float], list[str]]:
    from django.db import connection
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_IF_NONE_MATCH=etag)
    per_request, statements = [], []
    spent = [0.0]

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent[0] += time.perf_counter() - started
            statements.append(sql)

    client.get("/api/v1/policy")  # warm: the key's last-used stamp, the URLconf
    with connection.execute_wrapper(timed):
        for _ in range(runs):
            spent[0], statements[:] = 0.0, []
            assert client.get("/api/v1/policy").status_code == 304
            per_request.append(spent[0])
    return per_request, list(statements)


def execution_and_round_trip(project_pk: int, key: str, runs: int) -> tuple[float, float, float]:
    """Median server-side execution time (EXPLAIN ANALYZE) of the two
    statements of the 304 path, in µs, and of a bare `SELECT 1` round trip
    from Python measured the same way as the 304 path's statements."""
    import json as jsonlib

    from django.db import connection

    from tenancy.models import hash_api_key

    statements = [
        ("SELECT id, project_id FROM provenance_apikey WHERE key_hash = %s AND revoked_at IS NULL LIMIT 1",
         [hash_api_key(key)]),
        ("SELECT version FROM policy_policyversion WHERE project_id = %s ORDER BY version DESC LIMIT 1",
         [project_pk]),
    ]
    executions = []
    with connection.cursor() as cursor:
        for _ in range(runs):
            total = 0.0
            for sql, params in statements:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = cursor.fetchone()[0]
                plan = jsonlib.loads(plan) if isinstance(plan, str) else plan
                total += plan[0]["Execution Time"] + plan[0].get("Planning Time", 0.0)
            executions.append(total * 1000)
        trips = []
        for _ in range(runs):
            started = time.perf_counter()
            cursor.execute("SELECT 1")
            cursor.fetchone()
            trips.append((time.perf_counter() - started) * 1e6)
    return statistics.median(executions), percentile(executions, 0.95), statistics.median(trips)


def guard_overhead(server: str, key: str, calls: int) -> dict:
    """CPU microseconds per call (best of 5): a bare producer call; guard() with a recorder
    that drops events (the ladder's own logic); recording the same node with
    record() alone (the SDK's unavoidable cost, same run); guard() in full."""
    import denoiseflow
    from denoiseflow import ConfidenceFuse, Output, PolicyClient, Recorder
    from denoiseflow.transport import Reply

    class Instant:
        def post(self, url, body, headers):
            return Reply(207, {}, b'{"successes": [], "errors": []}')

    class Discard:
        def emit(self, *args, **kwargs):
            return True

    recorder = Recorder(server, key, transport=Instant(), max_buffer=20 * calls)
    client = PolicyClient(server, key)
    fuse = ConfidenceFuse.from_policy(client=client)
    assert client.get().source == "server"
    output = Output("a fragment", 0.93)

    def produce(feedback):
        return output

    def timed(call) -> float:
        # The calling thread's CPU time: what the agent pays, not the scheduler's queue on a loaded machine.
        started = time.thread_time()
        for _ in range(calls):
            call()
        return (time.thread_time() - started) / calls * 1e6

    runs = {
        "bare producer call": lambda: produce(None),
        "guard(), events discarded": lambda: denoiseflow.guard(
            produce, consumer="reasoning", trace_id="t1", agent_id="agent_3", step="retrieval", fuse=fuse,
            recorder=Discard()),
        "record() of the node alone": lambda: recorder.record("t1", "agent_3", "a fragment", step="retrieval",
                                                              confidence=0.93, round=1),
        "guard(), recorded": lambda: denoiseflow.guard(
            produce, consumer="reasoning", trace_id="t1", agent_id="agent_3", step="retrieval", fuse=fuse,
            recorder=recorder),
    }
    found = {}
    for name, call in runs.items():
        timed(call)  # warm
        found[name] = min(timed(call) for _ in range(5))
    recorder.flush(timeout=60)
    found["stats"] = recorder.stats()
    recorder.close(timeout=1)
    client.close()
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per client and kind")
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument("--versions", type=int, default=20, help="policy versions per project")
    parser.add_argument("--calls", type=int, default=20000, help="guard() calls per timing")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    with scratch_django(SCRATCH, keep=args.keep) as url:
        from django.db import connection

        project, key = populate(args.projects, args.versions)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        print(f"{args.projects} projects x {args.versions} policy versions stored")
        port = free_port()
        process = serve(url, port)
        try:
            server = f"http://127.0.0.1:{port}"
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            probe.request("GET", "/api/v1/policy", headers={"Authorization": f"Bearer {key}"})
            reply = probe.getresponse()
            body, etag = json.loads(reply.read()), reply.getheader("ETag")
            probe.close()
            print(f"policy version {body['version']}, ETag {etag}, document {len(json.dumps(body))} bytes")
            hammer(port, key, 100, None)  # warm the worker
            full = hammer(port, key, args.requests, None)
            cached = hammer(port, key, args.requests, etag)
            for label, values in (("GET (200, document)", full), ("GET If-None-Match (304)", cached)):
                print(f"{label:28s} median {statistics.median(values) * 1000:6.2f} ms  "
                      f"p95 {percentile(values, 0.95) * 1000:6.2f} ms  ({len(values)} requests, 2 clients)")
            print(f"304 vs 200 median: {statistics.median(full) / statistics.median(cached):.2f}x faster")

            spent, statements = database_time_of_304(key, etag, 2000)
            print(f"database time of the 304 path: median {statistics.median(spent) * 1e6:.0f} µs, "
                  f"p95 {percentile(spent, 0.95) * 1e6:.0f} µs, {len(statements)} statements:")
            for sql in statements:
                print(f"    {sql[:150]}")
            executed, executed_p95, trip = execution_and_round_trip(project.pk, key, 500)
            print(f"  of which PostgreSQL's own work (EXPLAIN ANALYZE, planning + execution of both): "
                  f"median {executed:.0f} µs, p95 {executed_p95:.0f} µs; a bare SELECT 1 round trip, same run: "
                  f"median {trip:.0f} µs (the 304 path is {statistics.median(spent) * 1e6 / trip:.1f} round trips)")
            print(f"goal: well under 1 ms of database time: {'met' if executed < 500 else 'MISSED'} "
                  f"(server-side work); wall time of the statements is round trips on this loaded machine")

            found = guard_overhead(server, key, args.calls)
            stats = found.pop("stats")
            for name, micros in found.items():
                print(f"{name:28s} {micros:8.2f} µs per call")
            own = found["guard(), events discarded"] - found["bare producer call"]
            above = found["guard(), recorded"] - found["record() of the node alone"] - found["bare producer call"]
            print(f"the ladder's own overhead {own:.1f} µs; guard() beyond recording its node {above:.1f} µs "
                  f"(goal < 50 µs: {'met' if own < 50 else 'MISSED'}); recorder: {stats['sent']} events sent, "
                  f"{stats['dropped']} dropped")
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        finally:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""A project at full scale: N nodes over 90 days ingested through the HTTP API,
then every read, job and operation that has a goal, timed on that data.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/scale.py --nodes 100000   # ~3 min
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/scale.py                  # 10M, see below

The full size is the default (10,000,000 nodes):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x nohup .venv/bin/python bench/scale.py > scale.log 2>&1 &

Run it alone on the machine. At 10M on a quiet 2-core machine (2026-12-07)
it took 52.6 minutes: the ingest 448 s, generating the events 398 s, the COPY
baseline 215 s, the drain and rollup refresh after each slice ~22 min, then
the reads, tick, health check, dump and restore and retention ~11 min.
Disk: the database reached 17.7 GB and the COPY twins 12.1 GB (dropped after
the ingest), and the restored copy is as large again as the database, so have
~50 GB free. `--no-copy` skips the baseline and the twins; `--keep` keeps the
scratch database afterwards. docs/scaling.md has the figures.

1. Starts `manage.py serve --workers 2` on a scratch database of its own
   (`denoise_bench_scale_<pid>_<random>`, dropped at the end unless --keep)
   and posts the load in batches of 1,000 from 2 concurrent clients: bench/
   ingest.py's 20-node traces (1-3 parents, ~300-byte content, durations, three
   models and token usage, priced), timestamps spread evenly over the last
   --days days ending now, a confidence mix (8% none, 12% below 0.3 and mostly
   blocked, 15% 0.3-0.5 and mostly downweighted, the rest above), the last
   node of each trace its final answer, a fifth of the traces reviewed. The
   load is generated --chunk nodes at a time, then posted; only the posting is
   timed.
2. After each chunk, COPYs the same rows into twins of the node and edge
   tables (bench/ingest.py's baseline) which grow alongside, so each slice of
   the load (--slices, default 10) compares the API with COPY at the same
   table size. Goal: the API's rate over the last slice at least 80% of the
   first slice's. After each slice (not timed with the API) it does what
   the minutely jobs would have done meanwhile: drains the root causes the
   ingest marked pending (provenance.root_causes.pending), then refreshes
   the rollups, each timed, so the table shows whether that work keeps up
   with the ingest as the tables grow. (--rollups-at-end instead drains and
   builds the rollups from nothing once, after the whole load.)
3. Database bytes per node (the COPY twins not counted).
4. Refreshes the rollups (built from nothing with --rollups-at-end), then times every chart and metrics summary over 30 and
   90 days (goal < 1 s each), the trace read, root cause and impact through
   the API (goal < 100 ms median, bench/trace_page.py's), the trace page's
   graph.json, one alert tick with 500 rules (bench/alerts.py's; goal < 2 s),
   GET /metrics (goal < 100 ms, bench/prometheus.py's), the health check (goal
   < 2 min), pg_dump and pg_restore of the database, and the retention job
   (bench/storage.py's; project keeps full text 30 days and traces --trace-days, default 80, so the
   job both summarizes and deletes; goal < 10 min).
5. Peak RSS (VmHWM) of each serve process and of this client.
"""

import argparse
import http.client
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.ingest import (  # noqa: E402
    BATCH,
    PRICES,
    TRACE_SIZE,
    copy_rows,
    create_copy_tables,
    drop_copy_tables,
    free_port,
    make_events,
    post_batches,
    read_latencies,
    start_server,
)
from bench.scratch import drop_database, recreate_database, scratch_django  # noqa: E402

SOURCES = ["user_input", "retrieval", "retrieval", "reasoning", "verification", "tool_call", "summary"]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def vm_hwm_mb(pid: int | str = "self") -> float:
    """Peak resident set of a process, from /proc/<pid>/status."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [pid], [pid]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def load_events(first: int, count: int, total: int, start, span: timedelta) -> list[dict]:
    """Nodes `first` to `first + count` of the load (bench/ingest.py's events,
    reshaped: confidence mix, fuses, source types), and reviews of a fifth of
    the traces that end in this piece."""
    events = make_events(count, prefix="s", first=first, start=start, spacing=span / total)
    rng = random.Random(first)
    out = []
    for event in events:
        body = event["body"]
        position = int(body["product_id"].rsplit("-", 1)[1])
        body["source_type"] = "final_answer" if position == TRACE_SIZE - 1 else SOURCES[position % len(SOURCES)]
        r = rng.random()
        confidence = (
            None
            if r < 0.08
            else round(rng.uniform(0.05, 0.3), 3)
            if r < 0.2
            else round(rng.uniform(0.3, 0.5), 3)
            if r < 0.35
            else round(rng.uniform(0.5, 1.0), 3)
        )
        body["confidence"] = confidence
        if confidence is not None and confidence < 0.5 and rng.random() < 0.7:
            blocked = confidence < 0.3
            body["fuse"] = {
                "decision": "block" if blocked else "downweight",
                "reason": f"confidence below {0.3 if blocked else 0.5}",
                "threshold": 0.3 if blocked else 0.5,
            }
        out.append(event)
        if position == TRACE_SIZE - 1 and rng.random() < 0.2:
            answer_ok = rng.random() < (confidence if confidence is not None else 0.5)
            out.append(
                {
                    "id": f"rv-{body['trace_id']}",
                    "type": "review",
                    "timestamp": event["timestamp"],
                    "body": {"trace_id": body["trace_id"], "verdict": "correct" if answer_ok else "incorrect"},
                }
            )
    return out


def batches(events: list[dict]) -> list[bytes]:
    """Batches of BATCH events (the API's limit): ~990 nodes and their reviews."""
    return [json.dumps({"batch": events[i : i + BATCH]}).encode() for i in range(0, len(events), BATCH)]


def ingest(args, db_url: str, key: str) -> None:
    """Sections 1-2 of the docstring."""
    import psycopg
    from django.utils import timezone

    end = timezone.now()
    span = timedelta(days=args.days)
    start = end - span
    per_slice = -(-args.nodes // args.slices)
    conn = psycopg.connect(db_url, autocommit=True)
    if not args.no_copy:
        create_copy_tables(conn)
    print(
        f"ingest: {args.nodes:,} nodes over {args.days} days in batches of {BATCH}, {args.clients} clients, "
        f"manage.py serve with {args.workers} workers; {args.slices} slices"
    )
    print(f"{'slice':>5} {'nodes':>12} {'API nodes/s':>12} {'COPY nodes/s':>13} {'API/COPY':>9} {'node+edge MB':>13}"
          + ("" if args.rollups_at_end else f" {'drain s':>8} {'traces':>7} {'rollups s':>9} {'rollup nodes/s':>14}"))
    rates, api_total, copy_total, generating = [], 0.0, 0.0, 0.0
    catch_up = {"drain": 0.0, "traces": 0, "rollups": 0.0}
    for number in range(args.slices):
        api_seconds = copy_seconds = 0.0
        first, last = number * per_slice, min(args.nodes, (number + 1) * per_slice)
        for piece in range(first, last, args.chunk):
            count = min(args.chunk, last - piece)
            began = time.perf_counter()
            events = load_events(piece, count, args.nodes, start, span)
            bodies = batches(events)
            generating += time.perf_counter() - began
            api_seconds += post_batches(args.port, key, bodies, clients=args.clients)
            if not args.no_copy:
                copy_seconds += copy_rows(conn, events)
        # What autovacuum does on a server that runs it (it analyzes a table once
        # a tenth of it changed); this machine's server runs without it. Not timed.
        conn.execute("ANALYZE")
        size = conn.execute(
            "SELECT pg_total_relation_size('provenance_node') + pg_total_relation_size('provenance_edge')"
        ).fetchone()[0]
        api_rate = (last - first) / api_seconds
        copy_rate = (last - first) / copy_seconds if copy_seconds else float("nan")
        rates.append(api_rate)
        api_total, copy_total = api_total + api_seconds, copy_total + copy_seconds
        line = (f"{number + 1:5d} {last:12,} {api_rate:12.0f} {copy_rate:13.0f} {api_rate / copy_rate:9.2f} "
                f"{size / 2**20:13,.0f}")
        if not args.rollups_at_end:
            drained, drain_s, rollup_s = run_catch_up()
            catch_up["drain"] += drain_s
            catch_up["traces"] += drained
            catch_up["rollups"] += rollup_s
            line += f" {drain_s:8.1f} {drained:7,} {rollup_s:9.1f} {(last - first) / rollup_s:14,.0f}"
        print(line, flush=True)
    print(
        f"sustained API ingest over the whole load: {args.nodes / api_total:,.0f} nodes/s ({api_total:,.0f} s); "
        f"COPY {args.nodes / copy_total if copy_total else float('nan'):,.0f} nodes/s ({copy_total:,.0f} s); "
        f"generating the events {generating:,.0f} s (not timed)"
    )
    print(
        f"ingest at the end / at the start: {rates[-1] / rates[0]:.2f} (goal >= 0.80): "
        f"{verdict(rates[-1] >= 0.8 * rates[0])}"
    )
    if args.rollups_at_end:
        from provenance.root_causes import pending

        began = time.perf_counter()
        traces = pending.drain_all()
        print(f"root causes the ingest marked pending, refreshed (the catch-up's drain): {traces:,} traces in "
              f"{time.perf_counter() - began:,.1f} s")
    else:
        print(
            f"the minutely jobs' work after each slice, in all: root-cause drain {catch_up['traces']:,} traces in "
            f"{catch_up['drain']:,.0f} s ({catch_up['traces'] / catch_up['drain']:,.0f} traces/s); rollup refresh "
            f"{catch_up['rollups']:,.0f} s ({args.nodes / catch_up['rollups']:,.0f} nodes/s, against the API's "
            f"{args.nodes / api_total:,.0f})"
        )
    copies = 0
    if not args.no_copy:
        copies = conn.execute(
            "SELECT pg_total_relation_size('bench_copy_node') + pg_total_relation_size('bench_copy_edge')"
        ).fetchone()[0]
    conn.execute("VACUUM ANALYZE")
    database, node, edge = conn.execute(
        "SELECT pg_database_size(current_database()), pg_total_relation_size('provenance_node'), "
        "pg_total_relation_size('provenance_edge')"
    ).fetchone()
    if not args.no_copy:
        drop_copy_tables(conn)
    conn.close()
    database -= copies
    print(
        f"database: {database / 2**30:.2f} GB, {database / args.nodes:,.0f} bytes per node (node table "
        f"{node / args.nodes:,.0f}, edge table {edge / args.nodes:,.0f}; COPY twins of {copies / 2**30:.2f} GB "
        f"not counted)"
    )


def run_catch_up() -> tuple[int, float, float]:
    """What the minutely jobs do after ingest (the root-cause drain, then the
    rollup refresh), run between slices so their cost is timed apart from the
    API's: (traces drained, drain seconds, refresh seconds)."""
    from metrics.rollups.refresh import refresh_rollups
    from provenance.root_causes import pending

    began = time.perf_counter()
    traces = pending.drain_all()
    drained = time.perf_counter()
    report = refresh_rollups()
    assert not report.skipped, report
    return traces, drained - began, time.perf_counter() - drained


def timed_ms(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def reads(args, project, key: str) -> None:
    """Section 4 of the docstring, but for the health check and the jobs."""
    from django.test import Client
    from django.utils import timezone

    from bench.metrics import chart_cases, summary_cases
    from metrics.params import ChartParamsSerializer
    from metrics.rollups.refresh import refresh_rollups
    from metrics.values import summary

    began = time.perf_counter()
    report = refresh_rollups()
    built = "built from nothing" if args.rollups_at_end else "refreshed after the load (nothing new)"
    print(f"\nrollups {built}: {time.perf_counter() - began:,.1f} s ({report})")

    print(f"\n{'chart / summary (median of ' + str(args.runs) + ')':50} {'ms':>9}  goal < 1000 ms")
    for days in (30, 90):

        def params(range=f"{days}d", **query):  # noqa: A002 (the query parameter's name)
            serializer = ChartParamsSerializer(data={"range": range, **query})
            serializer.is_valid(raise_exception=True)
            return serializer.validated_data

        for name, build, chart_params in chart_cases(params):
            if days == 90 and "7d" in name:
                continue  # the same 7-day chart as in the 30-day pass
            ms = timed_ms(lambda b=build, p=chart_params: b(project, p, use_rollups=True), args.runs)
            label = name if "7d" in name else f"{name}, {days}d"
            print(f"{label:50} {ms:9.1f}  {verdict(ms < 1000)}")
        now = timezone.now()
        for name, filters in summary_cases():
            window = (now - timedelta(days=days), now)
            ms = timed_ms(lambda n=name, f=filters, w=window: summary(project, n, *w, f), args.runs)
            chosen = ", ".join(f"{k}={v}" for k, v in vars(filters).items() if v and k != "environment")
            label = f"metrics/summary {name}{' (' + chosen + ')' if chosen else ''}, {days}d"
            print(f"{label:50} {ms:9.1f}  {verdict(ms < 1000)}")

    trace = (args.nodes // TRACE_SIZE) // 2
    latencies = read_latencies(args.port, key, f"s-trace-{trace}", f"s-{trace}-{TRACE_SIZE - 1}", f"s-{trace}-0")
    print()
    for name, ms in latencies.items():
        print(f"trace s-trace-{trace} over HTTP, {name:>10}: median {ms:7.1f} ms  goal < 100 ms  {verdict(ms < 100)}")
    from django.conf import settings
    from django.contrib.auth import get_user_model

    settings.ALLOWED_HOSTS = ["*"]
    user = get_user_model().objects.create_user("bench-scale")
    project.members.add(user)
    page = Client()
    page.force_login(user)
    graph = f"/api/v1/traces/s-trace-{trace}/graph?project={project.slug}"
    assert page.get(graph).status_code == 200
    ms = timed_ms(lambda: page.get(graph), args.runs)
    print(f"trace page graph.json, in process:            median {ms:7.1f} ms  goal < 1000 ms  {verdict(ms < 1000)}")

    alert_tick(args, project)

    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)

    def scrape():
        conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status

    scrape()
    settings_note = "(serve's per-project cache as configured)"
    ms = timed_ms(scrape, max(args.runs, 10))
    print(f"GET /metrics over HTTP {settings_note}: median {ms:.1f} ms  goal < 100 ms  {verdict(ms < 100)}")


def alert_tick(args, project) -> None:
    from django.utils import timezone

    from alerts import alert_rules, evaluation
    from alerts.serializers import AlertRuleSerializer
    from bench.alerts import rule_specs
    from bench.ingest import AGENTS, STEPS

    # Filters that name the load's own agents and steps, so a filtered rule has nodes to count.
    for spec in rule_specs(args.rules, agents=AGENTS, steps=STEPS):
        serializer = AlertRuleSerializer(data=spec)
        serializer.is_valid(raise_exception=True)
        alert_rules.create_rule(project, serializer.validated_data)
    now = timezone.now().replace(second=0, microsecond=0)
    ticks = []
    for minute in range(3):
        began = time.perf_counter()
        evaluation.tick(now + timedelta(minutes=minute))
        ticks.append(time.perf_counter() - began)
    worst = max(ticks)
    print(
        f"alert tick, {args.rules} rules: {', '.join(f'{t:.2f}' for t in ticks)} s (slowest {worst:.2f} s)  "
        f"goal < 2 s  {verdict(worst < 2)}"
    )


def jobs(args, project, db_url: str) -> None:
    """The health check, pg_dump/pg_restore and the retention job."""
    from bench.storage import run_job
    from provenance import health

    began = time.perf_counter()
    report = health.check_project(project)
    seconds = time.perf_counter() - began
    print(f"\nhealth check: {seconds:,.1f} s ({report.counts})  goal < 120 s  {verdict(seconds < 120)}")

    with tempfile.TemporaryDirectory(prefix="denoise-bench-scale-") as folder:
        dump = Path(folder) / "project.dump"
        began = time.perf_counter()
        subprocess.run(["pg_dump", "-Fc", "-f", str(dump), db_url], check=True)
        dumped = time.perf_counter() - began
        restore_url = db_url + "_restore"
        recreate_database(restore_url)
        try:
            began = time.perf_counter()
            subprocess.run(["pg_restore", "--no-owner", "-j", "2", "-d", restore_url, str(dump)], check=True)
            restored = time.perf_counter() - began
        finally:
            drop_database(restore_url)
        print(
            f"pg_dump -Fc: {dumped:,.1f} s ({dump.stat().st_size / 2**20:,.0f} MB); pg_restore -j 2: {restored:,.1f} s"
        )

    project.full_content_days = 30
    project.trace_days = args.trace_days
    project.save(update_fields=["full_content_days", "trace_days"])
    seconds, _, out = run_job(project.slug)
    print(
        f"retention job (full text kept 30 days, traces {args.trace_days}): {seconds:,.1f} s ({out})  goal < 600 s  "
        f"{verdict(seconds < 600)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=90, help="the load's timestamps span this many days up to now")
    parser.add_argument("--slices", type=int, default=10, help="ingest rates are reported per slice of the load")
    parser.add_argument("--chunk", type=int, default=50_000, help="nodes generated in memory, then posted, at a time")
    parser.add_argument("--workers", type=int, default=2, help="manage.py serve workers")
    parser.add_argument("--clients", type=int, default=2, help="concurrent posting clients")
    parser.add_argument("--rules", type=int, default=500)
    parser.add_argument(
        "--trace-days",
        type=int,
        default=80,
        help="the retention job deletes traces older than this (the load's oldest)",
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs per read (median)")
    parser.add_argument("--no-copy", action="store_true", help="skip the COPY baseline (half the disk)")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--rollups-at-end",
        action="store_true",
        help="drain root causes and build the rollups once, from nothing, after the whole load (the 1M run's "
        "method) instead of after each slice as the minutely jobs would",
    )
    args = parser.parse_args()
    args.port = args.port or free_port()

    began = time.perf_counter()
    with scratch_django(f"denoise_bench_scale_{os.getpid()}_{secrets.token_hex(3)}", keep=args.keep) as db_url:
        from tenancy.models import Project

        project = Project.objects.create(slug="bench", prices=PRICES)
        _, key = project.issue_api_key()
        server = start_server(db_url, args.port, "serve", args.workers)
        try:
            post_batches(args.port, key, [json.dumps({"batch": make_events(200, prefix="warm")}).encode()])
            ingest(args, db_url, key)
            phase = time.perf_counter()
            reads(args, project, key)
            jobs(args, project, db_url)
            after = time.perf_counter() - phase
            serve = [(pid, vm_hwm_mb(pid)) for pid in descendants(server.pid)]
        finally:
            server.terminate()
            server.wait(30)
        print(
            f"\npeak RSS (VmHWM): serve {', '.join(f'pid {pid} {mb:,.0f} MB' for pid, mb in serve)}; "
            f"this client {vm_hwm_mb():,.0f} MB"
        )
    total = time.perf_counter() - began
    print(f"whole run: {total / 60:,.1f} min (after the ingest: {after / 60:,.1f} min)")


if __name__ == "__main__":
    main()

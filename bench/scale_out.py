#!/usr/bin/env python
"""The product scaled out on one machine: a PostgreSQL primary and a streaming
standby, two `manage.py serve` instances, two Celery workers and beat, under a
sustained mixed load of ingest and reads for --minutes.

    .venv/bin/python bench/scale_out.py [--minutes 10] [--batch 1000] [--ingest-clients 3] [--readers 3]
    .venv/bin/python bench/scale_out.py --minutes 1            # a quick check

It needs the PostgreSQL server binaries (it runs clusters of its own) and Redis
at 127.0.0.1:6379 (the broker, channel layer, rate limits and replica pins). It
never touches the shared server at 5432.

1. Starts a primary cluster (initdb, its own free port) and a hot standby of it
   (pg_basebackup -R), with tests/support/own_postgres.py; migrates the primary
   (`manage.py migrate`); creates a project (priced, as bench/ingest.py's), one
   API key per client and a signed-in viewer for the pages.
2. Starts two `manage.py serve` instances (--serve-workers each), two Celery
   workers (--worker-concurrency each) and one beat, all with DATABASE_URL = the
   primary, DATABASE_REPLICA_URL = the standby and REDIS_URL = a Redis database
   of its own (an empty one unless --redis-db), one shared
   SECRET_KEY (a session signed in on one instance is read on the other).
3. For --minutes: --ingest-clients clients post batches of bench/ingest.py's
   20-node traces (make_events, its own id prefix per client, timestamps an
   hour behind the clock and advancing 1 ms a node), round-robin over the two
   instances; after each acknowledged batch the same client (same key) reads
   the batch's last trace from the OTHER instance and must find every node of
   it posted so far (read-your-writes: the writer is pinned to the primary, the
   pins are shared in Redis). --readers readers cycle through the pages
   (Overview, Cost & latency and their data, traces, a trace and its graph,
   "Why answers go wrong") as a signed-in viewer and the read API (trace list,
   a trace, metrics summary, root causes) with a read key, round-robin over the
   instances, on traces acknowledged more than REPLICA_MAX_LAG + 2 s earlier
   (so a 404 would break the contract, not be a race).
4. Reports requests and errors per kind (any non-2xx, connection error or
   read-your-writes miss; the first bodies), latency p50/p95/p99/max per kind,
   ingest nodes/s sustained, LOST events (every event id acknowledged, checked
   in SQL against the primary's node table), transactions and tuples on each
   cluster (pg_stat_database; the standby's are the replica's reads), replica
   lag sampled every 2 s (pg_stat_replication on the primary, replay age on the
   standby), Celery tasks each worker completed (its log), errors in the
   processes' logs, peak RSS (VmHWM) of every process, and the load average.
   Exits 1 on any error or lost event.

Everything it started (processes, clusters, temporary directory, its Redis
keys) is removed on the way out, Ctrl-C and failures included.
"""

import argparse
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.ingest import PRICES, TRACE_SIZE, make_events  # noqa: E402
from bench.scale import descendants, vm_hwm_mb  # noqa: E402
from tests.support.own_postgres import OwnPostgres, manage  # noqa: E402
from tests.support.serving import Serve, signed_in  # noqa: E402

REDIS = "redis://127.0.0.1:6379"
SLUG = "scaleout"
VIEWER, VIEWER_PASSWORD = "scaleout-viewer", "scaleout-viewer-pw"
REPLICA_MAX_LAG = 10  # the product's default, spelled out: readers wait this + 2 s before reading a trace
PIN_SECONDS = REPLICA_MAX_LAG + 2
SAMPLE_EVERY = 2.0
FIRST_BODIES = 5
# Idle connections are dropped before the server's keep-alive (5 s, denoise_dashboard/serving.py) closes them:
# a request sent on a connection the server is closing fails as a browser would retry it, not as the server did.
LIMITS = httpx.Limits(keepalive_expiry=2.0)
# Tracebacks the product logs as warnings, on purpose (provenance/explorer/live.py).
WARNINGS = ("live update failed",)


# --- what the clients saw ----------------------------------------------------------------------

@dataclass
class Record:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))  # (seconds, sent at)
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    first_errors: list[str] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)  # event ids answered 200/201
    nodes_acknowledged: int = 0
    readable: list[tuple[float, str]] = field(default_factory=list)  # (acknowledged at, trace id)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def took(self, kind: str, seconds: float, sent_at: str = "") -> None:
        with self.lock:
            self.latencies[kind].append(seconds * 1000)
            self.sent[kind].append((seconds, sent_at))

    def failed(self, kind: str, detail: str) -> None:
        with self.lock:
            self.errors[kind] += 1
            if len(self.first_errors) < FIRST_BODIES:
                self.first_errors.append(f"{kind}: {detail[:400]}")

    def settled_trace(self, rng: random.Random) -> str | None:
        """A trace acknowledged long enough ago that the replica must have it, or
        the primary answers (the contract's REPLICA_MAX_LAG)."""
        cutoff = time.monotonic() - PIN_SECONDS
        with self.lock:
            settled = [trace for at, trace in self.readable[-5000:] if at < cutoff]
        return rng.choice(settled) if settled else None


def request(client: httpx.Client, record: Record, kind: str, method: str, url: str, **kwargs):
    """One timed request; a non-2xx answer or a connection error is recorded as
    an error of `kind` and returns None."""
    began, sent_at = time.perf_counter(), datetime.now().strftime("%H:%M:%S")
    try:
        answer = client.request(method, url, **kwargs)
    except httpx.HTTPError as error:
        record.took(kind, time.perf_counter() - began, sent_at)
        record.failed(kind, f"{url}: {type(error).__name__}: {error} (sent at {sent_at}, "
                            f"{time.perf_counter() - began:.0f} s before)")
        return None
    record.took(kind, time.perf_counter() - began, sent_at)
    if not 200 <= answer.status_code < 300:
        record.failed(kind, f"{url}: {answer.status_code} {answer.text}")
        return None
    return answer


def ingest_client(number: int, key: str, servers: list[str], batch: int, start: datetime, record: Record,
                  stop: threading.Event) -> None:
    """Posts batches round-robin; after each, reads its last trace back from the other instance."""
    prefix = f"c{number}"
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(timeout=120, limits=LIMITS) as client:
        sent = 0
        while not stop.is_set():
            events = make_events(batch, seed=number, prefix=prefix, first=sent, start=start,
                                 spacing=timedelta(milliseconds=1))
            turn = sent // batch
            url = servers[(number + turn) % len(servers)]
            answer = request(client, record, "ingest POST /api/v1/ingest", "POST", f"{url}/api/v1/ingest",
                             content=json.dumps({"batch": events}), headers={**auth, "Content-Type": "application/json"})
            sent += batch
            if answer is None:
                continue
            result = answer.json()
            if result.get("errors"):
                record.failed("ingest POST /api/v1/ingest", f"event errors: {result['errors'][:3]}")
            stored = [success["id"] for success in result.get("successes", [])]
            last_trace, _ = divmod(sent - 1, TRACE_SIZE)
            trace_id = f"{prefix}-trace-{last_trace}"
            with record.lock:
                record.acknowledged.extend(stored)
                record.nodes_acknowledged += len(stored)
                record.readable.append((time.monotonic(), trace_id))
            # Read-your-writes, from the other instance: the pin is shared through Redis.
            other = servers[(number + turn + 1) % len(servers)]
            expected = min(TRACE_SIZE, sent - last_trace * TRACE_SIZE)
            seen = request(client, record, "read-your-writes GET /api/v1/traces/{id}", "GET",
                           f"{other}/api/v1/traces/{trace_id}", headers=auth)
            if seen is not None and len(seen.json()["nodes"]) != expected:
                record.failed("read-your-writes GET /api/v1/traces/{id}",
                              f"{trace_id}: {len(seen.json()['nodes'])} nodes of {expected} just acknowledged")


def reads(slug: str, trace_id: str, window: dict[str, str]) -> list[tuple[str, str, str, dict]]:
    """(kind, who, path, params) of one reader's round: pages as the viewer, the API with a read key."""
    return [
        ("page Overview", "session", f"/metrics/{slug}/", {}),
        ("page Overview data", "session", f"/metrics/{slug}/data/overview.json", {}),
        ("page Cost & latency", "session", f"/metrics/{slug}/cost/", {}),
        ("page Cost & latency data", "session", f"/metrics/{slug}/data/cost.json", {}),
        ("page traces", "session", f"/p/{slug}/traces/", {}),
        ("page trace", "session", f"/p/{slug}/traces/{trace_id}/", {}),
        ("page trace graph", "session", f"/api/v1/traces/{trace_id}/graph", {"project": slug}),
        ("page why answers go wrong", "session", f"/p/{slug}/why/", {}),
        ("API GET /api/v1/traces", "key", "/api/v1/traces", {}),
        ("API GET /api/v1/traces/{id}", "key", f"/api/v1/traces/{trace_id}", {}),
        ("API GET /api/v1/metrics/summary", "key", "/api/v1/metrics/summary", {"metric": "confidence", **window}),
        ("API GET /api/v1/root-causes", "key", "/api/v1/root-causes", window),
    ]


def reader(number: int, key: str, servers: list[str], window: dict[str, str], record: Record,
           stop: threading.Event) -> None:
    rng = random.Random(number)
    login = signed_in(servers[number % len(servers)], VIEWER, VIEWER_PASSWORD)
    session = httpx.Client(timeout=120, limits=LIMITS, cookies=login.cookies)
    login.close()
    keyed = httpx.Client(timeout=120, limits=LIMITS, headers={"Authorization": f"Bearer {key}"})
    turn = number
    try:
        while not stop.is_set():
            trace_id = record.settled_trace(rng)
            if trace_id is None:
                time.sleep(0.5)
                continue
            for kind, who, path, params in reads(SLUG, trace_id, window):
                if stop.is_set():
                    return
                turn += 1
                client = session if who == "session" else keyed
                request(client, record, kind, "GET", servers[turn % len(servers)] + path, params=params)
    finally:
        session.close()
        keyed.close()


# --- what the servers did ------------------------------------------------------------------------

def sampler(primary: OwnPostgres, standby: OwnPostgres, samples: dict[str, list[float]], stop: threading.Event):
    """Every SAMPLE_EVERY s: the load average and the replica's lag, seen from both sides."""
    import psycopg

    with psycopg.connect(primary.url, autocommit=True) as on_primary, \
            psycopg.connect(standby.url, autocommit=True) as on_standby:
        while not stop.wait(SAMPLE_EVERY):
            samples["load"].append(os.getloadavg()[0])
            row = on_primary.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), extract(epoch FROM replay_lag) "
                "FROM pg_stat_replication").fetchone()
            if row:
                samples["lag bytes"].append(float(row[0] or 0))
                samples["replay_lag s"].append(float(row[1] or 0))
            else:
                samples["standby not streaming"].append(1)
            # The age of the newest replayed transaction: the lag a reader sees while the primary commits.
            age = on_standby.execute("SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp())").fetchone()
            if age and age[0] is not None:
                samples["replay age s"].append(float(age[0]))


def database_counters(cluster: OwnPostgres) -> dict[str, int]:
    columns = ("xact_commit", "tup_returned", "tup_fetched", "blks_hit", "blks_read")
    values = cluster.sql(f"SELECT {', '.join(columns)} FROM pg_stat_database WHERE datname = current_database()")
    return dict(zip(columns, map(int, values.split("|")), strict=True))


def lost_events(primary: OwnPostgres, project_id: int, acknowledged: list[str]) -> tuple[int, int]:
    """(acknowledged ids missing from the primary's node table, node rows of the project)."""
    import psycopg

    with psycopg.connect(primary.url, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE acknowledged (event_id text PRIMARY KEY)")
        with conn.cursor().copy("COPY acknowledged (event_id) FROM STDIN") as copy:
            for event_id in set(acknowledged):
                copy.write_row((event_id,))
        missing = conn.execute(
            "SELECT count(*) FROM acknowledged a WHERE NOT EXISTS "
            "(SELECT 1 FROM provenance_node n WHERE n.project_id = %s AND n.event_id = a.event_id)",
            [project_id]).fetchone()[0]
        nodes = conn.execute("SELECT count(*) FROM provenance_node WHERE project_id = %s", [project_id]).fetchone()[0]
    return missing, nodes


class Process:
    """A Celery worker or beat: a child process with its log, stopped with SIGTERM (then SIGKILL)."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], folder: Path):
        self.name = name
        self.log = folder / f"{name}.log"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                for pid in descendants(self.process.pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.process.wait(10)


def celery(name: str, *arguments: str, env: dict[str, str], folder: Path) -> Process:
    return Process(name, [sys.executable, "-m", "celery", "-A", "denoise_dashboard", *arguments], env, folder)


def log_errors(path: Path) -> tuple[list[str], int]:
    """Error lines of a process's log, and how many tracebacks came with a warning the product logs on
    purpose (a live update dropped: the data is committed, the open pages miss one push)."""
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    errors, warned, message, at, counted = [], 0, "", -1, -1
    for number, line in enumerate(lines):
        # A chained traceback's parts (the exception lines between them) belong to the message before it.
        if (line and not line[0].isspace() and not line.startswith(("Traceback", "The above", "During handling"))
                and not re.match(r"[\w.]*(Error|Exception|CancelledError)(:|$)", line)):
            message, at = line, number
        if re.search(r"Traceback|\bERROR\b|\bCRITICAL\b| 500 ", line):
            if line.startswith("Traceback") and message.startswith(WARNINGS):
                warned += counted != at
                counted = at
            else:
                errors.append(line)
    return errors, warned


def tasks_done(path: Path) -> dict[str, int]:
    """Tasks a worker's log (level INFO) says succeeded, by name, and failures."""
    done: dict[str, int] = defaultdict(int)
    for line in path.read_text(errors="replace").splitlines():
        if match := re.search(r"Task ([\w.]+)\[[^\]]+\] succeeded", line):
            done[match.group(1)] += 1
        elif re.search(r"Task [\w.]+\[[^\]]+\] (raised|failed)", line):
            done["FAILED"] += 1
    return done


def refreshes(path: Path) -> list[tuple[float, int, str]]:
    """(seconds, new nodes, finished at) of every rollup refresh a worker's log says ran (not skipped)."""
    found = []
    for line in path.read_text(errors="replace").splitlines():
        if match := re.search(r" (\d\d:\d\d:\d\d),\d+: .*refresh_rollups\[[^\]]+\] succeeded in ([\d.]+)s: "
                              r"'(\d+) new node", line):
            found.append((float(match.group(2)), int(match.group(3)), match.group(1)))
    return found


# --- set-up --------------------------------------------------------------------------------------

def free_redis_db(chosen: int | None) -> int:
    """The Redis database this run uses: `chosen`, else an empty one picked at random (not 0, the
    default of everything else; at random, so two runs starting together seldom pick the same)."""
    import redis

    if chosen is not None:
        return chosen
    empty = [number for number in range(1, 16) if redis.Redis.from_url(f"{REDIS}/{number}").dbsize() == 0]
    if not empty:
        raise SystemExit("no empty Redis database: pass --redis-db")
    return random.choice(empty)


def forget_redis(url: str, prefix: str) -> None:
    """This run's keys: its namespace and Celery's queue and bookkeeping in its database."""
    import redis

    client = redis.Redis.from_url(url)
    for pattern in (f"{prefix}*", "celery", "celery*", "_kombu*", "unacked*"):
        keys = list(client.scan_iter(pattern))
        if keys:
            client.delete(*keys)


def clusters(stack: ExitStack) -> tuple[OwnPostgres, OwnPostgres]:
    primary = OwnPostgres()
    stack.callback(primary.destroy)
    with open(primary.data / "postgresql.conf", "a") as conf:
        # Two instances' pools, the workers and beat; WAL kept for a standby that falls behind under load.
        conf.write("max_connections = 300\nwal_keep_size = 4096\n")
    primary.start()
    primary.create_database()
    standby = OwnPostgres(standby_of=primary)
    stack.callback(standby.destroy)
    standby.start()
    return primary, standby


def project_and_keys(database_url: str, clients: int, readers: int) -> tuple[int, list[str], list[str]]:
    """The project, a key per ingest client (ingest and read: it reads its writes back), a read key per
    reader, and the viewer; made by `manage.py shell` on the primary, as an operator would."""
    script = f"""
import json
from django.contrib.auth import get_user_model
from tenancy.models import Membership, Project
project = Project.objects.create(slug={SLUG!r}, name="Scale-out", prices={PRICES!r})
writers = [project.issue_api_key(f"ingest-{{n}}", ["ingest", "read"])[1] for n in range({clients})]
readers = [project.issue_api_key(f"read-{{n}}", ["read"])[1] for n in range({readers})]
user = get_user_model().objects.create_user({VIEWER!r}, password={VIEWER_PASSWORD!r})
Membership.objects.create(project=project, user=user, role="viewer")
print(json.dumps([project.pk, writers, readers]))
"""
    out = manage(database_url, "shell", "-c", script)
    project_id, writers, reader_keys = json.loads(out.strip().splitlines()[-1])
    return project_id, writers, reader_keys


# --- the report ----------------------------------------------------------------------------------

def percentile(ordered: list[float], share: float) -> float:
    """Nearest rank."""
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def report(args, record: Record, seconds: float, lost: int, nodes: int, counters, samples, tasks, rollup_refreshes,
           log_lines, peaks) -> int:
    print(f"\n=== scale-out: {args.minutes} min, 2 serve instances x {args.serve_workers} workers, 2 Celery workers "
          f"x {args.worker_concurrency} + beat, primary + streaming standby; {args.ingest_clients} ingest clients "
          f"(batches of {args.batch}), {args.readers} readers ===")
    print(f"\n{'request kind':<44} {'count':>7} {'errors':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'max ms':>8}")
    total_requests = total_errors = 0
    for kind in sorted(record.latencies):
        ordered = sorted(record.latencies[kind])
        errors = record.errors.get(kind, 0)
        total_requests += len(ordered)
        total_errors += errors
        print(f"{kind:<44} {len(ordered):>7} {errors:>6} {percentile(ordered, .5):>8.0f} "
              f"{percentile(ordered, .95):>8.0f} {percentile(ordered, .99):>8.0f} {ordered[-1]:>8.0f}")
    for kind, errors in record.errors.items():
        if kind not in record.latencies:  # an error no request was timed for (none expected)
            total_errors += errors
    print(f"{'all':<44} {total_requests:>7} {total_errors:>6}   ({total_requests / seconds:.1f} requests/s)")
    if record.first_errors:
        print("first errors:")
        for line in record.first_errors:
            print(f"  {line}")

    print(f"\ningest: {record.nodes_acknowledged:,} nodes acknowledged in {seconds:,.0f} s: "
          f"{record.nodes_acknowledged / seconds:,.0f} nodes/s sustained")
    print(f"LOST events (acknowledged, not in the primary's node table): {lost:,}  "
          f"(node rows of the project: {nodes:,})")

    print(f"\n{'database (pg_stat_database, during the load)':<44} {'commits':>10} {'tuples returned':>16} "
          f"{'tuples fetched':>15}")
    for name, (before, after) in counters.items():
        print(f"{name:<44} {after['xact_commit'] - before['xact_commit']:>10,} "
              f"{after['tup_returned'] - before['tup_returned']:>16,} {after['tup_fetched'] - before['tup_fetched']:>15,}")
    print("(the standby commits only reads: every transaction there is a read the replica served; the primary's "
          "include every write and the pinned writers' reads)")

    def spread(name: str, unit: str, scale: float = 1) -> str:
        values = sorted(samples.get(name, []))
        if not values:
            return f"{name}: no samples"
        return (f"{name}: median {percentile(values, .5) * scale:,.2f}{unit}, p95 {percentile(values, .95) * scale:,.2f}"
                f"{unit}, max {values[-1] * scale:,.2f}{unit} ({len(values)} samples)")

    print("\nreplica lag, every 2 s:")
    print(f"  {spread('replay_lag s', ' s')}  (pg_stat_replication.replay_lag on the primary)")
    print(f"  {spread('lag bytes', ' kB', 1 / 1024)}  (WAL not yet replayed)")
    print(f"  {spread('replay age s', ' s')}  (now - pg_last_xact_replay_timestamp() on the standby)")
    if samples.get("standby not streaming"):
        print(f"  the standby was not streaming at {len(samples['standby not streaming'])} samples")

    print("\nCelery tasks completed (from each worker's log):")
    for name, done in tasks.items():
        listed = ", ".join(f"{task} {count}" for task, count in sorted(done.items())) or "none"
        print(f"  {name}: {sum(c for t, c in done.items() if t != 'FAILED')} ({listed})")
    failed_tasks = sum(done.get("FAILED", 0) for done in tasks.values())
    ran = sorted(refreshed for refreshed in rollup_refreshes if refreshed[1])
    if ran:
        took = sorted(spent for spent, _, _ in ran)
        print(f"  rollup refreshes that folded nodes in: {len(ran)}, {took[0]:.0f}-{took[-1]:.0f} s "
              f"(median {took[len(took) // 2]:.0f} s), {min(n for _, n, _ in ran):,}-{max(n for _, n, _ in ran):,} "
              f"new nodes each; the first finished at {min(at for _, _, at in ran)} (until then every read is raw)")
    slowest = sorted(record.sent.get("page Overview data", []), reverse=True)[:5]
    if slowest:
        print("  the slowest Overview data requests: " + ", ".join(f"{spent:.0f} s sent at {at}" for spent, at in slowest))

    print("\nerror lines in the processes' logs (Traceback, ERROR, CRITICAL, 500):")
    for name, (lines, warned) in log_lines.items():
        note = f" (and {warned} warnings with a traceback: {', '.join(WARNINGS)})" if warned else ""
        print(f"  {name}: {len(lines)}{note}" + "".join(f"\n    {line[:300]}" for line in lines[:3]))
    logged = sum(len(lines) for lines, _ in log_lines.values())

    print("\npeak RSS (VmHWM):")
    for name, pids in peaks.items():
        print(f"  {name}: " + ", ".join(f"pid {pid} {mb:,.0f} MB" for pid, mb in pids))
    print(f"  this client: {vm_hwm_mb():,.0f} MB")

    loads = sorted(samples.get("load", []))
    if loads:
        print(f"\nload average (1 min) during the run: median {percentile(loads, .5):.2f}, max {loads[-1]:.2f}; "
              f"{os.cpu_count()} cores; other engineers' work shares this machine")
    failed = total_errors + lost + failed_tasks + logged
    print(f"\nverdict: {'PASS' if not failed else 'FAIL'} ({total_errors} request errors, {lost} lost events, "
          f"{failed_tasks} failed tasks, {logged} error lines in logs)")
    return 1 if failed else 0


# --- the run -------------------------------------------------------------------------------------

def run(args, stack: ExitStack, folder: Path) -> int:
    primary, standby = clusters(stack)
    manage(primary.url, "migrate", "-v0")
    project_id, writer_keys, reader_keys = project_and_keys(primary.url, args.ingest_clients, args.readers)

    redis_db = free_redis_db(args.redis_db)
    redis_url = f"{REDIS}/{redis_db}"
    prefix = f"denoise-scaleout-{os.getpid()}"
    stack.callback(forget_redis, redis_url, prefix)
    env = {"DATABASE_URL": primary.url, "DATABASE_REPLICA_URL": standby.url, "REPLICA_MAX_LAG": str(REPLICA_MAX_LAG),
           "REDIS_URL": redis_url, "REDIS_PREFIX": prefix, "SECRET_KEY": secrets.token_urlsafe(50),
           "DJANGO_SETTINGS_MODULE": "denoise_dashboard.settings", "PYTHONUNBUFFERED": "1"}
    print(f"primary on port {primary.port}, standby on {standby.port}, Redis database {redis_db}, logs in {folder}",
          flush=True)

    servers = []
    for number in (1, 2):
        server = Serve(folder, name=f"serve-{number}", workers=args.serve_workers, **env)
        stack.enter_context(server)
        servers.append(server)
    process_env = {**os.environ, **env, "VAR_DIR": str(folder / "celery-var")}
    process_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    workers = []
    for number in (1, 2):
        worker = celery(f"worker-{number}", "worker", "-l", "info", "-n", f"scaleout-{number}@%h",
                        "--concurrency", str(args.worker_concurrency), "--without-gossip", "--without-mingle",
                        env=process_env, folder=folder)
        stack.callback(worker.stop)
        workers.append(worker)
    beat = celery("beat", "beat", "-l", "info", "-s", str(folder / "beat-schedule"),
                  "--pidfile", str(folder / "beat.pid"), env=process_env, folder=folder)
    stack.callback(beat.stop)
    urls = [server.url for server in servers]
    print(f"serving at {', '.join(urls)}; load for {args.minutes} min", flush=True)

    record, samples, stop = Record(), defaultdict(list), threading.Event()
    now = datetime.now(UTC)
    start = now - timedelta(hours=1)
    window = {"start": (start - timedelta(hours=1)).isoformat(), "end": (now + timedelta(days=1)).isoformat()}
    counters_before = {"primary": database_counters(primary), "standby (replica)": database_counters(standby)}
    threads = [threading.Thread(target=sampler, args=(primary, standby, samples, stop), daemon=True)]
    threads += [threading.Thread(target=ingest_client, args=(n, key, urls, args.batch, start, record, stop), daemon=True)
                for n, key in enumerate(writer_keys)]
    threads += [threading.Thread(target=reader, args=(n, key, urls, window, record, stop), daemon=True)
                for n, key in enumerate(reader_keys)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        while time.monotonic() - began < args.minutes * 60:
            time.sleep(1)
            for process in [*workers, beat]:
                if process.process.poll() is not None:
                    raise SystemExit(f"{process.name} exited:\n{process.log.read_text(errors='replace')[-3000:]}")
    finally:
        stop.set()
        for thread in threads:
            thread.join(180)
    seconds = time.monotonic() - began
    counters = {"primary": (counters_before["primary"], database_counters(primary)),
                "standby (replica)": (counters_before["standby (replica)"], database_counters(standby))}
    peaks = {server.log.stem: [(pid, vm_hwm_mb(pid)) for pid in descendants(server.process.pid)] for server in servers}
    peaks |= {process.name: [(pid, vm_hwm_mb(pid)) for pid in descendants(process.process.pid)]
              for process in [*workers, beat]}
    # Stopped before the count: every batch in flight is answered (or not) and settled first.
    for server in servers:
        server.stop()
    for process in [*workers, beat]:
        process.stop()
    lost, nodes = lost_events(primary, project_id, record.acknowledged)
    tasks = {worker.name: tasks_done(worker.log) for worker in workers}
    log_lines = {server.log.stem: log_errors(server.log) for server in servers}
    log_lines |= {process.name: log_errors(process.log) for process in [*workers, beat]}
    rollup_refreshes = [ran for worker in workers for ran in refreshes(worker.log)]
    return report(args, record, seconds, lost, nodes, counters, samples, tasks, rollup_refreshes, log_lines, peaks)


def interrupted(signum, frame):
    # SIGTERM unwinds like Ctrl-C, so the clusters and processes are removed either way.
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--batch", type=int, default=1000, help="events per ingest batch (the API's limit: 1,000)")
    parser.add_argument("--ingest-clients", type=int, default=3)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--serve-workers", type=int, default=1, help="worker processes per serve instance")
    parser.add_argument("--worker-concurrency", type=int, default=1, help="processes per Celery worker")
    parser.add_argument("--redis-db", type=int, help="default: an empty Redis database (1-15)")
    parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs (the folder is printed)")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, interrupted)
    folder = Path(tempfile.mkdtemp(prefix="denoise-bench-scale-out-"))
    status = 1
    try:
        with ExitStack() as stack:
            status = run(args, stack, folder)
    finally:
        if not args.keep_logs:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()

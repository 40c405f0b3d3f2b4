#!/usr/bin/env python
"""Storage tiers at volume: how much a 0-day full-content policy saves, and how
long the retention job takes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/storage.py \
        [--nodes 100000] [--timing-nodes 1000000] [--mix synthetic|demo] [--database NAME] [--keep]

1. Loads a synthetic workload shaped like the demo's ticket workflow
   (demo/workflow.py) into a scratch database: eleven nodes a trace, user input
   -> intent and entities -> order lookup, three retrieval fragments (consuming
   intent and entities) -> reasoning -> verification -> summary -> final
   answer; an escalation on one trace in two hundred. Its confidence mix is
   `--mix`: `synthetic` (the default, an assumed, confident workload: 13% of
   nodes below 0.8) or `demo` (the shares the demo's own history has, step by
   step, measured by running its generator in memory: about half of all nodes
   below 0.8). Texts are the size an LLM workflow writes (raw input: a prompt
   with retrieved context, 2-6 KB; content: an answer or a passage, 0.5-2 KB),
   not the demo's: its fake texts are one-liners (75 characters on average,
   none over 280), on which a summary saves nothing. They come from a pool of
   Zipf-distributed pseudo-words, so PostgreSQL's compression sees something
   like prose.
2. Applies `full_content_days: 0, keep_full_below: 0.8` with the real job
   (`manage.py apply_retention`, a child process: its wall time and peak RSS),
   then prints the node table's bytes (table + TOAST + indexes,
   `pg_total_relation_size`) before, after a plain VACUUM (space reusable by
   new rows) and after VACUUM FULL (returned to the system), the share of
   nodes still carrying full text, and checks that every low-confidence,
   fused, failed, escalated and reviewed node is still complete.
3. Times the job over --timing-nodes nodes against a baseline measured in the
   same run: one unbatched UPDATE writing the same values into a copy of the
   same rows (without the node table's indexes: what the job costs for being
   bounded and resumable, and for keeping the indexes up to date).
"""

import argparse
import itertools
import os
import random
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

# The bench's workflow (the demo's ticket workflow, one round, every step
# present): (step, source type, parents by position, share below 0.8 in the
# synthetic mix).
WORKFLOW = [
    ("user_input", "user_input", [], 0.03),
    ("intent", "reasoning", [0], 0.03),
    ("entity_extraction", "reasoning", [0], 0.03),
    ("order_lookup", "tool_result", [2], 0.03),
    ("retrieval", "retrieval", [1, 2], 0.35),
    ("retrieval", "retrieval", [1, 2], 0.35),
    ("retrieval", "retrieval", [1, 2], 0.35),
    ("reasoning", "reasoning", [1, 2, 3, 4, 5, 6], 0.10),
    ("verification", "verification", [7], 0.10),
    ("summary", "summary", [7, 8], 0.03),
    ("final_answer", "final_answer", [9], 0.03),
]
NODES_PER_TRACE = len(WORKFLOW)
POOL = 4000


@dataclass(frozen=True)
class StepMix:
    """One step's confidence mix: shares below 0.5 and below 0.8, the share of
    those below 0.5 that a consumer blocks, the shares failed and reviewed."""

    below_half: float
    below: float
    blocked_of_below_half: float
    failed: float
    reviewed: float


def synthetic_mix() -> dict[str, StepMix]:
    """An assumed mix, far more confident than the demo's: a third of retrieval
    fragments below 0.8, a tenth of reasonings and verifications, 3% of the rest
    (13% of all nodes); a third of those below 0.5, half of them blocked; 1%
    failed; a review on a twentieth of the final answers."""
    return {step: StepMix(low / 3, low, 0.5, 0.01, 0.05 if step == "final_answer" else 0.0)
            for step, _, _, low in WORKFLOW}


def demo_mix() -> dict[str, StepMix]:
    """The mix the demo's own history has (demo/history.py: three days of
    tickets with its drift and incidents, recorded in memory through the SDK),
    per step. Steps without a confidence (user input, order lookup) are never
    below."""
    from datetime import UTC, datetime

    from demo.history import fill
    from demo.model_quality import HistoryNoise
    from denoiseflow import Recorder

    class Collected(Recorder):
        def __init__(self):
            super().__init__(url="http://127.0.0.1:9", api_key="-")
            self.events = []

        def emit(self, kind, body, timestamp=None, event_id=None, encoding=None):
            self.events.append((kind, body))
            return True

    recorder = Collected()
    fill(recorder, HistoryNoise(datetime(2026, 12, 1, 12, tzinfo=UTC)), set())
    nodes = {body["product_id"]: body for kind, body in recorder.events if kind == "node"}
    blocked = {body["product_id"] for kind, body in recorder.events if kind == "fuse" and body.get("decision") == "block"}
    blocked |= {p for p, body in nodes.items() if (body.get("fuse") or {}).get("decision") == "block"}
    reviewed = {body.get("product_id") for kind, body in recorder.events if kind == "review"}
    def below(body, limit):
        return body.get("confidence") is not None and body["confidence"] < limit

    def share(flags):
        flags = list(flags)
        return sum(flags) / len(flags) if flags else 0.0

    mix = {}
    for step in dict.fromkeys(step for step, *_ in WORKFLOW):
        steps = [(p, body) for p, body in nodes.items() if body.get("step") == step]
        mix[step] = StepMix(
            share(below(body, 0.5) for _, body in steps), share(below(body, 0.8) for _, body in steps),
            share(p in blocked for p, body in steps if below(body, 0.5)),
            share(body.get("status") == "error" for _, body in steps), share(p in reviewed for p, _ in steps))
    return mix


MIXES = {"synthetic": synthetic_mix, "demo": demo_mix}


def vocabulary(rng: random.Random, size: int = 20000) -> list[str]:
    """Pseudo-words with English-like lengths: with a Zipfian choice among them,
    PostgreSQL's compression does about as well as on real prose (roughly 2x),
    where a few dozen repeated words would compress far better than text does."""
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [26 - i for i in range(26)]
    return ["".join(rng.choices(letters, weights, k=rng.choice((2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 11))))
            for _ in range(size)]


def prose(rng: random.Random, words: list[str], cumulative: list[float], low: int, high: int) -> str:
    length = rng.randint(low, high)
    return " ".join(rng.choices(words, cum_weights=cumulative, k=length // 5))[:length]


def load(project_id: int, nodes: int, mix: dict[str, StepMix], seed: int = 7) -> None:
    """Texts from a pool (each row's own, compressed on its own), everything
    else by INSERT … SELECT over generate_series."""
    from django.db import connection

    rng = random.Random(seed)
    words = vocabulary(rng)
    cumulative = list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))  # Zipf's law
    traces = max(1, nodes // NODES_PER_TRACE)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE bench_text (i int PRIMARY KEY, answer text, prompt text)")
        with cursor.copy("COPY bench_text (i, answer, prompt) FROM STDIN") as copy:
            for i in range(POOL):
                copy.write_row((i, prose(rng, words, cumulative, 500, 2000),
                                prose(rng, words, cumulative, 2000, 6000)))
        cursor.execute("CREATE TEMP TABLE bench_shape (k int, step text, source text, low_half float, low float, "
                       "block float, failed float, reviewed float)")
        cursor.executemany("INSERT INTO bench_shape VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                           [(k, step, source, m.below_half, m.below, m.blocked_of_below_half, m.failed, m.reviewed)
                            for k, (step, source, *_) in enumerate(WORKFLOW) for m in [mix[step]]])
        cursor.execute("CREATE TEMP TABLE bench_links (k int, parent int)")
        cursor.executemany("INSERT INTO bench_links VALUES (%s, %s)",
                           [(k, parent) for k, (*_, parents, _) in enumerate(WORKFLOW) for parent in parents])
        cursor.execute("SELECT setseed(0.42)")
        cursor.execute(
            """
            INSERT INTO provenance_trace (project_id, trace_id, created_at, started_at, ended_at, node_count,
                error_count)
            SELECT %s, 'trace-' || t, now(), now() - interval '2 days', now() - interval '2 days', %s, 0
            FROM generate_series(1, %s) t
            """,
            [project_id, NODES_PER_TRACE, traces],
        )
        cursor.execute(
            """
            CREATE TEMP TABLE bench_nodes AS
            SELECT tr.id AS trace_pk, tr.trace_id, k, random() AS r, random() AS pick,
                   tr.started_at + make_interval(secs => k) AS ts
            FROM provenance_trace tr, generate_series(0, %s - 1) k WHERE tr.project_id = %s
            """,
            [NODES_PER_TRACE, project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_node (project_id, trace_id, product_id, event_id, agent_id, step, source_type,
                content, raw_input, confidence, confidence_raw, confidence_scale, round, is_error, fuse_state,
                metrics, metadata, timestamp, received_at, retry_of)
            SELECT %s, n.trace_pk, n.trace_id || '-' || n.k, 'ev-' || n.trace_id || '-' || n.k,
                'agent_' || sh.step, sh.step, sh.source,
                t.answer, t.prompt, c.conf, c.conf, 1, 1, n.r > 1 - sh.failed,
                CASE WHEN c.conf < 0.5 AND n.r < sh.block THEN 3 ELSE 0 END,
                jsonb_build_object('self_consistency_score', round(c.conf::numeric, 3)), '{}'::jsonb, n.ts, n.ts, ''
            FROM bench_nodes n
            JOIN bench_shape sh ON sh.k = n.k
            JOIN bench_text t ON t.i = (abs(hashtext(n.trace_id || n.k)) %% %s)
            CROSS JOIN LATERAL (SELECT CASE WHEN n.pick >= sh.low THEN 0.8 + random() * 0.2
                                            WHEN n.pick < sh.low_half THEN random() * 0.5
                                            ELSE 0.5 + random() * 0.3 END AS conf) c
            ORDER BY n.trace_pk, n.k
            """,
            [project_id, POOL],
        )
        cursor.execute(
            """
            INSERT INTO provenance_edge (project_id, trace_id, child_product_id, parent_product_id, position)
            SELECT %s, n.trace_pk, n.trace_id || '-' || n.k, n.trace_id || '-' || l.parent, 0
            FROM bench_nodes n JOIN bench_links l ON l.k = n.k
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_fuse (project_id, trace_id, product_id, event_id, decision, reason, threshold,
                by_agent_id, inline, timestamp, reason_code)
            SELECT n.project_id, t.trace_id, n.product_id, 'fuse-' || n.product_id, 3, 'confidence below 0.5',
                0.5, 'router', true, n.timestamp, 'below_block'
            FROM provenance_node n JOIN provenance_trace t ON t.id = n.trace_id
            WHERE n.project_id = %s AND n.fuse_state = 3
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_review (project_id, trace_id, product_id, event_id, verdict, comment, timestamp)
            SELECT n.project_id, n.trace_id, n.product_id, 'review-' || n.product_id, 'incorrect', '', n.timestamp
            FROM provenance_node n JOIN bench_shape sh ON sh.k::text = split_part(n.product_id, '-', 3)
            WHERE n.project_id = %s AND n.id %% 1000 < sh.reviewed * 1000
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_escalation (project_id, trace_id, product_id, event_id, reason, by_agent_id,
                timestamp)
            SELECT project_id, trace_id, product_id, 'esc-' || product_id, 'fused 3 times', 'router', timestamp
            FROM provenance_node WHERE project_id = %s AND split_part(product_id, '-', 3) = '10'
                AND split_part(product_id, '-', 2)::int %% 200 = 0
            """,
            [project_id],
        )
        for table in ("bench_nodes", "bench_text", "bench_shape", "bench_links"):
            cursor.execute(f"DROP TABLE {table}")
        cursor.execute("ANALYZE")


def node_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('provenance_node')")
        return cursor.fetchone()[0]


def node_parts() -> tuple[int, int, int]:
    """The node table's heap, TOAST (with its index) and indexes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("""SELECT pg_relation_size(c.oid), pg_total_relation_size(c.reltoastrelid),
                                 pg_indexes_size(c.oid)
                          FROM pg_class c WHERE c.oid = 'provenance_node'::regclass""")
        return cursor.fetchone()


def vacuum(full: bool) -> None:
    """A VACUUM FULL is repeated until it kept no dead row: on a shared server
    another session's snapshot can hold back the horizon for a while, and the
    rewrite then copies the old versions too (not the job's bytes to count)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for _attempt in range(60):
            cursor.execute(f"VACUUM {'FULL ' if full else ''}provenance_node")
            if not full:
                return
            cursor.execute("SELECT (SELECT reltuples FROM pg_class WHERE oid = 'provenance_node'::regclass), "
                           "(SELECT count(*) FROM provenance_node)")
            kept, live = cursor.fetchone()
            if kept <= live:
                return
            time.sleep(1)  # a bench, not a test: waiting for other sessions to move on
        print(f"  (VACUUM FULL still kept {kept - live:,.0f} dead rows: the figures below include them)")


def must_stay_complete(project_id: int) -> str:
    """The nodes the rules keep complete by themselves (parents are counted apart)."""
    return f"""
        SELECT n.id FROM provenance_node n WHERE n.project_id = {project_id} AND (
            n.confidence < 0.8 OR n.fuse_state = 3 OR n.is_error
            OR EXISTS (SELECT 1 FROM provenance_review r WHERE r.project_id = n.project_id
                       AND r.product_id = n.product_id)
            OR EXISTS (SELECT 1 FROM provenance_escalation e WHERE e.project_id = n.project_id
                       AND e.product_id = n.product_id))
    """


def run_job(slug: str) -> tuple[float, float, str]:
    """The real job in a child process: (seconds, peak RSS MB, its output)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", "apply_retention", "--project", slug], cwd=ROOT,
                          env={**os.environ, "REDIS_URL": ""}, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, done.stdout.strip()


def mb(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--timing-nodes", type=int, default=1_000_000)
    parser.add_argument("--mix", choices=sorted(MIXES), default="synthetic", help="the confidence mix")
    parser.add_argument("--database", help="the scratch database's name (default: a unique one)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    mix = MIXES[args.mix]()

    name = args.database or f"denoise_bench_storage_{os.getpid()}_{random.randrange(10**6)}"
    with scratch_django(name, keep=args.keep):
        from django.db import connection

        from provenance.models import Node
        from tenancy.models import Project

        print(f"Storage: {args.nodes:,} nodes of the demo workflow's shape, {args.mix} mix, full_content_days 0, "
              f"keep_full_below 0.8")
        print("  mix by step (below 0.5 / below 0.8 / failed / reviewed): " + "; ".join(
            f"{step} {m.below_half:.0%}/{m.below:.0%}/{m.failed:.0%}/{m.reviewed:.0%}" for step, m in mix.items()))
        project = Project.objects.create(slug="storage", full_content_days=0, keep_full_below=0.8)
        started = time.perf_counter()
        load(project.pk, args.nodes, mix)
        print(f"  loaded in {time.perf_counter() - started:.1f} s")
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE bench_complete AS SELECT id, length(content) AS c, length(raw_input) AS r "
                           f"FROM provenance_node WHERE id IN ({must_stay_complete(project.pk)})")
            cursor.execute("SELECT count(*) FROM bench_complete")
            protected = cursor.fetchone()[0]
        vacuum(full=True)
        before, before_parts = node_bytes(), node_parts()
        seconds, rss, out = run_job(project.slug)
        vacuum(full=False)
        after_vacuum = node_bytes()
        vacuum(full=True)
        after_full, after_parts = node_bytes(), node_parts()
        total = Node.objects.filter(project=project).count()
        full = Node.objects.filter(project=project, summarized_at__isnull=True).count()
        with connection.cursor() as cursor:
            cursor.execute("""SELECT count(*) FROM bench_complete b JOIN provenance_node n ON n.id = b.id
                              WHERE n.summarized_at IS NULL AND length(n.content) = b.c AND length(n.raw_input) = b.r""")
            complete = cursor.fetchone()[0]
            cursor.execute("DROP TABLE bench_complete")
        print(f"  job: {out} in {seconds:.1f} s, peak RSS {rss:.0f} MB")
        print(f"  node table + TOAST + indexes: before {mb(before)}; after VACUUM {mb(after_vacuum)} "
              f"(reusable space counted); after VACUUM FULL {mb(after_full)}")
        print(f"  heap / TOAST / indexes: before {' / '.join(map(mb, before_parts))}; "
              f"after VACUUM FULL {' / '.join(map(mb, after_parts))}")
        print(f"  saved {1 - after_full / before:.1%} of the node table's bytes (goal: at least 60%)")
        print(f"  nodes with full text: {full:,} of {total:,} ({full / total:.1%}); "
              f"low-confidence/fused/failed/escalated/reviewed nodes complete: {complete:,} of {protected:,}")

        if args.timing_nodes:
            print(f"\nJob time: {args.timing_nodes:,} nodes")
            timing = Project.objects.create(slug="timing", full_content_days=0, keep_full_below=0.8)
            started = time.perf_counter()
            load(timing.pk, args.timing_nodes, mix, seed=11)
            print(f"  loaded in {time.perf_counter() - started:.1f} s")
            with connection.cursor() as cursor:
                cursor.execute("CREATE TABLE bench_copy AS SELECT * FROM provenance_node WHERE project_id = %s",
                               [timing.pk])
            seconds, rss, out = run_job(timing.slug)
            print(f"  job: {out} in {seconds:.1f} s (goal: under 120 s), peak RSS {rss:.0f} MB")
            with connection.cursor() as cursor:
                ids = [row[0] for row in Node.objects.filter(project=timing, summarized_at__isnull=False)
                       .values_list("pk").iterator()]
                cursor.execute("CREATE TEMP TABLE bench_ids (id bigint PRIMARY KEY)")
                with cursor.copy("COPY bench_ids (id) FROM STDIN") as copy:
                    for pk in ids:
                        copy.write_row((pk,))
                started = time.perf_counter()
                cursor.execute(
                    """UPDATE bench_copy c SET content_sha256 = sha256(convert_to(content, 'UTF8')),
                         raw_input_sha256 = sha256(convert_to(raw_input, 'UTF8')),
                         content = left(content, 280), raw_input = left(raw_input, 280), summarized_at = now()
                       FROM bench_ids b WHERE b.id = c.id""")
                baseline = time.perf_counter() - started
                cursor.execute("DROP TABLE bench_copy")
            print(f"  baseline, one unbatched UPDATE of the same {len(ids):,} rows: {baseline:.1f} s; "
                  f"job / baseline = {seconds / baseline:.2f}")


if __name__ == "__main__":
    main()

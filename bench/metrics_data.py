"""Synthetic traffic for bench/metrics.py, written by PostgreSQL itself
(INSERT … SELECT over generate_series): a month of ten-node workflow traces.

Each trace is a pipeline: user input, three retrievals, entity extraction,
reasoning, verification, a tool call, a summary and the final answer, each
node consuming the one before. Confidence depends on the position; entity
extraction is bimodal (a split task) and the reasoner drifts down over the
last week; low-confidence nodes are downweighted or blocked inline; a fifth of
traces get a review whose verdict follows the final answer's confidence.
"""

from django.db import connection

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
    traces = max(1, nodes // NODES_PER_TRACE)
    agents = sql_case([a for a, _, _ in PIPELINE]).replace("{variant}", "' || (1 + t %% 2) || '")
    steps, sources = sql_case([s for _, s, _ in PIPELINE]), sql_case([s for _, _, s in PIPELINE])
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(%s)", [seed])
        cursor.execute(
            f"""
            INSERT INTO provenance_trace (project_id, trace_id, created_at, started_at, ended_at, node_count,
                error_count)
            SELECT %s, 'trace-' || t, now(), s, s + interval '5 minutes', {NODES_PER_TRACE}, 0
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
                metrics, metadata, timestamp, received_at)
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
                '{}'::jsonb, ts, ts
            FROM (SELECT *, CASE WHEN r1 < 0.08 THEN NULL ELSE confidence END AS c FROM bench_nodes) n
            ORDER BY ts
            """,
            [project_id],
        )
        cursor.execute(
            """
            INSERT INTO provenance_fuse (project_id, trace_id, product_id, event_id, decision, reason, threshold,
                by_agent_id, inline, timestamp)
            SELECT n.project_id, t.trace_id, n.product_id, n.event_id, n.fuse_state,
                CASE n.fuse_state WHEN 3 THEN
                    (ARRAY['confidence below 0.3', 'contradicts retrieval', 'stale source'])[1 + (n.id %% 3)]
                WHEN 2 THEN (ARRAY['confidence below 0.5', 'low vote ratio'])[1 + (n.id %% 2)]
                ELSE 'ok' END,
                0.5, 'router_agent', true, n.timestamp
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
        cursor.execute("DROP TABLE bench_nodes")
        cursor.execute("ANALYZE")

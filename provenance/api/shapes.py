"""JSON Schemas of the provenance API's answers, for the OpenAPI document.
They describe what `provenance.dag.reading`, `dag` and `health` return: keep them
beside any change to those answers (the schemathesis test fails otherwise)."""

from drf_spectacular.utils import OpenApiExample

from core.openapi import (
    BOOLEAN,
    DATETIME,
    EXTRA_COMPONENTS,
    FREE_OBJECT,
    INTEGER,
    NUMBER,
    SHARE,
    STRING,
    array,
    enum,
    nullable,
    obj,
    ref,
)
from provenance.models import FindingKind

DECISIONS = ("accept", "downweight", "block")

NODE_SUMMARY = obj({
    "product_id": STRING,
    "trace_id": STRING,
    "agent_id": STRING,
    "step": STRING,
    "source_type": STRING,
    "confidence": nullable({**NUMBER, "minimum": 0, "maximum": 1, "description": "Normalized to [0, 1]; null: unknown."}),
    "confidence_raw": nullable({**NUMBER, "description": "As sent, before `confidence_scale`."}),
    "fused": {**BOOLEAN, "description": "A consumer blocked it."},
    "fuse_decision": enum(*DECISIONS, nullable_=True),
    "status": enum("ok", "error"),
    "round": nullable(INTEGER),
    "parent_ids": array(STRING),
    "timestamp": DATETIME,
    "retry_of": nullable({**STRING, "description": "The fused node this one retries."}),
    "attempt": nullable(INTEGER),
    "content_tier": enum("full", "summary"),
    "duration_ms": nullable({**NUMBER, "minimum": 0, "description": "The step's wall time."}),
    "model": nullable(STRING),
    "usage": nullable(obj({"input_tokens": {**INTEGER, "minimum": 0}, "output_tokens": {**INTEGER, "minimum": 0}})),
    "cost_usd": nullable({**NUMBER, "minimum": 0, "description": "null: unpriced."}),
}, required=["product_id", "trace_id", "agent_id", "step", "source_type", "confidence", "fused", "status", "round",
             "parent_ids", "timestamp", "duration_ms", "model", "usage", "cost_usd"])

TRACE_SUMMARY_FIELDS = {
    "trace_id": STRING,
    "started_at": nullable(DATETIME),
    "ended_at": nullable(DATETIME),
    "node_count": INTEGER,
    "min_confidence": nullable(NUMBER),
    "fused_count": nullable(INTEGER),
    "error_count": INTEGER,
    "environment": STRING,
}
TRACE_SUMMARY = obj(TRACE_SUMMARY_FIELDS)


def page_of(item: dict) -> dict:
    return obj({
        "count": INTEGER,
        "next": nullable({**STRING, "format": "uri"}),
        "previous": nullable({**STRING, "format": "uri"}),
        "results": array(item),
    })


TRACE_PAGE = page_of(TRACE_SUMMARY)
TRACE_DETAIL = obj({
    **TRACE_SUMMARY_FIELDS,
    "cost_usd": nullable({**NUMBER, "description": "The sum over the nodes that have a cost; null: none has."}),
    "tokens": nullable({**INTEGER, "description": "Input and output tokens over the nodes with usage; null: none has."}),
    "nodes": array(NODE_SUMMARY),
})

NODE_DETAIL = {
    "allOf": [
        NODE_SUMMARY,
        obj({
            "content": STRING,
            "raw_input": STRING,
            "content_sha256": nullable(STRING),
            "raw_input_sha256": nullable(STRING),
            "confidence_scale": nullable(NUMBER),
            "metrics": FREE_OBJECT,
            "metadata": FREE_OBJECT,
            "fuses": array(obj({
                "decision": enum(*DECISIONS),
                "reason": STRING,
                "reason_code": nullable(STRING),
                "policy_version": nullable(INTEGER),
                "threshold": nullable(NUMBER),
                "by_agent_id": STRING,
                "inline": BOOLEAN,
                "timestamp": DATETIME,
            }, required=["decision", "reason", "timestamp"])),
            "escalations": array(obj({
                "reason": STRING,
                "by_agent_id": nullable(STRING),
                "timestamp": DATETIME,
                "open": BOOLEAN,
                "closed_at": nullable(DATETIME),
            })),
            "reviews": array(obj({"verdict": enum("correct", "incorrect"), "comment": STRING, "timestamp": DATETIME})),
        }, required=["content", "raw_input", "metrics", "metadata", "fuses", "reviews"]),
    ]
}

ROOT_CAUSE = obj({
    "product_id": STRING,
    "root_causes": array(obj({
        "product_id": STRING,
        "reason": enum("fused", "error", "low_confidence"),
        "confidence": nullable(NUMBER),
        "trace_id": STRING,
    })),
    "path": {**array(STRING), "description": "From the first root cause to the node."},
})

ROOT_CAUSES = obj({
    "answers": {**INTEGER, "description": "Final answers in the window that went wrong in the asked sense."},
    "unexplained": {**INTEGER, "description": "Those of them with no root cause."},
    "causes": array(obj({
        "agent_id": STRING,
        "step": STRING,
        "reason": enum("fused", "error", "low_confidence"),
        "count": {**INTEGER, "description": "Answers with at least one root cause in this group."},
        "share": {**SHARE, "description": "count / answers."},
        "examples": {**array(STRING), "description": "Up to 5 trace ids, newest answer first."},
    })),
})

IMPACT = obj({
    "product_id": STRING,
    "descendants": array(STRING),
    "nodes": array(obj({"product_id": STRING, "trace_id": STRING})),
})

COLUMNS = {"type": "object", "additionalProperties": array({}),
           "description": "Parallel columns: the k-th entry of each is the k-th item's."}
GRAPH = obj(
    {
        "trace_id": STRING,
        "threshold": SHARE,
        "colorscale": array(array({})),
        "total": {**INTEGER, "description": "The trace's stored nodes."},
        "folded": BOOLEAN,
        "focus": nullable(obj({"product_id": STRING, "hops": nullable(INTEGER), "count": INTEGER})),
        "summary": FREE_OBJECT,
        "nodes": {**COLUMNS, "description": "The nodes drawn on their own: id, agent, step, source, confidence, "
                                            "fused, error, x, y."},
        "external": {**COLUMNS, "description": "Parents outside the trace (another trace, or not arrived)."},
        "clusters": {**COLUMNS, "description": "Runs of nodes folded into one mark."},
        "hidden": {**COLUMNS, "description": "The folded nodes and the cluster each is in."},
        "edges": {**array(INTEGER), "description": "Index pairs over nodes, then external nodes, then clusters."},
        "retries": {**array(INTEGER), "description": "Index pairs (attempt, its retry) over the drawn nodes."},
        "layers": array(STRING),
        "columns": INTEGER,
    },
    description="The trace page's drawing: a layered layout (x: depth, y: order in the layer); "
                "a large trace folded into clusters unless `fold=0`.",
)

HEALTH_REPORT = obj(
    {
        "checked_at": nullable(DATETIME),
        "started_at": DATETIME,
        "finished_at": nullable(DATETIME),
        "node_count": INTEGER,
        "finding_count": INTEGER,
        "counts": {"type": "object", "additionalProperties": INTEGER},
        "findings": array(obj({
            "kind": enum(*FindingKind.values),
            "trace_id": STRING,
            "product_id": STRING,
            "detail": STRING,
        })),
        "matching": {**INTEGER, "description": "Findings that match the filters, before `offset` and `limit`."},
        "groups": array(obj({
            "kind": enum(*FindingKind.values),
            "label": STRING,
            "description": STRING,
            "total": INTEGER,
            "groups": array(obj({
                "agent_id": STRING, "step": STRING, "count": INTEGER,
                "examples": array(obj({"trace_id": STRING, "product_id": STRING, "detail": STRING})),
            })),
        }), description="Every kind in the contract's order, its findings grouped by (agent, step), biggest "
                        "first, with a few examples each."),
    },
    required=["checked_at", "finding_count", "counts", "findings"],
    description="Before the first check: `checked_at` null and no findings.",
)

EVENT = obj(
    {
        "id": {**STRING, "description": "Unique per project; a resent id stores nothing new (200)."},
        "type": enum("node", "fuse", "review", "escalation"),
        "timestamp": {**DATETIME, "description": "ISO 8601."},
        "body": {**FREE_OBJECT, "description": (
            "node: trace_id, product_id, agent_id (required); step, source_type, content, raw_input, "
            "confidence, confidence_scale, parent_ids, round, status (ok|error), metrics, "
            "fuse {decision, reason, threshold, reason_code, policy_version}, retry_of, attempt, metadata. "
            "fuse: trace_id, product_id, decision, reason, threshold, by_agent_id. "
            "review: trace_id, product_id?, verdict (correct|incorrect), comment?. "
            "escalation: trace_id, product_id, reason, by_agent_id?."
        )},
    },
    description="Each event is judged on its own; a bad one is reported in `errors` and stops nothing.",
)
INGEST_REQUEST = obj({"batch": array(
    # Any item is accepted here and judged on its own in the 207 answer, so the
    # request schema cannot refuse a malformed event: `Event` says what a good one is.
    {"anyOf": [ref("Event"), {}]},
    maxItems=1000,
    description="At most 1,000 events (more: 413, nothing stored).",
)})
INGEST_RESULT = obj({
    "successes": array(obj({"id": STRING, "status": {**INTEGER, "enum": [200, 201]}})),
    "errors": array(obj({"id": nullable(STRING), "status": INTEGER, "message": STRING})),
})

EXTRA_COMPONENTS["Event"] = EVENT

RETENTION_FIELDS = {
    "trace_days": nullable({**INTEGER, "minimum": 1, "description": "Delete traces idle this long; null: keep."}),
    "full_content_days": nullable({**INTEGER, "minimum": 0,
                                   "description": "After this long keep a 280-character summary only; null: keep."}),
    "keep_full_below": {**SHARE, "description": "Nodes below this confidence keep their full content."},
}
PRICE = {**NUMBER, "minimum": 0, "maximum": 1e6}
PRICES = {
    "type": "object",
    "description": "USD per million tokens by model; costs of nodes stored later are computed from it.",
    "additionalProperties": obj({"input_per_mtok": PRICE, "output_per_mtok": PRICE}, additionalProperties=False),
}
PROJECT = obj({
    "slug": STRING,
    "name": STRING,
    "high_uncertainty_threshold": SHARE,
    "retention": obj(RETENTION_FIELDS),
    "prices": PRICES,
})
PROJECT_PATCH = obj(
    {"name": {**STRING, "maxLength": 200}, "high_uncertainty_threshold": SHARE,
     "retention": obj(RETENTION_FIELDS, required=[], additionalProperties=False), "prices": PRICES},
    required=[],
    additionalProperties=False,
)


# --- Examples shared by several operations ---------------------------------------

INGEST_EXAMPLE = OpenApiExample(
    "A fused retrieval fragment and the answer built on it",
    request_only=True,
    value={"batch": [
        {"id": "ev-1", "type": "node", "timestamp": "2026-11-20T09:15:00Z",
         "body": {"trace_id": "t-1", "product_id": "frag-1", "agent_id": "retrieval_agent",
                  "source_type": "retrieval", "confidence": 45, "confidence_scale": 100,
                  "fuse": {"decision": "block", "reason": "similarity below 0.5", "threshold": 0.5}}},
        {"id": "ev-2", "type": "node", "timestamp": "2026-11-20T09:15:02Z",
         "body": {"trace_id": "t-1", "product_id": "final", "agent_id": "summary_agent",
                  "source_type": "final_answer", "confidence": 0.8, "parent_ids": ["frag-1"]}},
        {"id": "ev-3", "type": "review", "timestamp": "2026-11-20T09:20:00Z",
         "body": {"trace_id": "t-1", "verdict": "incorrect", "comment": "wrong refund amount"}},
    ]},
)
INGEST_RESULT_EXAMPLE = OpenApiExample(
    "One stored, one resent, one refused",
    response_only=True,
    status_codes=["207"],
    value={"successes": [{"id": "ev-1", "status": 201}, {"id": "ev-2", "status": 200}],
           "errors": [{"id": "ev-3", "status": 400, "message": "confidence: must be a number"}]},
)

"""JSON Schemas of the evaluation API (truth sets and runs), for the OpenAPI
document: what `evals.datasets`, `evals.runs` and `evals.comparison` answer and
what the views accept. Requests say the types the views check; finer rules
(name characters, tolerance keys) are theirs and answer 400 naming the field."""

from core.openapi import (
    ANY,
    BOOLEAN,
    DATETIME,
    FREE_OBJECT,
    INTEGER,
    NUMBER,
    STRING,
    array,
    enum,
    nullable,
    obj,
)
from evals.judge import KINDS
from evals.validation import ORIGINS

NAME = {**STRING, "description": "1–100 letters, digits, `-`, `_`, `.`."}

DATASET_CREATE = obj({"name": NAME, "description": STRING}, required=["name"])
DATASET = obj({
    "name": STRING, "description": STRING, "version": INTEGER, "item_count": INTEGER,
    "created_at": DATETIME, "updated_at": DATETIME,
}, required=["name", "version", "item_count"])
DATASET_LISTED = obj({**DATASET["properties"], "drifted_count": INTEGER}, required=["name", "version", "item_count"])

ITEM_FIELDS = {
    "id": STRING,
    "input": ANY,
    "expected": ANY,
    "kind": {**enum(*KINDS), "description": "Default: `number` when `expected` is a number, else `exact`."},
    "tags": array(STRING),
    "origin": enum(*ORIGINS),
    "tolerance": {**FREE_OBJECT, "description": 'number: {"abs", "rel"}; percentages: {"points"}.'},
}
ITEM_INPUT = obj(ITEM_FIELDS, required=["id", "expected"])
ITEM = obj({**ITEM_FIELDS, "tolerance": nullable(ITEM_FIELDS["tolerance"]), "drifted": BOOLEAN},
           required=["id", "expected", "kind"])
DATASET_DETAIL = obj({**DATASET["properties"], "newest_version": INTEGER, "items": array(ITEM)},
                     required=["name", "version", "items"])
ITEMS_REQUEST = obj({"items": array(ITEM_INPUT, maxItems=1000)})
CHANGE = obj({"version": INTEGER, "created": INTEGER, "updated": INTEGER, "unchanged": INTEGER, "deleted": INTEGER},
             required=["version", "created", "updated", "unchanged"])
ROLLBACK_REQUEST = obj({"version": {**INTEGER, "minimum": 0}})
RECHECK_REQUEST = obj({"values": array(obj({"item_id": STRING, "current": ANY}), maxItems=1000)})
RECHECK = obj({"drifted": array(STRING), "checked": INTEGER})
VERSION = obj({
    "version": INTEGER, "created_at": DATETIME, "action": STRING, "note": STRING,
    "created": INTEGER, "updated": INTEGER, "deleted": INTEGER, "item_count": INTEGER,
}, required=["version", "created_at", "item_count"])

RUN_CREATE = obj({"dataset": STRING, "name": STRING, "dataset_version": INTEGER, "metadata": FREE_OBJECT},
                 required=["dataset"])
FIGURES = {
    "total": INTEGER, "judged": INTEGER, "passed": INTEGER, "failed": INTEGER, "missing": INTEGER,
    "accuracy": nullable(NUMBER), "intervention_rate": nullable(NUMBER), "mean_latency_ms": nullable(NUMBER),
}
TRADE_OFF = {
    "cost_usd": nullable({**NUMBER, "description": "Over the nodes of the results' traces; null: none has a cost."}),
    "cost_per_passed": nullable({**NUMBER, "description": "cost_usd ÷ passed; null when nothing passed."}),
    "cost_per_trace": nullable(NUMBER),
    "fuse_rate": nullable({**NUMBER, "description": "Fused nodes ÷ nodes of the results' traces."}),
    "p95_latency_ms": nullable({**NUMBER, "description": "Nearest rank over the results' latency_ms."}),
}
RUN_FIELDS = {
    "id": INTEGER, "dataset": STRING, "dataset_version": INTEGER, "name": STRING,
    "status": enum("open", "finished"), "metadata": FREE_OBJECT, "created_at": DATETIME,
    "finished_at": nullable(DATETIME),
}
RUN = obj(RUN_FIELDS, required=["id", "dataset", "dataset_version", "status"])
RUN_LISTED = obj({**RUN_FIELDS, **FIGURES}, required=["id", "dataset", "dataset_version", "status"])
RUN_DETAIL = obj(
    {
        **RUN_FIELDS, **FIGURES, **TRADE_OFF,
        "by_tag": {"type": "object", "additionalProperties": obj({"total": INTEGER, "passed": INTEGER,
                                                                  "accuracy": nullable(NUMBER)})},
        "results": array(obj({
            "item_id": STRING, "expected": ANY, "actual": ANY, "passed": BOOLEAN, "detail": STRING,
            "trace_id": STRING, "product_id": STRING, "latency_ms": nullable(NUMBER), "escalated": BOOLEAN,
            "cost_usd": nullable({**NUMBER, "description": "The cost of its trace's nodes; null: none has one."}),
        }, required=["item_id", "passed"])),
        "missing_items": array(STRING),
        "drifted": array(STRING),
    },
    required=["id", "dataset", "dataset_version", "status", "total", "judged", "passed", "failed", "missing",
              "accuracy", "results"],
)
RESULTS_REQUEST = obj({"results": array(obj({
    "item_id": STRING, "actual": ANY, "trace_id": STRING, "product_id": STRING, "latency_ms": NUMBER,
    "escalated": BOOLEAN, "error": STRING,
}, required=["item_id"]), maxItems=1000)})
RESULT_ENTRY = obj({"item_id": nullable(STRING), "status": INTEGER, "passed": BOOLEAN, "message": STRING},
                   required=["status", "passed"])
TRADE_OFF_SIDE = obj({**TRADE_OFF, "accuracy": nullable(NUMBER), "escalated": INTEGER,
                      "intervention_rate": nullable(NUMBER)})
COMPARISON = obj({
    "trade_off": obj({"here": TRADE_OFF_SIDE, "there": TRADE_OFF_SIDE}),
    **{f"{name}_delta": nullable(NUMBER) for name in ("cost_usd", "cost_per_passed", "cost_per_trace", "p95_latency_ms",
                                                       "fuse_rate")},
    "accuracy_delta": nullable(NUMBER), "fixed": array(STRING), "broken": array(STRING),
    "still_failing": array(STRING), "only_here": array(STRING), "only_there": array(STRING),
}, required=["accuracy_delta", "fixed", "broken", "still_failing"])

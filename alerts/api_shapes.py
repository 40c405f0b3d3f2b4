"""JSON Schemas of the alerts API's answers (`alerts.api_json.rule_json`,
`event_json`), for the OpenAPI document."""

from alerts.conditions import MATCHES, OPS, RULE_FILTER_KEYS, RULE_METRICS
from alerts.models import RuleState
from alerts.transports import TRANSPORTS
from core.openapi import BOOLEAN, DATETIME, INTEGER, NUMBER, STRING, array, enum, nullable, obj

CONDITION = obj(
    {
        "metric": enum(*RULE_METRICS),
        "window": {**STRING, "example": "15m"},
        "change": enum("relative"),
        "filters": obj({key: INTEGER if key == "round" else STRING for key in RULE_FILTER_KEYS}, required=[]),
        "op": enum(*OPS),
        "threshold": NUMBER,
    },
    required=["metric", "window", "op", "threshold"],
)

VALUE = obj({"metric": STRING, "value": nullable({**NUMBER, "description": "Infinity is written as the token `Infinity`."})},
            required=["metric", "value"])

DESTINATION_FIELDS = {
    "url": {**STRING, "description": "webhook, slack"},
    "secret": {**STRING, "description": "webhook, inbox"},
    "to": {**array(STRING), "description": "email: the addresses"},
    "routing_key": {**STRING, "description": "pagerduty"},
}

DESTINATION = obj(
    {
        "id": INTEGER,
        "type": enum(*TRANSPORTS, "shared"),
        **DESTINATION_FIELDS,
        "name": {**STRING, "description": "shared: the project-wide destination's name"},
        "kind": {**STRING, "description": "shared: its type"},
        "disabled": {**BOOLEAN, "description": "Turned off after a permanent failure."},
        "disabled_reason": STRING,
    },
    required=["id", "type", "disabled", "disabled_reason"],
)

SHARED_DESTINATION_INPUT = obj({"name": STRING, "type": enum(*TRANSPORTS), **DESTINATION_FIELDS},
                               required=["name", "type"])

SHARED_DESTINATION = obj({
    "id": INTEGER,
    "name": STRING,
    "type": enum(*TRANSPORTS),
    **DESTINATION_FIELDS,
    "target": STRING,
    "disabled": BOOLEAN,
    "disabled_reason": STRING,
    "rules": {**array(INTEGER), "description": "Ids of the rules that send to it."},
    "created_at": DATETIME,
    "updated_at": DATETIME,
})

RULE = obj({
    "id": INTEGER,
    "name": STRING,
    "match": enum(*MATCHES),
    "conditions": array(CONDITION),
    "for": STRING,
    "destinations": array(DESTINATION),
    "enabled": BOOLEAN,
    "muted_until": nullable(DATETIME),
    "state": enum(*RuleState.values),
    "last_evaluated_at": nullable(DATETIME),
    "last_values": array(VALUE),
    "created_at": DATETIME,
    "updated_at": DATETIME,
    "url": STRING,
})

ALERT_EVENT = obj({
    "id": INTEGER,
    "rule_id": INTEGER,
    "state": enum("firing", "resolved"),
    "at": DATETIME,
    "values": array(VALUE),
    "silenced": {**BOOLEAN, "description": "Recorded during a silence (or a mute): nothing was or will be sent."},
    "silence_id": nullable(INTEGER),
    "muted": BOOLEAN,
    "held_back": {**BOOLEAN, "description": "Not sent when recorded: storm control (at most one notification "
                                             "per rule per ALERT_NOTIFY_INTERVAL_SECONDS)."},
    "sent_late_at": nullable(DATETIME),
})

SILENCE_INPUT = obj({"rule_id": nullable(INTEGER), "until": DATETIME, "reason": STRING}, required=["until", "reason"])

SILENCE = obj({
    "id": INTEGER,
    "rule_id": nullable(INTEGER),
    "until": DATETIME,
    "reason": STRING,
    "created_by": STRING,
    "created_at": DATETIME,
    "ended_at": nullable(DATETIME),
}, required=["id", "rule_id", "until", "reason"])

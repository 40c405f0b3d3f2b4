"""PagerDuty Events API v2: `trigger` on firing, `resolve` on resolution, with one
`dedup_key` per rule (`denoise-PROJECT-RULE_ID`), so an incident opens once and
closes itself. The events URL is the operator's setting (PAGERDUTY_EVENTS_URL),
not a user's, so it is not held to the private-address guard. PagerDuty answers
202 when it took the event, 400 for an event it will never take (a bad routing
key), 429 and 5xx for "later"."""

import json
import math

from django.conf import settings

from alerts.transports import http_answer
from alerts.transports.base import Sent, Transport
from core.timestamps import utc_iso

SUMMARY_LIMIT = 1024
ACTIONS = {"firing": "trigger", "resolved": "resolve", "test": "trigger", "not_running": "trigger"}


def dedup_key(message) -> str:
    if message.kind == "checks.not_running":
        return f"denoise-{message.project}-checks"
    key = f"denoise-{message.project}-{message.rule_id}"
    return key + "-test" if message.kind == "alert.test" else key


def event(message) -> dict:
    """The event without its routing key (added when sent, so no key sits in the delivery log)."""
    values = "; ".join(f"{line.label}: {line.comparison}" for line in message.lines)
    summary = message.title.removeprefix("[Denoise] ") + (f" ({values})" if values else "")
    if message.detail:
        summary += f": {message.detail}"
    details = {"project": message.project, "state": message.state, "at": utc_iso(message.at), "url": message.url}
    if message.rule_id is not None:
        details["rule"] = {"id": message.rule_id, "name": message.rule_name}
        details["conditions"] = [{"condition": line.label, "value": _finite(line.value), "op": line.op,
                                  "threshold": line.threshold} for line in message.lines]
    return {
        "event_action": ACTIONS[message.state],
        "dedup_key": dedup_key(message),
        "payload": {"summary": summary[:SUMMARY_LIMIT], "source": "denoise",
                    "severity": "info" if message.kind == "alert.test" else "error",
                    "timestamp": utc_iso(message.at), "custom_details": details},
        "client": "Denoise Dashboard",
        "client_url": message.url,
        "links": [{"href": message.url, "text": "Open in Denoise Dashboard"}],
    }


def _finite(value):
    # PagerDuty parses strict JSON: an infinite change travels as text.
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


class PagerDuty(Transport):
    @classmethod
    def render(cls, message) -> str:
        return json.dumps(event(message), allow_nan=False)

    def notify(self, delivery) -> Sent:
        body = {"routing_key": self.config["routing_key"], **json.loads(delivery.payload)}
        return http_answer.post(
            settings.PAGERDUTY_EVENTS_URL, json.dumps(body).encode(), {"Content-Type": "application/json"},
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS, allow_private=True,
            permanent={400: "PagerDuty refused the event (400: invalid event or routing key)"},
        )

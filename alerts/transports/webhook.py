"""Signed JSON POSTs per the contract's Webhooks section."""

import json
import time

from django.conf import settings

from alerts import signing
from alerts.transports import http_answer
from alerts.transports.base import Sent, Transport
from core.timestamps import utc_iso

USER_AGENT = "denoise-dashboard-webhooks/1"


def body(message) -> str:
    """The contract's webhook body; a project notice names its jobs instead of a rule."""
    if message.kind == "checks.not_running":
        shape = {"type": message.kind, "project": message.project, "at": utc_iso(message.at),
                 "detail": message.detail, "url": message.url}
    else:
        shape = {"type": message.kind, "project": message.project,
                 "rule": {"id": message.rule_id, "name": message.rule_name}, "at": utc_iso(message.at),
                 "values": message.values, "url": message.url}
    # allow_nan: an infinite relative change travels as the `Infinity` token (see conditions.py).
    return json.dumps(shape, allow_nan=True)


class Webhook(Transport):
    @classmethod
    def render(cls, message) -> str:
        return body(message)

    def headers(self, delivery, body: bytes, timestamp: int) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "webhook-id": delivery.webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signing.signature(self.config["secret"], delivery.webhook_id, timestamp, body),
        }

    def notify(self, delivery) -> Sent:
        data = delivery.payload.encode()
        return http_answer.post(
            self.config["url"], data, self.headers(delivery, data, int(time.time())),
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS, allow_private=settings.WEBHOOK_ALLOW_PRIVATE,
            disabling={410: "410 Gone: the destination is disabled"},
        )

"""Signed JSON POSTs per the contract's Webhooks section."""

import time

from django.conf import settings

from alerts import signing
from alerts.transports import safe_http
from alerts.transports.base import Sent, Transport, TransportError

USER_AGENT = "denoise-dashboard-webhooks/1"


class Webhook(Transport):
    def headers(self, delivery, body: bytes, timestamp: int) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "webhook-id": delivery.webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signing.signature(self.destination.config["secret"], delivery.webhook_id,
                                                   timestamp, body),
        }

    def notify(self, delivery) -> Sent:
        body = delivery.payload.encode()
        try:
            response = safe_http.post(
                self.destination.config["url"], body, self.headers(delivery, body, int(time.time())),
                timeout=settings.WEBHOOK_TIMEOUT_SECONDS, allow_private=settings.WEBHOOK_ALLOW_PRIVATE,
            )
        except safe_http.UnsafeDestination as error:
            raise TransportError(str(error), permanent=True) from None
        except safe_http.RequestFailed as error:
            raise TransportError(str(error)) from None
        answer = {"status_code": response.status, "response_excerpt": response.excerpt}
        if response.status == 410:
            raise TransportError("410 Gone: the destination is disabled", disable_destination=True, **answer)
        if 300 <= response.status < 400:
            where = f" to {response.location}" if response.location else ""
            raise TransportError(f"redirect{where} not followed (status {response.status})", **answer)
        if response.status >= 300:
            raise TransportError(f"received status {response.status}", **answer)
        return Sent(**answer)

"""The built-in webhook inbox: signs a delivery exactly as `Webhook` does and
keeps the request in the database instead of sending it, so a person can see
what a receiver would get (headers, body) and that its signature verifies.
For trying rules out and for the demo, which has no receiver of its own."""

import time

from alerts import signing
from alerts.models import InboxMessage
from alerts.transports.base import Sent
from alerts.transports.webhook import Webhook


class Inbox(Webhook):
    def notify(self, delivery) -> Sent:
        body = delivery.payload.encode()
        headers = self.headers(delivery, body, int(time.time()))
        InboxMessage.objects.create(project_id=delivery.project_id, destination=self.destination,
                                    delivery=delivery, headers=headers, body=delivery.payload)
        return Sent(status_code=202, response_excerpt="kept in the webhook inbox")


def verified(message: InboxMessage) -> bool:
    """Does the message's `webhook-signature` match its body under the
    destination's secret, as a receiver would check it?"""
    destination = message.destination
    headers = message.headers
    if destination is None or "secret" not in destination.effective_config:
        return False
    try:
        expected = signing.signature(destination.effective_config["secret"], headers.get("webhook-id", ""),
                                     int(headers.get("webhook-timestamp", "0")), message.body.encode())
    except ValueError:
        return False
    return headers.get("webhook-signature", "") == expected

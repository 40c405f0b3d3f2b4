"""Destination kinds: one Transport class each, looked up by the destination's kind
(a rule's link to a project-wide destination uses that one's kind)."""

from alerts.transports.base import Sent, Transport, TransportError
from alerts.transports.email import Email
from alerts.transports.inbox import Inbox
from alerts.transports.pagerduty import PagerDuty
from alerts.transports.slack import Slack
from alerts.transports.webhook import Webhook

TRANSPORTS: dict[str, type[Transport]] = {"webhook": Webhook, "inbox": Inbox, "slack": Slack, "email": Email,
                                          "pagerduty": PagerDuty}


def transport_class(kind: str) -> type[Transport]:
    try:
        return TRANSPORTS[kind]
    except KeyError:
        raise TransportError(f"unknown destination kind {kind!r}", permanent=True) from None


def transport_for(destination) -> Transport:
    return transport_class(destination.effective_kind)(destination)


__all__ = ["TRANSPORTS", "Sent", "Transport", "TransportError", "transport_class", "transport_for"]

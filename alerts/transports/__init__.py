"""Destination kinds: one Transport class each, looked up by `Destination.kind`."""

from alerts.transports.base import Sent, Transport, TransportError
from alerts.transports.inbox import Inbox
from alerts.transports.webhook import Webhook

TRANSPORTS: dict[str, type[Transport]] = {"webhook": Webhook, "inbox": Inbox}


def transport_for(destination) -> Transport:
    try:
        return TRANSPORTS[destination.kind](destination)
    except KeyError:
        raise TransportError(f"unknown destination kind {destination.kind!r}", permanent=True) from None


__all__ = ["TRANSPORTS", "Sent", "Transport", "TransportError", "transport_for"]

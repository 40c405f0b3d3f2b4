"""Turning an HTTP receiver's answer into Sent or TransportError, the same way
for every kind that POSTs (webhook, Slack, PagerDuty); each kind names the
statuses that mean "never" for it."""

from alerts.transports import safe_http
from alerts.transports.base import Sent, TransportError


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool,
         permanent: dict[int, str] | None = None, disabling: dict[int, str] | None = None) -> Sent:
    """`permanent`: statuses not retried; `disabling`: statuses that also turn the
    destination off (the receiver is gone), each with the reason shown."""
    try:
        response = safe_http.post(url, body, headers, timeout=timeout, allow_private=allow_private)
    except safe_http.UnsafeDestination as error:
        raise TransportError(str(error), permanent=True) from None
    except safe_http.RequestFailed as error:
        raise TransportError(str(error)) from None
    answer = {"status_code": response.status, "response_excerpt": response.excerpt}
    if disabling and response.status in disabling:
        raise TransportError(disabling[response.status], disable_destination=True, **answer)
    if permanent and response.status in permanent:
        raise TransportError(permanent[response.status], permanent=True, **answer)
    if 300 <= response.status < 400:
        where = f" to {response.location}" if response.location else ""
        raise TransportError(f"redirect{where} not followed (status {response.status})", **answer)
    if response.status >= 300:
        raise TransportError(f"received status {response.status}", **answer)
    return Sent(**answer)

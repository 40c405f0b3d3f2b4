"""What every destination kind implements: `notify(delivery)` (after healthchecks'
hc/api/transports.py). It returns the receiver's answer on success and raises
TransportError otherwise; `permanent` errors are not retried."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Sent:
    status_code: int | None = None
    response_excerpt: str = ""


class TransportError(Exception):
    def __init__(self, message: str, *, permanent: bool = False, disable_destination: bool = False,
                 status_code: int | None = None, response_excerpt: str = ""):
        super().__init__(message)
        self.message = message
        self.permanent = permanent or disable_destination
        self.disable_destination = disable_destination
        self.status_code = status_code
        self.response_excerpt = response_excerpt


class Transport:
    def __init__(self, destination):
        self.destination = destination

    def notify(self, delivery) -> Sent:
        raise NotImplementedError

"""What every destination kind implements (after healthchecks' hc/api/transports.py):
`render(message)`, the exact body frozen on the delivery when it is created, and
`notify(delivery)`, one attempt to send it. `notify` returns the receiver's answer
on success and raises TransportError otherwise; `permanent` errors are not retried."""

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
        # A rule's link to a project-wide destination sends with that one's config.
        self.config = destination.effective_config

    @classmethod
    def render(cls, message) -> str:
        raise NotImplementedError

    def notify(self, delivery) -> Sent:
        raise NotImplementedError

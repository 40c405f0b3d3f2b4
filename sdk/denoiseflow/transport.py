"""How a batch reaches the dashboard: one POST, nothing else.

Pluggable so an agent can bring its own HTTP stack; the default is urllib, so
the SDK needs nothing beyond the standard library.
"""

import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass, field


class TransportError(Exception):
    """The request got no HTTP answer (refused, reset, timed out): worth retrying."""


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == name), None)


class HttpTransport:
    def __init__(self, timeout: float = 10.0):
        self.timeout = timeout

    def post(self, url: str, body: bytes, headers: dict) -> Reply:
        return self.request("POST", url, body, headers)

    def request(self, method: str, url: str, body: bytes | None, headers: dict) -> Reply:
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Reply(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as error:
            with error:
                return Reply(error.code, dict(error.headers or {}), error.read())
        except (OSError, http.client.HTTPException) as error:
            raise TransportError(str(error) or type(error).__name__) from error

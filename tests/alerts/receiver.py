"""A webhook receiver on loopback that checks Standard Webhooks signatures with
its own implementation (written from the scheme, not from alerts/signing.py)."""

import base64
import hashlib
import hmac
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTS = range(8141, 8158)  # this helper's loopback ports; 8158-8159 are left for live servers


def standard_webhooks_verify(secret: str, headers: dict[str, str], body: bytes, tolerance: int = 300) -> bool:
    """Per standardwebhooks.com: key = base64-decoded secret after `whsec_`, signed
    content = `{msg_id}.{timestamp}.{payload}`, header = space-separated `v1,<b64>`."""
    msg_id, timestamp, signatures = headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        return False
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode("utf-8")
    to_sign = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, to_sign, hashlib.sha256).digest())
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return True
    return False


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """`script` answers the n-th request: an int status, ("redirect", url),
    ("hold", seconds) to keep the request open, or ("sleep", seconds, status)."""

    secret: str = ""
    script: list = field(default_factory=list)
    default: object = 200
    received: list[Received] = field(default_factory=list)
    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def next_answer(self):
        index = len(self.received) - 1
        return self.script[index] if index < len(self.script) else self.default

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.received


def handler_for(receiver: Receiver):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            receiver.received.append(Received(self.path, headers, body,
                                              standard_webhooks_verify(receiver.secret, headers, body)))
            answer = receiver.next_answer()
            if isinstance(answer, tuple) and answer[0] == "hold":
                receiver.holding.set()
                receiver.release.wait(answer[1])
                answer = 200
            elif isinstance(answer, tuple) and answer[0] == "sleep":
                time.sleep(answer[1])
                answer = answer[2]
            try:
                if isinstance(answer, tuple) and answer[0] == "redirect":
                    self.send_response(302)
                    self.send_header("Location", answer[1])
                else:
                    self.send_response(answer)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(f"answered {answer}".encode())
            except OSError:
                pass  # the sender went away (a killed worker)

        def do_GET(self):
            receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, b"", False))
            self.send_response(200)
            self.end_headers()

    return Handler


def start(receiver: Receiver) -> ThreadingHTTPServer:
    for port in PORTS:
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(receiver))
        except OSError:
            continue
        server.daemon_threads = True
        receiver.port = port
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server
    raise RuntimeError("no free port in 8141-8157")


@contextmanager
def running(secret: str = ""):
    """A receiver listening for the length of the block (a held request is let go at its end)."""
    hook = Receiver(secret=secret)
    server = start(hook)
    try:
        yield hook
    finally:
        hook.release.set()
        server.shutdown()
        server.server_close()

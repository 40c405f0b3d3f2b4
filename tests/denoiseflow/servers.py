"""Stand-ins for the outside world in SDK tests: a loopback port with nothing
behind it, and tiny HTTP servers in front of the dashboard that answer 503
(or anything else) until a test lets requests through."""

import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Loopback ports reserved for these tests' own servers (8161, 8178, 8179: live servers).
PORTS = range(8162, 8178)
FORWARDED_HEADERS = ("Authorization", "Content-Type", "Content-Encoding")


def closed_port() -> int:
    """A port of ours that nothing listens on: connections are refused at once."""
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in the reserved range")


class BlackHole:
    """Accepts connections and never answers: a dashboard that hangs."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", closed_port()))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()


class StandIn:
    """A loopback HTTP server whose answers come from `answer(method, path, body, headers)`."""

    def __init__(self, port: int | None = None):
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.reply(stand_in.answer("GET", self.path, b"", self.headers))

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.reply(stand_in.answer("POST", self.path, body, self.headers))

            def reply(self, answer: tuple[int, dict, bytes]):
                status, headers, payload = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port or 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, method: str, path: str, body: bytes, headers) -> tuple[int, dict, bytes]:
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def forward(url: str, method: str, body: bytes | None, headers, names) -> tuple[int, object, bytes]:
    """Passes a request on to the dashboard: (status, response headers, body)."""
    request = urllib.request.Request(
        url, data=body, method=method, headers={name: headers[name] for name in names if headers.get(name)},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


class Gateway(StandIn):
    """Answers every POST with `status` (and `Retry-After`), or, once
    `forward_to` is set, passes it on to the dashboard. Counts what it saw."""

    def __init__(self, status: int = 503, retry_after: str | None = None, port: int | None = None):
        self.status, self.retry_after = status, retry_after
        self.forward_to: str | None = None
        self.seen: list[float] = []  # arrival times of requests
        super().__init__(port or closed_port())

    def answer(self, method, path, body, headers):
        self.seen.append(time.monotonic())
        if self.forward_to is None:
            extra = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            return self.status, {"Content-Type": "application/json", **extra}, b'{"error": "unavailable"}'
        status, _, payload = forward(self.forward_to + path, "POST", body, headers, FORWARDED_HEADERS)
        return status, {"Content-Type": "application/json"}, payload


class Switch(StandIn):
    """In front of the dashboard for policy reads: passes GETs through while
    `up`, answers 503 while down, and counts what it saw."""

    def __init__(self, target: str):
        self.target, self.up = target, True
        self.seen: list[tuple[str, str | None]] = []  # (path, If-None-Match)
        super().__init__()

    def answer(self, method, path, body, headers):
        self.seen.append((path, headers.get("If-None-Match")))
        if not self.up:
            return 503, {"Retry-After": "1"}, b'{"error": "unavailable"}'
        status, answered, payload = forward(self.target + path, "GET", None, headers, ("Authorization", "If-None-Match"))
        return status, {"ETag": answered.get("ETag", "")}, payload


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()

"""Stand-ins for the outside world in SDK tests: a loopback port with nothing
behind it, and a tiny HTTP server in front of the dashboard that answers 503
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


class Gateway:
    """Answers every POST with `status` (and `Retry-After`), or, once
    `forward_to` is set, passes it on to the dashboard. Counts what it saw."""

    def __init__(self, status: int = 503, retry_after: str | None = None, port: int | None = None):
        self.status, self.retry_after = status, retry_after
        self.forward_to: str | None = None
        self.seen: list[float] = []  # arrival times of requests
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                gateway.seen.append(time.monotonic())
                status, headers, payload = gateway.answer(self.path, body, self.headers)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port or closed_port()), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, path: str, body: bytes, headers) -> tuple[int, dict, bytes]:
        if self.forward_to is None:
            extra = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            return self.status, {"Content-Type": "application/json", **extra}, b'{"error": "unavailable"}'
        request = urllib.request.Request(
            self.forward_to + path, data=body, method="POST",
            headers={name: headers[name] for name in FORWARDED_HEADERS if headers.get(name)},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, {"Content-Type": "application/json"}, response.read()
        except urllib.error.HTTPError as error:
            return error.code, {"Content-Type": "application/json"}, error.read()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()

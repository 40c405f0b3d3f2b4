"""A switchable stand-in in front of the dashboard for policy reads: passes
GETs through while `up`, answers 503 while down, and counts what it saw."""

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Switch:
    def __init__(self, target: str):
        self.target, self.up = target, True
        self.seen: list[tuple[str, str | None]] = []  # (path, If-None-Match)
        switch = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                switch.seen.append((self.path, self.headers.get("If-None-Match")))
                status, headers, body = switch.answer(self.path, self.headers)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, path, headers) -> tuple[int, dict, bytes]:
        if not self.up:
            return 503, {"Retry-After": "1"}, b'{"error": "unavailable"}'
        forwarded = {name: headers[name] for name in ("Authorization", "If-None-Match") if headers.get(name)}
        request = urllib.request.Request(self.target + path, headers=forwarded, method="GET")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, {"ETag": response.headers.get("ETag", "")}, response.read()
        except urllib.error.HTTPError as error:
            return error.code, {"ETag": error.headers.get("ETag", "")}, error.read()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

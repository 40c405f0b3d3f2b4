"""The dashboard served in-process for as long as load_demo needs it.

load_demo runs before `make run` starts the real server, yet the demo history
is meant to arrive the way agents' data does: through the SDK, over HTTP, with
an API key, through the public ingest endpoint. So the command serves the same
WSGI application on a loopback port in a thread while the SDK posts to it.
"""

import threading
from contextlib import contextmanager

from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serving(host: str = "127.0.0.1", port: int = 0):
    """Yields the base URL of the app served on host:port (0: any free port)."""
    httpd = ThreadedWSGIServer((host, port), QuietHandler, allow_reuse_address=False)
    httpd.set_app(WSGIHandler())
    thread = threading.Thread(target=httpd.serve_forever, name="demo-local-server", daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)

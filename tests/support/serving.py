"""`manage.py serve` as a child process, for tests (and benches) that go through
the production server as a client would."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx

REPO = Path(__file__).resolve().parents[2]
START_SECONDS = 90  # a loaded 2-core CI machine boots workers slowly


def wait_until_serving(url: str, process: subprocess.Popen, seconds: float, log: Path, name: str) -> None:
    """Until `url` answers its sign-in page; a server that exits or takes longer
    than `seconds` is killed and its log's end raised."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/login/", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"{name} did not start:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(db: dict) -> str:
    """The URL of a Django DATABASES entry (e.g. the pytest-django test database)."""
    credentials = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Serve:
    """`manage.py serve 127.0.0.1:<free port>`, started with `env` on top of a
    clean environment, stopped (gracefully) when the block ends."""

    def __init__(self, log_dir: Path, *, workers: int = 1, name: str = "serve", **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"{name}.log"
        base = {key: value for key, value in os.environ.items()
                if key not in {"REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL"}}
        self.env = {**base, "PYTHONUNBUFFERED": "1", "EMBEDDED_SCHEDULER": "0",
                    "VAR_DIR": str(log_dir / f"{name}-var"), **env}
        self.workers = workers
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> "Serve":
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "serve", f"127.0.0.1:{self.port}", "--workers", str(self.workers)],
                cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )
        wait_until_serving(self.url, self.process, START_SECONDS, self.log, "serve")
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self, sig=signal.SIGTERM, timeout: float = 40) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return self.process and self.process.returncode
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def worker_pids(self) -> set[int]:
        """The master's child processes (Gunicorn's workers)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return {int(pid) for pid in children.read_text().split()} if children.exists() else set()

    def ingest(self, api_key: str, *events, expect: int = 207) -> httpx.Response:
        response = httpx.post(f"{self.url}/api/v1/ingest", json={"batch": list(events)},
                              headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
        assert response.status_code == expect, response.text
        return response


def signed_in(url: str, username: str, password: str) -> httpx.Client:
    """A browser-like client signed in through the login form."""
    client = httpx.Client(timeout=10)
    client.get(f"{url}/login/")
    answer = client.post(f"{url}/login/", data={"username": username, "password": password,
                                                "csrfmiddlewaretoken": client.cookies["csrftoken"]},
                         headers={"Referer": f"{url}/login/"})
    assert answer.status_code == 302, answer.text[:500]
    return client

"""The project's fuse policy, fetched from the dashboard and kept fresh.

`policy()` answers the current copy at once (a dictionary lookup): the first
call starts a background thread that fetches it and asks again every
`refresh_interval` seconds (default: a minute) with `If-None-Match`, so an
unchanged policy costs the server one index probe and the agent nothing. The
first call waits for that first answer at most `first_wait` seconds (default:
one): a dashboard that accepts connections and never answers must not hold up
the agent for the fetch's whole `timeout`. While the dashboard is down,
or refuses the key, the last good copy stays in use; before any copy arrived,
the built-in defaults (the contract's version 0) are used, marked with no
version so decisions do not claim a policy they never saw.
"""

import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from denoiseflow.thresholds import Resolved, resolve
from denoiseflow.version import USER_AGENT
from denoiseflow.vocabulary import DEFAULT_PROFILE

logger = logging.getLogger("denoiseflow")

POLICY_PATH = "/api/v1/policy"
DEFAULT_REFRESH_SECONDS = 60.0
FIRST_WAIT_SECONDS = 1.0


@dataclass(frozen=True)
class Policy:
    """One copy of the policy. `version` is None for the built-in defaults."""

    version: int | None
    profiles: dict
    etag: str | None = None
    note: str = ""
    source: str = "builtin"  # "server" or "builtin"
    fetched_at: float = field(default=0.0, compare=False)  # time.monotonic() of the last answer

    def profile(self, name: str = "default") -> dict:
        """The named profile; an unknown name falls back to `default`."""
        return self.profiles.get(name) or self.profiles.get("default") or DEFAULT_PROFILE

    def thresholds(self, agent_id: str = "", step: str = "", profile: str = "default") -> Resolved:
        return resolve(self.profile(profile), agent_id, step)

    def get(self) -> "Policy":
        """A copy is its own source: `ConfidenceFuse(policy=Policy(...))` decides on fixed thresholds."""
        return self


BUILTIN = Policy(None, {"default": DEFAULT_PROFILE})


class PolicyClient:
    def __init__(self, url: str | None = None, api_key: str | None = None, *,
                 refresh_interval: float = DEFAULT_REFRESH_SECONDS, timeout: float = 5.0,
                 first_wait: float = FIRST_WAIT_SECONDS):
        self.url = (url or os.environ.get("DENOISE_URL") or "http://127.0.0.1:8000").rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("DENOISE_API_KEY", "")
        self.refresh_interval = refresh_interval
        self.timeout = timeout
        self.first_wait = first_wait
        self._policy = BUILTIN
        self._first_answer = threading.Event()
        self._lock = threading.Lock()
        self._started = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.counts = {"fetched": 0, "not_modified": 0, "failed": 0}

    def get(self) -> Policy:
        """The current copy; the first call starts the refresher and waits at
        most `first_wait` seconds for its first answer (the defaults until then)."""
        if not self._started:
            self._start()
        return self._policy

    def refresh(self) -> bool:
        """Asks the dashboard now; True if it answered (a new policy or 304)."""
        current = self._policy
        headers = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json",
                   "User-Agent": USER_AGENT}
        if current.etag:
            headers["If-None-Match"] = current.etag
        request = urllib.request.Request(self.url + POLICY_PATH, headers=headers, method="GET")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body, etag = response.read(), response.headers.get("ETag")
        except urllib.error.HTTPError as error:
            with error:
                if error.code == 304:
                    self._policy = Policy(current.version, current.profiles, current.etag, current.note,
                                          current.source, time.monotonic())
                    self.counts["not_modified"] += 1
                    return True
                self._failed(f"HTTP {error.code}")
                return False
        except (OSError, http.client.HTTPException) as error:
            self._failed(str(error) or type(error).__name__)
            return False
        try:
            data = json.loads(body)
            fresh = Policy(int(data["version"]), dict(data["profiles"]), etag, data.get("note") or "", "server",
                           time.monotonic())
            float(fresh.profiles["default"]["accept"])  # a policy without a usable default is no policy
        except (ValueError, KeyError, TypeError) as error:
            self._failed(f"unreadable policy: {error}")
            return False
        self._policy = fresh
        self.counts["fetched"] += 1
        return True

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def _failed(self, why: str) -> None:
        self.counts["failed"] += 1
        kept = f"version {self._policy.version}" if self._policy.version is not None else "the built-in defaults"
        logger.warning("denoiseflow: could not refresh the fuse policy (%s); using %s", why, kept)

    def _start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._thread = threading.Thread(target=self._run, name="denoiseflow-policy", daemon=True)
            self._thread.start()
            self._started = True
        self._first_answer.wait(self.first_wait)

    def _run(self) -> None:
        try:
            self.refresh()
        except Exception:
            logger.exception("denoiseflow: policy fetch failed unexpectedly")
        finally:
            self._first_answer.set()
        while not self._stop.wait(self.refresh_interval):
            try:
                self.refresh()
            except Exception:  # the refresher must outlive any surprise
                logger.exception("denoiseflow: policy refresh failed unexpectedly")


# -- one client per dashboard and key, shared by the process -------------------

_clients: dict[tuple, PolicyClient] = {}
_clients_lock = threading.Lock()


def policy_client(url: str | None = None, api_key: str | None = None, **options) -> PolicyClient:
    """The process's client for this dashboard and key (default: those of the
    configured recorder). Options apply when the client is first made."""
    if url is None or api_key is None:
        from denoiseflow.recorder import get_recorder

        recorder = get_recorder()
        url = recorder.url if url is None else url
        api_key = recorder.api_key if api_key is None else api_key
    key = (url.rstrip("/"), api_key)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = PolicyClient(url, api_key, **options)
        return client


def policy(url: str | None = None, api_key: str | None = None, **options) -> Policy:
    """The project's current fuse policy (see the module's docstring)."""
    return policy_client(url, api_key, **options).get()

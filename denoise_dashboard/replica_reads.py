"""Which requests read on the replica (the contract's "Read replica").

Pages and read API requests (safe methods) read on the replica while it is
reachable and no more than REPLICA_MAX_LAG seconds behind. A client reads its
own writes: after a request that may have written (any other method), that
client (its API key, else its session) reads on the primary for
REPLICA_MAX_LAG + PIN_MARGIN seconds. That is enough: the replica is used only
while it has replayed everything the primary committed up to REPLICA_MAX_LAG
seconds ago, so once the pin ends the client's write is on it.

The replica's state is measured at most once a second per process (two tiny
queries); an unreachable replica is not tried again for UNREACHABLE_BACKOFF."""

import hashlib
import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from core.limits import store
from core.replica import REPLICA, reads_from

logger = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CHECK_EVERY = 1.0
PIN_MARGIN = 2.0  # covers CHECK_EVERY and clock steps between the two servers
UNREACHABLE_BACKOFF = 5.0


@dataclass
class ReplicaState:
    usable: bool
    checked_at: float
    lag: float | None = None


_state = ReplicaState(usable=False, checked_at=-1e9)
_lock = threading.Lock()


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def still_stands(state: ReplicaState) -> bool:
    """The last measure is recent enough to go by: CHECK_EVERY, or
    UNREACHABLE_BACKOFF when the replica could not be reached (no lag known)."""
    unreachable = not state.usable and state.lag is None
    return time.monotonic() - state.checked_at < (UNREACHABLE_BACKOFF if unreachable else CHECK_EVERY)


def replica_usable(*, recheck: bool = False) -> bool:
    global _state
    if not recheck and still_stands(_state):
        return _state.usable
    with _lock:
        # Another thread may have measured while this one waited.
        if not recheck and still_stands(_state):
            return _state.usable
        _state = measure()
    return _state.usable


def measure() -> ReplicaState:
    now = time.monotonic()
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            primary_lsn = cursor.fetchone()[0]
        with connections[REPLICA].cursor() as cursor:
            # Caught up with what the primary had a moment ago: no lag. Else the
            # age of the newest transaction it replayed (it grows while a
            # replica stands still, however idle the primary).
            cursor.execute(
                "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= %s::pg_lsn,"
                " EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())",
                [primary_lsn],
            )
            caught_up, behind = cursor.fetchone()
    except DatabaseError as error:
        logger.warning("read replica unreachable, reading on the primary: %s", error)
        close_replica()
        return ReplicaState(usable=False, checked_at=now)
    lag = 0.0 if caught_up else float(behind) if behind is not None else float("inf")
    return ReplicaState(usable=lag <= settings.REPLICA_MAX_LAG, checked_at=now, lag=lag)


def close_replica() -> None:
    try:
        connections[REPLICA].close()
    except DatabaseError:
        pass


def client_of(request) -> str | None:
    """Who wrote: the API key a request carries, else its session."""
    token = request.headers.get("Authorization") or request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    return hashlib.sha256(token.encode()).hexdigest()[:32] if token else None


def pin_name(client: str) -> str:
    return f"replica-pin:{client}"


class ReplicaReadsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.enabled = replica_configured()

    def __call__(self, request):
        if not self.enabled:
            return self.get_response(request)
        client = client_of(request)
        if request.method not in SAFE_METHODS:
            response = self.get_response(request)
            if client:
                store.hold(pin_name(client), settings.REPLICA_MAX_LAG + PIN_MARGIN)
            return response
        if (client and store.held_for(pin_name(client)) > 0) or not replica_usable():
            return self.get_response(request)
        with reads_from(REPLICA):
            response = self.get_response(request)
        if response.status_code == 503 and not replica_usable(recheck=True):
            # The replica went away during this request: the primary answers it.
            return self.get_response(request)
        return response

"""Where the limits keep their counts: Redis when configured, else a SQLite file
in var/. Both are shared by every worker process of a machine (Redis: of every
machine), and neither touches the application database, so limits keep working
while it is down and never join a request's transaction.

Two primitives, enough for every limit here (and a third, built on the second):
- `take(name, limit, period)`: one event against a budget of `limit` per
  `period` seconds, as a token bucket (GCRA: one number per name, the time the
  budget is next whole). A full budget can be spent at once; it refills
  smoothly, so there is no window edge where twice the limit gets through.
- `hold(name, seconds)` / `held_for(name)`: a flag that lasts `seconds` (a lockout,
  a key known to be good); `held_for` is the seconds it has left, 0 when unset.
  `claim(name, seconds)` sets it only when it is not set (True when this call
  set it) and `release(name)` clears it: one background job asked for at a time.
"""

import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Take:
    allowed: bool
    remaining: int  # events still allowed right now after this one
    retry_after: float  # seconds until one more is allowed (0 while some remain)


def gcra(tat: float, now: float, limit: int, period: float) -> tuple[Take, float]:
    """The decision and the new theoretical arrival time for one event."""
    interval = period / limit
    tat = max(tat, now)
    if tat + interval - period > now:
        return Take(False, 0, tat + interval - period - now), tat
    tat += interval
    remaining = math.floor((now - (tat - period)) / interval + 1e-9)
    return Take(True, remaining, 0.0 if remaining else tat + interval - period - now), tat


# The same arithmetic as gcra(), on Redis' own clock, atomically.
GCRA_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local limit, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local interval = period / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat + interval - period > now then
  return {0, 0, tostring(tat + interval - period - now)}
end
tat = tat + interval
redis.call('SET', KEYS[1], tostring(tat), 'PX', math.ceil((tat - now) * 1000) + 1000)
local remaining = math.floor((now - (tat - period)) / interval + 1e-9)
local wait = 0
if remaining == 0 then wait = tat + interval - period - now end
return {1, remaining, tostring(wait)}
"""


class RedisStore:
    def __init__(self, url: str):
        import redis

        self.errors = (redis.RedisError, OSError)
        # Short timeouts: a slow Redis must not hold up every API request.
        self.client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self.gcra = self.client.register_script(GCRA_SCRIPT)

    def take(self, name: str, limit: int, period: float) -> Take:
        allowed, remaining, wait = self.gcra(keys=[f"{prefix()}:{name}"], args=[limit, period])
        return Take(bool(allowed), int(remaining), float(wait))

    def hold(self, name: str, seconds: float) -> None:
        self.client.set(f"{prefix()}:{name}", "1", px=max(1, int(seconds * 1000)))

    def held_for(self, name: str) -> float:
        left = self.client.pttl(f"{prefix()}:{name}")
        return max(left, 0) / 1000

    def claim(self, name: str, seconds: float) -> bool:
        return bool(self.client.set(f"{prefix()}:{name}", "1", px=max(1, int(seconds * 1000)), nx=True))

    def release(self, name: str) -> None:
        self.client.delete(f"{prefix()}:{name}")


class SqliteStore:
    """A file of counters. WAL and no fsync: counts are worth nothing after a crash."""

    PRUNE_EVERY = 1000

    def __init__(self, path):
        self.path = str(path)
        self.errors = (sqlite3.Error,)
        self.local = threading.local()
        self.hits = 0
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with self.connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS budgets (name TEXT PRIMARY KEY, tat REAL)")
            db.execute("CREATE TABLE IF NOT EXISTS holds (name TEXT PRIMARY KEY, until REAL)")

    def connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=5, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")
        return db

    @property
    def db(self) -> sqlite3.Connection:
        # One connection per thread and per process (a forked worker must not reuse its parent's).
        if getattr(self.local, "pid", None) != os.getpid():
            self.local.db, self.local.pid = self.connect(), os.getpid()
        return self.local.db

    @contextmanager
    def one_at_a_time(self) -> Iterator[sqlite3.Connection]:
        """A read and the write it decides, one process at a time."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def take(self, name: str, limit: int, period: float) -> Take:
        key = f"{prefix()}:{name}"
        with self.one_at_a_time() as db:
            now = time.time()
            row = db.execute("SELECT tat FROM budgets WHERE name = ?", (key,)).fetchone()
            decision, tat = gcra(row[0] if row else 0.0, now, limit, period)
            if decision.allowed:
                db.execute("INSERT INTO budgets VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET tat = excluded.tat",
                           (key, tat))
            self.hits += 1
            if self.hits % self.PRUNE_EVERY == 0:
                db.execute("DELETE FROM budgets WHERE tat < ?", (now,))
                db.execute("DELETE FROM holds WHERE until < ?", (now,))
        return decision

    SET_HOLD = "INSERT INTO holds VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET until = excluded.until"

    def hold(self, name: str, seconds: float) -> None:
        self.db.execute(self.SET_HOLD, (f"{prefix()}:{name}", time.time() + seconds))

    def held_for(self, name: str) -> float:
        row = self.db.execute("SELECT until FROM holds WHERE name = ?", (f"{prefix()}:{name}",)).fetchone()
        return max(row[0] - time.time(), 0.0) if row else 0.0

    def claim(self, name: str, seconds: float) -> bool:
        key = f"{prefix()}:{name}"
        with self.one_at_a_time() as db:
            now = time.time()
            row = db.execute("SELECT until FROM holds WHERE name = ?", (key,)).fetchone()
            claimed = row is None or row[0] <= now
            if claimed:
                db.execute(self.SET_HOLD, (key, now + seconds))
        return claimed

    def release(self, name: str) -> None:
        self.db.execute("DELETE FROM holds WHERE name = ?", (f"{prefix()}:{name}",))


def prefix() -> str:
    # Read per call, so a test (or a second installation sharing Redis) can use its own namespace.
    return settings.LIMITS_KEY_PREFIX


@lru_cache(maxsize=None)
def _store(redis_url: str, var_dir: str):
    if redis_url:
        return RedisStore(redis_url)
    return SqliteStore(os.path.join(var_dir, "limits.sqlite3"))


def store():
    return _store(settings.REDIS_URL, str(settings.VAR_DIR))


# The limits' entry points. A store that is down fails open (limits off, logged)
# rather than turning every API request into an error.

def take(name: str, limit: int, period: float) -> Take:
    current = store()
    try:
        return current.take(name, limit, period)
    except current.errors as error:
        logger.warning("limits store unavailable, request not counted: %s", error)
        return Take(True, limit, 0.0)


def hold(name: str, seconds: float) -> None:
    current = store()
    try:
        current.hold(name, seconds)
    except current.errors as error:
        logger.warning("limits store unavailable, %s not held: %s", name, error)


def held_for(name: str) -> float:
    current = store()
    try:
        return current.held_for(name)
    except current.errors as error:
        logger.warning("limits store unavailable, %s not read: %s", name, error)
        return 0.0


def claim(name: str, seconds: float) -> bool:
    """True when this call set the flag; also when the store is down: the
    job is asked for, as it would be without the flag."""
    current = store()
    try:
        return current.claim(name, seconds)
    except current.errors as error:
        logger.warning("limits store unavailable, %s not claimed: %s", name, error)
        return True


def release(name: str) -> None:
    current = store()
    try:
        current.release(name)
    except current.errors as error:
        logger.warning("limits store unavailable, %s not released (it lapses): %s", name, error)

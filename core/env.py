"""Tiny helpers for reading settings from the environment.

Settings must boot with no variables at all, so every helper takes a default.
A value that is set but malformed stops the start with an error naming the
variable: `DEBUG=flase` silently meaning "off" is how production ends up
misconfigured.
"""

import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}


class BadEnvironment(ImproperlyConfigured):
    """A variable is set to a value its setting cannot take."""


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    word = value.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise BadEnvironment(f"{name}={value!r} is not a boolean; use 1/0, true/false, yes/no or on/off")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value.strip())
    except ValueError:
        raise BadEnvironment(f"{name}={value!r} is not a whole number") from None
    if minimum is not None and number < minimum:
        raise BadEnvironment(f"{name}={value!r} must be {minimum} or more")
    return number


def envfloat(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return float(value.strip())
    except ValueError:
        raise BadEnvironment(f"{name}={value!r} is not a number") from None


def envurl(name: str, default: str) -> str:
    """An absolute http(s) URL."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadEnvironment(f"{name}={value!r} is not an http(s) URL")
    return value.strip()


def envlist(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def envdatabase(name: str, default_sqlite_path) -> dict:
    """A Django DATABASES entry from a `postgres://user:pass@host:port/db` URL.

    With the variable unset the app runs on an embedded SQLite file, so a first
    run needs no services at all.
    """
    from urllib.parse import unquote, urlsplit

    url = os.environ.get(name, "")
    if not url or url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if url.startswith("sqlite:///") else str(default_sqlite_path)
        if path != ":memory:":
            from pathlib import Path

            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path,
            "OPTIONS": {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", "timeout": 20},
        }
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise BadEnvironment(f"{name}: unsupported scheme {parts.scheme!r}; use postgres:// or sqlite:///")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "OPTIONS": {
            # Django's native psycopg 3 pool: each worker keeps warm connections.
            # A request waits at most DB_POOL_TIMEOUT for one, so while the
            # database is down it is answered 503 in under two seconds, not after
            # a long hang; `check` replaces connections that died with the
            # server, so the pool recovers on its own when the database is back.
            "pool": {
                "min_size": 1,
                "max_size": envint("DB_POOL_MAX", 10, minimum=1),
                "timeout": envfloat("DB_POOL_TIMEOUT", 1.0),
                "check": _check_connection(),
                # Reconnection attempts back off exponentially up to this long and
                # then stop; the next request starts a fresh one. Short, so a
                # pool that saw a long outage is not left waiting out a long
                # backoff once the database is back.
                "reconnect_timeout": 5,
            },
            "connect_timeout": envint("DB_CONNECT_TIMEOUT", 2, minimum=1),
        },
    }


def envreplica(name: str, primary: dict) -> dict:
    """A read replica of `primary`: PostgreSQL only, since it is a streaming replica."""
    if not os.environ.get(name, "").startswith(("postgres://", "postgresql://", "pgsql://")):
        raise BadEnvironment(f"{name}: a read replica is a postgres:// URL")
    if primary["ENGINE"] != "django.db.backends.postgresql":
        raise BadEnvironment(f"{name}: a read replica needs a PostgreSQL DATABASE_URL (it is its streaming replica)")
    return envdatabase(name, "")


def _check_connection():
    from psycopg_pool import ConnectionPool

    return ConnectionPool.check_connection

"""Tiny helpers for reading settings from the environment.

Settings must boot with no variables at all, so every helper takes a default.
"""

import os


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return int(value)


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
        raise ValueError(f"{name}: unsupported scheme {parts.scheme!r}; use postgres:// or sqlite:///")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        # Django's native psycopg 3 pool: each worker keeps warm connections.
        "OPTIONS": {"pool": {"min_size": 1, "max_size": envint("DB_POOL_MAX", 10), "timeout": 10}},
    }

"""What the API's rate limits know of keys (the limits themselves:
denoise_dashboard/limits/api.py): keys are counted by a hash of the bearer
token, without a database lookup, and a key just issued is known at once."""

import hashlib

from core.limits import store

KNOWN_KEY_SECONDS = 24 * 3600


def bearer_digest(header: str | None) -> str | None:
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return hashlib.sha256(token.strip().encode()).hexdigest()[:32]


def remember_issued_key(raw_key: str) -> None:
    """A key just issued is known at once: its first request must not meet a
    lockout that other clients' guesses from the same address brought on."""
    mark_known(bearer_digest(f"Bearer {raw_key}"))


def mark_known(digest: str) -> None:
    store.hold(f"api-known:{digest}", KNOWN_KEY_SECONDS)


def is_known(digest: str) -> bool:
    return bool(store.held_for(f"api-known:{digest}"))

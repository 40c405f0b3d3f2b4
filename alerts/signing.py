"""Standard Webhooks signatures: `v1,<base64 HMAC-SHA256("{id}.{timestamp}.{body}")>`."""

import base64
import binascii
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"


def secret_key(secret: str) -> bytes:
    """A `whsec_` secret is base64 after its prefix; any other is used as UTF-8."""
    if secret.startswith(SECRET_PREFIX):
        return base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    return secret.encode()


def is_valid_secret(secret: str) -> bool:
    try:
        return bool(secret_key(secret))
    except (binascii.Error, ValueError):
        return False


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def signature(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()

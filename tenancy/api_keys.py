"""A project's API keys, one domain call per use case: create, rotate, revoke.

Each validates its input first (a bad value is an ApiError naming the field,
and nothing is stored), then makes its change and its audit entry in one
transaction. A key's secret is returned once, by create and rotate, and never
kept (only its hash) nor written to the audit log. The pages
(tenancy/key_pages.py) and the API (tenancy/key_api.py) both call these."""

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import ApiError
from tenancy import audit
from tenancy.models import ALL_SCOPES, ApiKey, Project

NAME_MAX = ApiKey._meta.get_field("name").max_length
# A rotated key's old secret keeps working at most this long.
MAX_GRACE_SECONDS = 30 * 24 * 3600


class KeyInputError(ApiError):
    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}; nothing was stored", fields={field: reason})


class KeyConflict(ApiError):
    status = 409


def valid_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise KeyInputError("name", "a non-empty string is required")
    name = value.strip()
    if len(name) > NAME_MAX:
        raise KeyInputError("name", f"at most {NAME_MAX} characters")
    if "\x00" in name:
        raise KeyInputError("name", "must not contain NUL characters")
    return name


def valid_scopes(value: Any) -> list[str]:
    """The scopes asked for, each once, in the contract's order."""
    if not isinstance(value, list) or not value:
        raise KeyInputError("scopes", f"a non-empty list of scopes is required (any of {', '.join(ALL_SCOPES)})")
    for index, scope in enumerate(value):
        if not isinstance(scope, str) or scope not in ALL_SCOPES:
            raise KeyInputError(f"scopes[{index}]", f"unknown scope {str(scope)[:50]!r}; "
                                                    f"use {', '.join(ALL_SCOPES)}")
    return [scope for scope in ALL_SCOPES if scope in value]


def valid_grace(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRACE_SECONDS:
        raise KeyInputError("grace_seconds", f"an integer number of seconds from 0 to {MAX_GRACE_SECONDS} "
                                             f"(30 days) is required")
    return value


def body_object(data: Any) -> dict:
    if not isinstance(data, dict):
        raise KeyInputError("body", "a JSON object is required")
    return data


def describe(key: ApiKey) -> dict:
    """What the audit log keeps of a key: never its secret."""
    return {"name": key.name, "scopes": list(key.scopes), "prefix": key.prefix,
            "expires_at": key.expires_at.isoformat() if key.expires_at else None}


def create(project: Project, actor, name: Any, scopes: Any) -> tuple[ApiKey, str]:
    name, scopes = valid_name(name), valid_scopes(scopes)
    with transaction.atomic():
        key, raw = project.issue_api_key(name, scopes)
        audit.record(project, actor, "key.create", key, after=describe(key))
    return key, raw


def rotate(key: ApiKey, actor, grace_seconds: Any) -> tuple[ApiKey, str]:
    """A new key with the old one's name and scopes; the old one keeps working
    for `grace_seconds` (0: stops at once), so agents can move over."""
    grace = valid_grace(grace_seconds)
    with transaction.atomic():
        old = ApiKey.objects.select_for_update().get(project_id=key.project_id, id=key.pk)
        if not old.is_active:
            raise KeyConflict("this key is revoked or expired; create a new key instead")
        before = describe(old)
        now = timezone.now()
        ends = now + timedelta(seconds=grace)
        # Rotating again within a grace never lengthens it.
        old.expires_at = min(ends, old.expires_at) if old.expires_at else ends
        if grace == 0:
            old.revoked_at = now
        old.save(update_fields=["expires_at", "revoked_at"])
        new, raw = old.project.issue_api_key(old.name, old.scopes)
        audit.record(old.project, actor, "key.rotate", old, before=before, after=describe(old),
                     extra={"grace_seconds": grace, "new_key": {"id": new.pk, "prefix": new.prefix}})
    return new, raw


def revoke(key: ApiKey, actor) -> ApiKey:
    """Stops the key at once (its next request gets 401). Revoking a revoked key changes nothing."""
    with transaction.atomic():
        old = ApiKey.objects.select_for_update().get(project_id=key.project_id, id=key.pk)
        if old.revoked_at is None:
            old.revoked_at = timezone.now()
            old.save(update_fields=["revoked_at"])
            audit.record(old.project, actor, "key.revoke", old, extra=describe(old))
    return old


def is_revoked(key: ApiKey) -> bool:
    """Revoked, or a rotated key past its grace: either way its requests get 401."""
    return not key.is_active


def as_json(key: ApiKey) -> dict:
    """A key as the API lists it: never its secret."""
    return {"id": key.pk, "name": key.name, "scopes": list(key.scopes), "prefix": key.prefix,
            "created_at": key.created_at, "last_used_at": key.last_used_at, "revoked": is_revoked(key),
            "revoked_at": key.revoked_at, "expires_at": key.expires_at}


def issued_json(key: ApiKey, raw: str) -> dict:
    """A key just made: the one answer that carries its secret."""
    return {**as_json(key), "key": raw}


def of_project(project: Project):
    return ApiKey.objects.filter(project=project).order_by("-created_at", "-pk")

"""The audit log: who changed what in a project's configuration.

Every use case that changes keys, members, roles, alert rules, destinations,
silences, the fuse policy, datasets, project settings or retention calls
`record` inside the transaction of its change, so an entry exists exactly when
the change does. `detail` holds only the fields that changed, as
`{"changed": {field: {"before": old, "after": new}}}`, plus anything the
caller adds (e.g. the name of a key, never its secret)."""

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from tenancy.models import ApiKey, AuditEntry, Project

SYSTEM = "system"


def actor_label(actor) -> str:
    """How an entry names who acted: `user:NAME`, `key:PREFIX (NAME)`, or a word
    such as "system" for a job."""
    if actor is None:
        return SYSTEM
    if isinstance(actor, str):
        return actor
    key = _key_of(actor)
    if key is not None:
        return f"key:{key.prefix}… ({key.name})"
    user = _user_of(actor)
    if user is not None:
        return f"user:{user.get_username()}"
    return str(actor)


def changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The fields whose values differ, each with its value before and after
    (a field missing on one side is None there)."""
    before, after = plain_json(before or {}), plain_json(after or {})
    changed = {}
    for field in sorted(set(before) | set(after)):
        old, new = before.get(field), after.get(field)
        if old != new:
            changed[field] = {"before": old, "after": new}
    return changed


def record(
    project: Project,
    actor,
    action: str,
    obj,
    *,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> AuditEntry | None:
    """Writes one entry for `project` (or its id). `actor` is a request's user (a person, or the API
    client of a key), a User, an ApiKey, or a word. `obj` is a model instance or
    a `(type, id, words)` triple. An update that changed nothing writes nothing
    (and returns None); a creation or deletion always writes."""
    detail: dict[str, Any] = dict(extra or {})
    if before is not None or after is not None:
        changed = changes(before, after)
        if before is not None and after is not None and not changed:
            return None
        detail["changed"] = changed
    object_type, object_id, words = describe(obj)
    return AuditEntry.objects.create(
        project_id=getattr(project, "pk", project),
        actor=actor_label(actor)[:200],
        actor_user=_user_of(actor),
        actor_key=_key_of(actor),
        action=action,
        object_type=object_type,
        object_id=object_id,
        object=words[:300],
        detail=plain_json(detail),
    )


def plain_json(value):
    """`value` as plain JSON types (times as ISO 8601 strings), as the entry will read back."""
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def flat(document: dict[str, Any] | None, prefix: str = "") -> dict[str, Any]:
    """A nested document as dotted fields (`default.by_step.verify.block`), so a
    change shows as the few leaves that moved rather than the whole document."""
    fields: dict[str, Any] = {}
    for key, value in (document or {}).items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            # An empty table has no fields: emptying one shows each of its fields going.
            fields.update(flat(value, name))
        else:
            fields[name] = value
    return fields


def describe(obj) -> tuple[str, str, str]:
    if isinstance(obj, tuple):
        object_type, object_id, words = obj
        return str(object_type), str(object_id or ""), str(words)
    if isinstance(obj, models.Model):
        object_type = obj._meta.model_name
        return object_type, str(obj.pk or ""), f"{obj._meta.verbose_name} {obj.pk}: {obj}"
    return "project", "", str(obj)


def _key_of(actor) -> ApiKey | None:
    if isinstance(actor, ApiKey):
        return actor
    key = getattr(actor, "api_key", None)
    return key if isinstance(key, ApiKey) else None


def _user_of(actor):
    # A session reader stands for its user; an API client is no user.
    if isinstance(actor, (str, ApiKey)) or actor is None:
        return None
    user = getattr(actor, "user", actor)
    if getattr(user, "pk", None) is not None and hasattr(user, "get_username"):
        return user
    return None

"""Reading the audit log: the filters the API and the page share, and how an
entry reads in JSON. Entries are written by tenancy/audit.py."""

import json

from rest_framework import serializers

from core.params import TimestampField
from tenancy.models import AuditEntry, Project

FILTERS = ("action", "actor", "object_type", "since", "until")


class AuditFilters(serializers.Serializer):
    """`?action=` (exact, e.g. `alert_rule.update`), `?actor=` (any part of the
    actor's name, e.g. a user name or a key's name), `?object_type=` (exact, e.g.
    `alert_rule`), `?since=` (from, inclusive) and `?until=` (before) as ISO 8601."""

    action = serializers.CharField(required=False, max_length=64)
    actor = serializers.CharField(required=False, max_length=200)
    object_type = serializers.CharField(required=False, max_length=64)
    since = TimestampField(required=False)
    until = TimestampField(required=False)


def entries(project: Project, filters: dict):
    """The project's entries that pass `filters` (AuditFilters' validated data), newest first."""
    found = AuditEntry.objects.filter(project=project)
    if filters.get("action"):
        found = found.filter(action=filters["action"])
    if filters.get("actor"):
        found = found.filter(actor__icontains=filters["actor"])
    if filters.get("object_type"):
        found = found.filter(object_type=filters["object_type"])
    if filters.get("since"):
        found = found.filter(at__gte=filters["since"])
    if filters.get("until"):
        found = found.filter(at__lt=filters["until"])
    return found.order_by("-at", "-id")


def actor_kind(entry: AuditEntry) -> str:
    if entry.actor_key_id is not None or entry.actor.startswith("key:"):
        return "key"
    if entry.actor_user_id is not None or entry.actor.startswith("user:"):
        return "person"
    return "system"


def entry_json(entry: AuditEntry) -> dict:
    return {"id": entry.pk, "at": entry.at, "actor": entry.actor, "actor_type": actor_kind(entry),
            "action": entry.action, "object": entry.object, "object_type": entry.object_type,
            "object_id": entry.object_id, "detail": entry.detail}


def shown(value) -> str:
    """A field's value as the page shows it: text as it is, nothing as a dash, the rest as compact JSON."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def changed_rows(entry: AuditEntry) -> list[dict]:
    """The changed fields as rows of a small before/after table."""
    changed = (entry.detail or {}).get("changed") or {}
    return [{"field": field, "before": shown(values.get("before")), "after": shown(values.get("after"))}
            for field, values in changed.items()]


def other_details(entry: AuditEntry) -> list[tuple[str, str]]:
    """What the action added beside the changed fields (a note, counts, a key's name)."""
    return [(key, shown(value)) for key, value in (entry.detail or {}).items() if key != "changed"]


def known_values(project: Project) -> dict[str, list[str]]:
    """The actions and object types the project's log holds, for the page's pickers."""
    found = AuditEntry.objects.filter(project=project)
    return {"actions": sorted(set(found.values_list("action", flat=True).distinct())),
            "object_types": sorted(set(found.values_list("object_type", flat=True).distinct()))}

"""Silences: one domain call per use case, and which silence holds a rule's
notifications back at a given time. Input has been validated by SilenceSerializer."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from alerts.models import Silence
from tenancy import audit


def _object(silence: Silence) -> tuple:
    held = f"rule {silence.rule_id}" if silence.rule_id else "every rule"
    return ("silence", silence.pk, f"silence {silence.pk} of {held}")


def audited(silence: Silence) -> dict:
    return {"rule_id": silence.rule_id, "until": silence.until, "reason": silence.reason,
            "ended_at": silence.ended_at}


@transaction.atomic
def create(project, data: dict, created_by: str, actor=None) -> Silence:
    """`created_by` is how the silence list names who made it; `actor` is the
    principal the audit log records (default: that name)."""
    silence = Silence.objects.create(project=project, rule_id=data.get("rule_id"), until=data["until"],
                                     reason=data["reason"], created_by=created_by[:200])
    audit.record(project, actor or created_by, "silence.create", _object(silence), before={}, after=audited(silence))
    return silence


@transaction.atomic
def end(silence: Silence, ended_by: str, actor=None) -> None:
    """Ends it now (an ended silence stays listed in the history of what it held back)."""
    now = timezone.now()
    if Silence.objects.filter(project_id=silence.project_id, id=silence.pk, ended_at__isnull=True).update(ended_at=now, ended_by=ended_by[:200]):
        before = audited(silence)
        audit.record(silence.project_id, actor or ended_by, "silence.end", _object(silence), before=before,
                     after={**before, "ended_at": now})


def active(project, now: datetime | None = None):
    return (Silence.objects.filter(project=project, ended_at__isnull=True, until__gt=now or timezone.now())
            .select_related("rule"))


class Active:
    """The silences active at `now` for some projects, asked per rule in one query."""

    def __init__(self, project_ids, now: datetime):
        self.project_wide: dict[int, Silence] = {}
        self.per_rule: dict[int, Silence] = {}
        for silence in (Silence.objects.filter(project_id__in=set(project_ids), ended_at__isnull=True, until__gt=now)
                        .order_by("-until")):
            if silence.rule_id is None:
                self.project_wide.setdefault(silence.project_id, silence)
            else:
                self.per_rule.setdefault(silence.rule_id, silence)

    def for_rule(self, rule) -> Silence | None:
        """The silence that holds it back (its own first, else the project's), or None."""
        return self.per_rule.get(rule.pk) or self.project_wide.get(rule.project_id)


def as_json(silence: Silence) -> dict:
    return {"id": silence.pk, "rule_id": silence.rule_id, "until": silence.until, "reason": silence.reason,
            "created_by": silence.created_by, "created_at": silence.created_at, "ended_at": silence.ended_at}

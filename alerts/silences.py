"""Silences: one domain call per use case, and which silence holds a rule's
notifications back at a given time. Input has been validated by SilenceSerializer."""

from datetime import datetime

from django.utils import timezone

from alerts.models import Silence


def create(project, data: dict, actor: str) -> Silence:
    return Silence.objects.create(project=project, rule_id=data.get("rule_id"), until=data["until"],
                                  reason=data["reason"], created_by=actor[:200])


def end(silence: Silence, actor: str) -> None:
    """Ends it now (an ended silence stays listed in the history of what it held back)."""
    Silence.objects.filter(pk=silence.pk, ended_at__isnull=True).update(ended_at=timezone.now(),
                                                                         ended_by=actor[:200])


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

"""Project-wide destinations (healthchecks' channels): one domain call per use
case. Input has been validated by SharedDestinationSerializer."""

from django.db import transaction
from django.utils import timezone

from alerts.models import SharedDestination, describe_target


def _split(data: dict) -> tuple[str, str, dict]:
    config = {k: v for k, v in data.items() if k not in ("name", "type")}
    return data["name"], data["type"], config


def create(project, data: dict) -> SharedDestination:
    name, kind, config = _split(data)
    return SharedDestination.objects.create(project=project, name=name, kind=kind, config=config)


@transaction.atomic
def update(destination: SharedDestination, data: dict) -> SharedDestination:
    """Replaces name, kind and config; every rule using it sends to the new one from now on.
    A changed destination is a new chance: it is enabled again."""
    destination.name, destination.kind, destination.config = _split(data)
    destination.disabled_at, destination.disabled_reason = None, ""
    destination.updated_at = timezone.now()
    destination.save()
    return destination


def enable(destination: SharedDestination) -> None:
    SharedDestination.objects.filter(pk=destination.pk).update(disabled_at=None, disabled_reason="")


def as_json(destination: SharedDestination) -> dict:
    return {"id": destination.pk, "name": destination.name, "type": destination.kind, **destination.config,
            "target": describe_target(destination.kind, destination.config),
            "disabled": destination.disabled_at is not None, "disabled_reason": destination.disabled_reason,
            "rules": sorted(use.rule_id for use in destination.uses.all()),
            "created_at": destination.created_at, "updated_at": destination.updated_at}

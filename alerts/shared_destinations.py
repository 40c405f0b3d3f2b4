"""Project-wide destinations (healthchecks' channels): one domain call per use
case. Input has been validated by SharedDestinationSerializer."""

from django.db import transaction
from django.utils import timezone

from alerts.models import SharedDestination, describe_target
from tenancy import audit


def _split(data: dict) -> tuple[str, str, dict]:
    config = {k: v for k, v in data.items() if k not in ("name", "type")}
    return data["name"], data["type"], config


def audited(destination: SharedDestination) -> dict:
    # The target as the delivery log names it: a webhook's secret or a routing key is never copied.
    return {"name": destination.name, "type": destination.kind,
            "target": describe_target(destination.kind, destination.config),
            "disabled": destination.disabled_at is not None}


def _object(destination: SharedDestination) -> tuple:
    return ("destination", destination.pk, f"destination {destination.pk}: {destination.name}")


@transaction.atomic
def create(project, data: dict, actor=None) -> SharedDestination:
    name, kind, config = _split(data)
    created = SharedDestination.objects.create(project=project, name=name, kind=kind, config=config)
    audit.record(project, actor, "destination.create", _object(created), before={}, after=audited(created))
    return created


@transaction.atomic
def update(destination: SharedDestination, data: dict, actor=None) -> SharedDestination:
    """Replaces name, kind and config; every rule using it sends to the new one from now on.
    A changed destination is a new chance: it is enabled again."""
    before = audited(destination)
    destination.name, destination.kind, destination.config = _split(data)
    destination.disabled_at, destination.disabled_reason = None, ""
    destination.updated_at = timezone.now()
    destination.save()
    audit.record(destination.project_id, actor, "destination.update", _object(destination), before=before,
                 after=audited(destination))
    return destination


@transaction.atomic
def delete(destination: SharedDestination, actor=None) -> None:
    audit.record(destination.project_id, actor, "destination.delete", _object(destination),
                 before=audited(destination), after={})
    destination.delete()


@transaction.atomic
def enable(destination: SharedDestination, actor=None) -> None:
    SharedDestination.objects.filter(pk=destination.pk).update(disabled_at=None, disabled_reason="")
    before = audited(destination)
    audit.record(destination.project_id, actor, "destination.enable", _object(destination), before=before,
                 after={**before, "disabled": False})


def as_json(destination: SharedDestination) -> dict:
    return {"id": destination.pk, "name": destination.name, "type": destination.kind, **destination.config,
            "target": describe_target(destination.kind, destination.config),
            "disabled": destination.disabled_at is not None, "disabled_reason": destination.disabled_reason,
            "rules": sorted(use.rule_id for use in destination.uses.all()),
            "created_at": destination.created_at, "updated_at": destination.updated_at}

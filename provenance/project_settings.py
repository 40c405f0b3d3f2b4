"""A project's settings as the API and the settings page read and change them
(`GET/PATCH /api/v1/project`): the high-uncertainty threshold, retention and
the price table.

`validate_changes` checks a whole change before anything is written and names
every field at fault (`retention.trace_days: ...`), so a bad value changes
nothing.
"""

import copy

from django.db import transaction

from core.errors import ApiError
from core.field_checks import FieldErrors, count_problem, number_problem
from provenance.costs import validate_prices
from tenancy import audit
from tenancy.models import Project

MAX_DAYS = 36500  # a hundred years: anything longer is "keep forever" (null)
RETENTION_FIELDS = ("trace_days", "full_content_days", "keep_full_below")
TOP_FIELDS = ("name", "high_uncertainty_threshold", "retention", "prices")
READ_ONLY = ("slug",)


class SettingsError(ApiError):
    def __init__(self, fields: dict[str, str]):
        super().__init__("invalid settings: " + "; ".join(f"{k}: {v}" for k, v in fields.items()), fields=fields)


def as_dict(project: Project) -> dict:
    return {
        "slug": project.slug,
        "name": project.name,
        "high_uncertainty_threshold": project.high_uncertainty_threshold,
        "retention": {
            "trace_days": project.trace_days,
            "full_content_days": project.full_content_days,
            "keep_full_below": project.keep_full_below,
        },
        "prices": project.prices,
    }


def _share(value) -> str | None:
    return number_problem(value, 0, 1, below="must be between 0 and 1")


def _days(value, minimum: int) -> str | None:
    if value is None:
        return None
    return count_problem(value, minimum, MAX_DAYS, not_an_integer="must be a whole number of days, or null to keep forever",
                         below=f"must be between {minimum} and {MAX_DAYS} days, or null to keep forever")


def validate_changes(data, project: Project | None = None) -> dict:
    """The model field changes a PATCH body asks for; raises SettingsError.
    A read-only field equal to the project's own value is no change: a document
    read with GET may be sent back whole."""
    if not isinstance(data, dict):
        raise SettingsError({"non_field_errors": "expected a JSON object"})
    errors = FieldErrors()
    changes: dict = {}
    for key in data:
        if key in READ_ONLY:
            if project is None or data[key] != getattr(project, key):
                errors[key] = "cannot be changed"
        elif key not in TOP_FIELDS:
            errors[key] = "unknown field"
    if "name" in data:
        name = data["name"]
        if not isinstance(name, str) or len(name) > 200:
            errors["name"] = "must be a string of at most 200 characters"
        else:
            changes["name"] = name
    if "high_uncertainty_threshold" in data:
        if errors.check("high_uncertainty_threshold", _share(data["high_uncertainty_threshold"])):
            changes["high_uncertainty_threshold"] = float(data["high_uncertainty_threshold"])
    if "retention" in data:
        retention = data["retention"]
        if not isinstance(retention, dict):
            errors["retention"] = "must be an object"
        else:
            errors.unknown_keys(retention, RETENTION_FIELDS, "unknown field", lambda key: f"retention.{key}")
            checks = {"trace_days": lambda v: _days(v, 1), "full_content_days": lambda v: _days(v, 0),
                      "keep_full_below": _share}
            for key, check in checks.items():
                if key in retention:
                    if errors.check(f"retention.{key}", check(retention[key])):
                        value = retention[key]
                        changes[key] = float(value) if key == "keep_full_below" else value
    if "prices" in data:
        # The whole table: a model left out loses its price (for nodes stored from then on).
        prices, problems = validate_prices(data["prices"])
        errors.update(problems)
        if not problems:
            changes["prices"] = prices
    errors.refuse(SettingsError)
    return changes


def audited(project: Project, changes: dict, applied: bool = False) -> dict:
    """The changed settings as the audit log compares them, before (or, `applied`,
    after) the change: dotted fields (`retention.trace_days`, `prices.gpt-4o.input`)
    so a change shows only what moved."""
    if applied:
        project = copy.copy(project)
        for field, value in changes.items():
            setattr(project, field, value)
    return {name: value for name, value in audit.flat(as_dict(project)).items()
            if name.split(".")[-1] in changes or name.split(".")[0] in changes}


def change(project: Project, data, actor=None) -> Project:
    changes = validate_changes(data, project)
    if changes:
        with transaction.atomic():
            before = audited(project, changes)
            Project.objects.filter(pk=project.pk).update(**changes)
            after = audited(project, changes, applied=True)
            audit.record(project, actor, "project.update", ("project", project.pk, f"project {project.slug}"),
                         before=before, after=after)
            if "high_uncertainty_threshold" in changes:
                # Which answers are doubtful, and what caused them, moved with it.
                from provenance import tasks

                transaction.on_commit(lambda: tasks.rebuild_root_causes.delay(project.pk))
        for field, value in changes.items():
            setattr(project, field, value)
    return project

"""The versioned policy store: one domain call per use case (read the current
policy, its version alone, replace it, roll it back, list the history).

The unique (project, version) index serves the current version with one
backward index probe, which is all a conditional GET (`If-None-Match`) costs.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from policy.document import PolicyError, default_profiles
from policy.models import PolicySource, PolicyVersion
from tenancy import audit
from tenancy.models import Project

DEFAULT_NOTE = "built-in defaults"
MAX_VERSION = 2**31 - 1  # the column's range: a larger number names no version


@dataclass(frozen=True)
class Policy:
    version: int
    profiles: dict
    note: str
    updated_at: datetime
    changed_by: str = ""
    source: str = ""
    rolled_back_from: int | None = None

    @property
    def etag(self) -> str:
        return etag_for(self.version)

    def profile(self, name: str = "default") -> dict:
        return self.profiles.get(name) or self.profiles["default"]

    @property
    def source_label(self) -> str:
        return PolicySource(self.source).label if self.source in PolicySource.values else "built in"


def etag_for(version: int) -> str:
    return f'"policy-v{version}"'


def from_row(row: PolicyVersion) -> Policy:
    return Policy(row.version, row.profiles, row.note, row.created_at, row.changed_by, row.source,
                  row.rolled_back_from)


def builtin(project: Project) -> Policy:
    return Policy(0, default_profiles(), DEFAULT_NOTE, project.created_at, "", "")


def current(project: Project) -> Policy:
    row = PolicyVersion.objects.filter(project=project).order_by("-version").first()
    return from_row(row) if row else builtin(project)


def current_version(project: Project | int) -> int:
    found = (PolicyVersion.objects.filter(project_id=getattr(project, "pk", project))
             .order_by("-version").values_list("version", flat=True).first())
    return found or 0


def get(project: Project, version: int) -> Policy | None:
    if version == 0:
        return builtin(project)
    row = PolicyVersion.objects.filter(project=project, version=version).first()
    return from_row(row) if row else None


def history(project: Project) -> list[Policy]:
    """Every version, newest first, version 0 last."""
    return [*(from_row(row) for row in PolicyVersion.objects.filter(project=project).order_by("-version")),
            builtin(project)]


def replace(project: Project, profiles: dict, note: str, changed_by: str = "",
            source: str = PolicySource.API, rolled_back_from: int | None = None,
            at: datetime | None = None, actor=None) -> Policy:
    """Writes the next version. `profiles` has been validated (document.parse_document);
    `at` backdates it (the demo's history), default now. `actor` is the principal
    the audit log records (default: `changed_by`, a name)."""
    with transaction.atomic():
        # Concurrent writers of one project queue here, so each gets its own number.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        previous = current(project)
        row = PolicyVersion.objects.create(
            project=project, version=previous.version + 1, profiles=profiles, note=note,
            changed_by=changed_by[:200], source=source, rolled_back_from=rolled_back_from,
            **({"created_at": at} if at else {}),
        )
        audit.record(project, actor or changed_by or None,
                     "policy.rollback" if rolled_back_from is not None else "policy.update",
                     ("policy", "", f"fuse policy version {row.version}"),
                     before={"version": previous.version, **audit.flat(previous.profiles)},
                     after={"version": row.version, **audit.flat(profiles)},
                     extra={"note": note, "source": source})
    return from_row(row)


def rollback(project: Project, version, changed_by: str = "", note: str = "", actor=None) -> Policy:
    """A new version equal to `version`."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise PolicyError({"version": "must be an integer version number"})
    target = get(project, version) if 0 <= version <= MAX_VERSION else None
    if target is None:
        raise PolicyError({"version": f"no version {version}; this policy has versions 0–{current_version(project)}"})
    return replace(project, target.profiles, note or f"rollback to version {version}", changed_by,
                   PolicySource.ROLLBACK, rolled_back_from=version, actor=actor)


def max_rounds(project: Project | int, profile: str = "default") -> int:
    """The round limit of a profile of the current policy (health, alerts)."""
    row = (PolicyVersion.objects.filter(project_id=getattr(project, "pk", project))
           .order_by("-version").values_list("profiles", flat=True).first())
    profiles = row or default_profiles()
    return (profiles.get(profile) or profiles["default"])["max_rounds"]

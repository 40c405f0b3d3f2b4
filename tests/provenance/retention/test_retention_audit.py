"""The audit log is kept under the project's retention: the job deletes the
entries older than `trace_days`, and only the project's own."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenancy.models import AuditEntry, Project
from tests.provenance.retention.retention_runs import apply_retention

pytestmark = pytest.mark.django_db


def aged(project, days: float) -> None:
    """Makes the project's entries so far `days` old."""
    AuditEntry.objects.filter(project=project).update(at=timezone.now() - timedelta(days=days))


def actions(client) -> list[str]:
    return [entry["action"] for entry in client.get("/api/v1/audit").json()]


def test_entries_older_than_trace_days_are_deleted(api, project):
    api.post("/api/v1/datasets", {"name": "old"}, format="json")
    aged(project, 40)
    api.post("/api/v1/datasets", {"name": "recent"}, format="json")
    aged_recent = AuditEntry.objects.filter(project=project, object="dataset recent")
    aged_recent.update(at=timezone.now() - timedelta(days=20))
    api.patch("/api/v1/project", {"retention": {"trace_days": 30}}, format="json")

    apply_retention()

    assert [e.object for e in AuditEntry.objects.filter(project=project)] == ["project acme", "dataset recent"]
    assert actions(api) == ["project.update", "dataset.create"]


def test_without_trace_days_the_log_is_kept(api, project):
    api.post("/api/v1/datasets", {"name": "old"}, format="json")
    api.patch("/api/v1/project", {"retention": {"full_content_days": 1}}, format="json")
    aged(project, 4000)

    apply_retention()

    assert AuditEntry.objects.filter(project=project).count() == 2


def test_a_dry_run_deletes_nothing(api, project):
    api.patch("/api/v1/project", {"retention": {"trace_days": 1}}, format="json")
    aged(project, 10)

    apply_retention("--dry-run")

    assert AuditEntry.objects.filter(project=project).count() == 1


def test_another_projects_retention_leaves_this_log_alone(api, other_api, project):
    api.post("/api/v1/datasets", {"name": "kept"}, format="json")
    aged(project, 400)
    other_api.patch("/api/v1/project", {"retention": {"trace_days": 1}}, format="json")
    aged(Project.objects.get(slug="globex"), 10)

    apply_retention()

    assert AuditEntry.objects.filter(project=project).count() == 1
    assert not AuditEntry.objects.filter(project__slug="globex").exists()

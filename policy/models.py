from django.db import models
from django.utils import timezone

from tenancy.models import Project


class PolicySource(models.TextChoices):
    API = "api", "API"
    PAGE = "page", "policy page"
    CALIBRATION = "calibration", "calibration"
    ROLLBACK = "rollback", "rollback"
    DEMO = "demo", "demo"


class PolicyVersion(models.Model):
    """One version of a project's fuse policy. Versions are never changed:
    a change or a rollback writes the next one. Version 0 (the built-in
    default) is not stored; a project without rows is at version 0."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    version = models.PositiveIntegerField()
    profiles = models.JSONField()
    note = models.TextField(blank=True, default="")
    changed_by = models.CharField(max_length=200, blank=True, default="",
                                  help_text="The person or API key that made this version.")
    source = models.CharField(max_length=16, choices=PolicySource.choices, default=PolicySource.API)
    rolled_back_from = models.PositiveIntegerField(null=True, blank=True,
                                                   help_text="The version this one copies, for a rollback.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="policy_version_unique")]
        ordering = ["-version"]

    def __str__(self):
        return f"{self.project_id} v{self.version}"

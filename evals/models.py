from django.db import models
from django.urls import reverse
from django.utils import timezone

from core.project_keys import ProjectForeignKey
from tenancy.models import Project


class Dataset(models.Model):
    """A truth set. `version` is the newest version's number (0 when created)."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, default="")
    version = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="dataset_unique_per_project")]
        ordering = ["name"]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("evals:dataset-detail", args=[self.project.slug, self.name])


class DatasetVersion(models.Model):
    """What one change did, so the versions list says what changed."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, models.CASCADE, related_name="versions", db_constraint=False)
    number = models.IntegerField()
    action = models.CharField(max_length=32, help_text="created, items, delete, rollback, import, trace")
    note = models.CharField(max_length=300, blank=True, default="")
    created = models.IntegerField(default=0)
    updated = models.IntegerField(default=0)
    deleted = models.IntegerField(default=0)
    item_count = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number", "project"], name="dataset_version_unique"),
            ProjectForeignKey(field="dataset", name="dataset_version_dataset_in_project"),
        ]
        ordering = ["-number"]

    def __str__(self):
        return f"{self.dataset_id} v{self.number}"


class Item(models.Model):
    """One form of one item, valid from version `since` up to (not including)
    `until`; the current form has no `until`. A change closes the old row and
    adds a new one, so every version reads exactly as it was."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, models.CASCADE, related_name="+", db_constraint=False)
    item_id = models.CharField(max_length=255)
    since = models.IntegerField()
    until = models.IntegerField(null=True)
    input = models.JSONField(null=True)
    expected = models.JSONField(null=True)
    kind = models.CharField(max_length=16)
    tags = models.JSONField(default=list)
    origin = models.CharField(max_length=16, default="synthetic")
    tolerance = models.JSONField(null=True)
    drifted = models.BooleanField(default=False)
    drift_current = models.JSONField(null=True, help_text="The source of truth's value when it was found drifted.")
    drifted_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["dataset", "item_id", "since"], name="eval_item_versions"),
            models.Index(fields=["dataset", "until", "since"], name="eval_item_span"),
        ]
        constraints = [ProjectForeignKey(field="dataset", name="eval_item_dataset_in_project")]

    def __str__(self):
        return f"{self.item_id} (v{self.since}–{self.until or ''})"


class RunStatus(models.TextChoices):
    OPEN = "open"
    FINISHED = "finished"


class Run(models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, models.CASCADE, related_name="runs", db_constraint=False)
    dataset_version = models.IntegerField()
    name = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["dataset", "-created_at"], name="eval_run_recent"),
            models.Index(fields=["project", "-created_at"], name="eval_run_project_recent"),
        ]
        constraints = [ProjectForeignKey(field="dataset", name="eval_run_dataset_in_project")]

    def __str__(self):
        return self.name or f"run {self.pk}"

    def get_absolute_url(self):
        return reverse("evals:run-detail", args=[self.project.slug, self.pk])


class Result(models.Model):
    """The newest result for one item of one run, judged when it arrived."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    run = models.ForeignKey(Run, models.CASCADE, related_name="results", db_constraint=False)
    item_id = models.CharField(max_length=255)
    actual = models.JSONField(null=True)
    passed = models.BooleanField()
    detail = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    trace_id = models.CharField(max_length=255, blank=True, default="")
    product_id = models.CharField(max_length=255, blank=True, default="")
    latency_ms = models.FloatField(null=True)
    escalated = models.BooleanField(default=False)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "item_id", "project"], name="eval_result_unique_per_item"),
            ProjectForeignKey(field="run", name="eval_result_run_in_project"),
        ]

    def __str__(self):
        return f"{self.item_id}: {'pass' if self.passed else 'fail'}"

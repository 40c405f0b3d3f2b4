"""Who owns the data: projects, their members, and the API keys that write
and read for a project."""

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from tenancy.key_limits import remember_issued_key

API_KEY_PREFIX = "dd_"


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    high_uncertainty_threshold = models.FloatField(
        default=0.5, help_text="Nodes with a confidence below this are high-uncertainty."
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="projects")
    created_at = models.DateTimeField(default=timezone.now)
    # Retention (provenance/retention/): None keeps forever.
    trace_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Traces whose last activity is older than this many days are deleted."
    )
    full_content_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="After this many days, only nodes that matter keep their full text."
    )
    keep_full_below = models.FloatField(
        default=0.8, help_text="Past full_content_days, nodes with a confidence below this keep their full text."
    )
    prices = models.JSONField(
        default=dict, blank=True,
        help_text='USD per million tokens by model: {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}.',
    )

    class Meta:
        # Moved from provenance without touching the database: the table keeps its name.
        db_table = "provenance_project"
        ordering = ["slug"]

    def __str__(self):
        return self.slug

    def get_absolute_url(self):
        return reverse("provenance:trace-list", args=[self.slug])

    def issue_api_key(self, name: str = "default") -> tuple["ApiKey", str]:
        """Creates a key; the raw value is returned once and only its hash is kept."""
        raw = API_KEY_PREFIX + secrets.token_urlsafe(32)
        key = ApiKey.objects.create(project=self, name=name, prefix=raw[:10], key_hash=hash_api_key(raw))
        remember_issued_key(raw)
        return key, raw


class ApiKey(models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="default")
    prefix = models.CharField(max_length=16, help_text="The first characters, to tell keys apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "provenance_apikey"
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.name})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self):
        self.revoked_at = timezone.now()
        self.save(update_fields=["revoked_at"])

"""Who owns the data: projects, their members and roles, the API keys that
write and read for a project with their scopes, invitations, and the audit log
of every change made to a project's configuration."""

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from tenancy.key_limits import remember_issued_key

API_KEY_PREFIX = "dd_"


class Scope(models.TextChoices):
    """What an API key may do (the contract's "Scopes")."""

    INGEST = "ingest", "ingest"
    READ = "read", "read"
    ADMIN = "admin", "admin"


ALL_SCOPES = [Scope.INGEST.value, Scope.READ.value, Scope.ADMIN.value]


def all_scopes() -> list[str]:
    return list(ALL_SCOPES)


class Role(models.TextChoices):
    """What a person may do in a project's pages (and its API through a session).
    Ordered: each role may do everything the one before it may."""

    VIEWER = "viewer", "viewer"
    EDITOR = "editor", "editor"
    ADMIN = "admin", "admin"


ROLE_ORDER = [Role.VIEWER.value, Role.EDITOR.value, Role.ADMIN.value]


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    high_uncertainty_threshold = models.FloatField(
        default=0.5, help_text="Nodes with a confidence below this are high-uncertainty."
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="projects", through="Membership"
    )
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

    def issue_api_key(self, name: str = "default", scopes: list[str] | None = None) -> tuple["ApiKey", str]:
        """Creates a key; the raw value is returned once and only its hash is kept."""
        raw = API_KEY_PREFIX + secrets.token_urlsafe(32)
        key = ApiKey.objects.create(
            project=self, name=name, prefix=raw[:10], key_hash=hash_api_key(raw),
            scopes=list(scopes) if scopes is not None else all_scopes(),
        )
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
    scopes = models.JSONField(default=all_scopes, help_text='Any of "ingest", "read", "admin".')
    # A rotated key keeps working until then (the grace its admin chose); None: until revoked.
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "provenance_apikey"
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.prefix}… ({self.name})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    def revoke(self):
        self.revoked_at = timezone.now()
        self.save(update_fields=["revoked_at"])


class Membership(models.Model):
    """A person in a project, with a role. The table is the one Django made for
    the plain many-to-many before roles existed (migration 0003)."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        db_table = "provenance_project_members"
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_once_per_project")]

    def __str__(self):
        return f"{self.user} in {self.project} ({self.role})"


class Invitation(models.Model):
    """A single-use, expiring link that makes whoever opens it a member with
    `role` (the token is kept hashed, like a key)."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    email = models.EmailField(blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"invitation to {self.project} as {self.role}"


class AuditEntry(models.Model):
    """One change to a project's configuration: who, when, what, and the
    fields that changed (before and after). Written by tenancy/audit.py in the
    transaction of the change it records."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="audit_entries")
    at = models.DateTimeField(default=timezone.now)
    actor = models.CharField(max_length=200, help_text="The person (user:NAME) or key (key:PREFIX NAME).")
    actor_user = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    actor_key = models.ForeignKey(ApiKey, models.SET_NULL, null=True, blank=True, related_name="+")
    action = models.CharField(max_length=64, help_text='What happened, e.g. "alert_rule.update".')
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64, blank=True)
    object = models.CharField(max_length=300, help_text="What it happened to, in words.")
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["project", "-at", "-id"], name="audit_newest_first")]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.object}"

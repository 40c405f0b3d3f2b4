import secrets

from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from core.project_keys import ProjectForeignKey
from tenancy.models import Project


class RuleState(models.TextChoices):
    OK = "ok"
    PENDING = "pending"
    FIRING = "firing"


class AlertRule(models.Model):
    """A rule as the contract defines it. `conditions` keeps the validated JSON
    (see alerts/conditions.py); the state-machine columns are written only by
    the evaluation, which claims rows before writing them."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="alert_rules")
    name = models.CharField(max_length=200)
    match = models.CharField(max_length=3, choices=[("all", "all"), ("any", "any")], default="all")
    conditions = models.JSONField(default=list)
    for_duration = models.CharField(max_length=16, default="0m", help_text="As written, e.g. 5m.")
    for_seconds = models.IntegerField(default=0)
    enabled = models.BooleanField(default=True)
    muted_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    state = models.CharField(max_length=8, choices=RuleState.choices, default=RuleState.OK)
    pending_since = models.DateTimeField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    last_values = models.JSONField(default=list, help_text="[{metric, value}] from the last evaluation.")
    last_holding = models.BooleanField(null=True)
    # What the destinations were last told, and when (storm control: alerts/storm.py).
    notified_state = models.CharField(max_length=8, default="resolved")
    notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "pk"]
        indexes = [models.Index(fields=["project", "enabled"], name="alertrule_project_enabled")]

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("alerts:rule-detail", args=[self.project.slug, self.pk])

    def is_muted(self, now=None) -> bool:
        return self.muted_until is not None and self.muted_until > (now or timezone.now())

    def destinations_in_project(self):
        """`destinations`, filtered by the rule's project too (one shard under Citus)."""
        return Destination.objects.filter(project_id=self.project_id, rule=self)


def destinations_of(project) -> models.Prefetch:
    """Prefetches rules' destinations (and their shared destination) within one project."""
    return models.Prefetch("destinations", queryset=Destination.objects.filter(project=project).select_related("shared"))


def uses_of(project, *related: str) -> models.Prefetch:
    """Prefetches shared destinations' uses (with `related`, joined within the project) within one project."""
    found = Destination.objects.filter(project=project)
    if related:
        found = found.filter(Q(**{f"{name}__project_id": models.F("project_id") for name in related})).select_related(*related)
    return models.Prefetch("uses", queryset=found)


class SharedDestination(models.Model):
    """A named destination of the whole project (healthchecks' channels): rules
    pick it by name, so changing the on-call address is one edit."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="shared_destinations")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=32)
    config = models.JSONField(default=dict)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="shared_destination_unique_name")]

    def __str__(self):
        return f"{self.name} ({self.kind})"

    @property
    def target(self) -> str:
        return describe_target(self.kind, self.config)


class Destination(models.Model):
    """Where a rule's notifications go; `config` is validated by the serializer
    of its kind (alerts/serializers.py) and read by its transport. A row with
    `shared` set sends through that project-wide destination (kind "shared")."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    rule = models.ForeignKey(AlertRule, models.CASCADE, related_name="destinations", db_constraint=False)
    kind = models.CharField(max_length=32, default="webhook")
    config = models.JSONField(default=dict)
    shared = models.ForeignKey(SharedDestination, models.CASCADE, null=True, blank=True, related_name="uses",
                               db_constraint=False)
    position = models.SmallIntegerField(default=0)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["position", "pk"]
        constraints = [
            ProjectForeignKey(field="rule", name="destination_rule_in_project"),
            ProjectForeignKey(field="shared", name="destination_shared_in_project"),
        ]

    def __str__(self):
        return f"{self.kind} {self.target}"

    @property
    def effective_kind(self) -> str:
        return self.shared.kind if self.shared_id else self.kind

    @property
    def effective_config(self) -> dict:
        return self.shared.config if self.shared_id else self.config

    @property
    def is_disabled(self) -> bool:
        return self.disabled_at is not None or bool(self.shared_id and self.shared.disabled_at is not None)

    @property
    def target(self) -> str:
        """Where it goes, as the delivery log shows it."""
        found = describe_target(self.effective_kind, self.effective_config)
        return f"{self.shared.name}: {found}" if self.shared_id else found


def describe_target(kind: str, config: dict) -> str:
    if "url" in config:
        return config["url"]
    if kind == "email":
        return ", ".join(config.get("to", []))
    if kind == "pagerduty":
        return "PagerDuty (routing key …" + config.get("routing_key", "")[-4:] + ")"
    return kind


class AlertEvent(models.Model):
    """One firing or resolution: the alert history and what notifications carry."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    rule = models.ForeignKey(AlertRule, models.CASCADE, related_name="events", db_constraint=False)
    state = models.CharField(max_length=8, choices=[("firing", "firing"), ("resolved", "resolved")])
    at = models.DateTimeField()
    values = models.JSONField(default=list, help_text="[{metric, value}], one per condition, in order.")
    window_start = models.DateTimeField(help_text="Start of the window example traces are taken from.")
    example_filters = models.JSONField(default=dict)
    example_trace_ids = models.JSONField(null=True, blank=True, help_text="Found when first shown.")
    muted = models.BooleanField(default=False, help_text="Recorded while the rule was muted: nothing was sent.")
    silence = models.ForeignKey("Silence", models.SET_NULL, null=True, blank=True, related_name="events",
                                db_constraint=False, help_text="The silence active when it was recorded: nothing was sent, ever.")
    held_back = models.BooleanField(default=False, help_text="Not sent when recorded: storm control.")
    sent_late_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Held back, then sent because the state it reports still held.")
    # Set by the tick that decides to send it, cleared by the fan-out (alerts/notifications.fan_out)
    # that makes its deliveries in the same transaction: the tick's own transaction writes no
    # delivery, and a fan-out is made once however many runners ask for it.
    fan_out_pending = models.BooleanField(default=False, help_text="To be sent: its deliveries are not made yet.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [
            models.Index(fields=["project", "-at"], name="alertevent_project_recent"),
            models.Index(fields=["rule", "-at"], name="alertevent_rule_recent"),
            # The periodic job's sweep for fan-outs whose message was lost: only the few pending rows.
            models.Index(fields=["id"], name="alertevent_fan_out_pending", condition=Q(fan_out_pending=True)),
        ]
        constraints = [
            ProjectForeignKey(field="rule", name="alertevent_rule_in_project"),
            ProjectForeignKey(field="silence", name="alertevent_silence_in_project"),
        ]

    def __str__(self):
        return f"{self.rule_id} {self.state} {self.at:%Y-%m-%d %H:%M}"

    @property
    def silenced(self) -> bool:
        """Recorded while the rule was muted or silenced: never delivered."""
        return self.muted or self.silence_id is not None


class Silence(models.Model):
    """Nothing is delivered for its rule (or, with no rule, every rule of the
    project) until `until` or until it is ended; state changes are still recorded."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="silences")
    rule = models.ForeignKey(AlertRule, models.CASCADE, null=True, blank=True, related_name="silences", db_constraint=False)
    until = models.DateTimeField()
    reason = models.CharField(max_length=500)
    created_by = models.CharField(max_length=200, help_text="The key or the person.")
    created_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["until", "pk"]
        indexes = [models.Index(fields=["project", "until"], name="silence_active",
                                condition=Q(ended_at__isnull=True))]
        constraints = [ProjectForeignKey(field="rule", name="silence_rule_in_project")]

    def __str__(self):
        return f"silence of {self.rule_id or 'every rule'} until {self.until:%Y-%m-%d %H:%M}"

    def is_active(self, now) -> bool:
        return self.ended_at is None and self.until > now


def new_webhook_id() -> str:
    return "msg_" + secrets.token_hex(12)


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class Delivery(models.Model):
    """One notification to one destination, tried until it succeeds, fails
    permanently or runs out of attempts. `next_attempt_at` is the schedule: a
    worker claims a due row by moving it forward (a lease) in a conditional
    UPDATE, so two runners never send the same attempt."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    rule = models.ForeignKey(AlertRule, models.CASCADE, null=True, blank=True, related_name="deliveries",
                             db_constraint=False, help_text="None for a project notice (checks not running).")
    event = models.ForeignKey(AlertEvent, models.CASCADE, null=True, blank=True, related_name="deliveries",
                              db_constraint=False)
    destination = models.ForeignKey(Destination, models.SET_NULL, null=True, blank=True, related_name="deliveries",
                                    db_constraint=False)
    target = models.CharField(max_length=2000, help_text="The destination's URL when the delivery was made.")
    webhook_id = models.CharField(max_length=64, default=new_webhook_id)
    kind = models.CharField(max_length=32, help_text="alert.firing, alert.resolved, alert.test or checks.not_running")
    payload = models.TextField(help_text="The exact JSON body; every attempt sends the same bytes.")
    status = models.CharField(max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempt_count = models.IntegerField(default=0)
    max_attempts = models.IntegerField(default=8)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True, default="")
    last_error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["next_attempt_at"], name="delivery_due",
                         condition=Q(status="pending")),
            models.Index(fields=["rule", "-created_at"], name="delivery_rule_recent"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["webhook_id", "project"], name="delivery_webhook_id_unique"),
            ProjectForeignKey(field="rule", name="delivery_rule_in_project"),
            ProjectForeignKey(field="event", name="delivery_event_in_project"),
            ProjectForeignKey(field="destination", name="delivery_destination_in_project"),
        ]

    def __str__(self):
        return f"{self.kind} → {self.target} ({self.status})"


class AttemptStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "in progress"
    OK = "ok", "ok"
    FAILED = "failed", "failed"
    # Its runner died mid-send (its claim ran out): marked when the delivery is claimed again.
    INTERRUPTED = "interrupted", "interrupted"


class DeliveryAttempt(models.Model):
    """Written when an attempt starts and completed when it ends; one cut short
    by a dying worker is marked interrupted when the delivery is tried again."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    delivery = models.ForeignKey(Delivery, models.CASCADE, related_name="attempts", db_constraint=False)
    status = models.CharField(max_length=12, choices=AttemptStatus.choices, default=AttemptStatus.IN_PROGRESS)
    number = models.IntegerField()
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    success = models.BooleanField(null=True)
    status_code = models.IntegerField(null=True, blank=True)
    latency_ms = models.IntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=1000, blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number", "project"], name="attempt_unique_number"),
            ProjectForeignKey(field="delivery", name="attempt_delivery_in_project"),
        ]

    def __str__(self):
        return f"#{self.number} {self.status_code or self.error}"


class InboxMessage(models.Model):
    """A request an `inbox` destination received instead of sending it out:
    exactly the headers and body a webhook receiver would get."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    destination = models.ForeignKey(Destination, models.SET_NULL, null=True, blank=True, related_name="+",
                                    db_constraint=False)
    delivery = models.ForeignKey("Delivery", models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False)
    received_at = models.DateTimeField(default=timezone.now)
    headers = models.JSONField(default=dict)
    body = models.TextField()

    class Meta:
        indexes = [models.Index(fields=["project", "-received_at"], name="inbox_recent")]
        constraints = [
            ProjectForeignKey(field="destination", name="inbox_destination_in_project"),
            ProjectForeignKey(field="delivery", name="inbox_delivery_in_project"),
        ]

    def __str__(self):
        return f"inbox message {self.pk} ({self.headers.get('webhook-id', '')})"


class JobHeartbeat(models.Model):
    """When a periodic job last ran (wall clock), for the dead man's switch (alerts/watchdog.py)."""

    job = models.CharField(max_length=64, unique=True)
    last_run_at = models.DateTimeField()

    def __str__(self):
        return f"{self.job} at {self.last_run_at:%Y-%m-%d %H:%M:%S}"


class StalledNotice(models.Model):
    """A "checks are not running" notice sent to a project for one stall of one job:
    one per (project, job, last run it stalled after), so a stall is told once."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    job = models.CharField(max_length=64)
    last_run_at = models.DateTimeField()
    noticed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "job", "last_run_at"], name="stalled_notice_once")]

    def __str__(self):
        return f"{self.job} stalled after {self.last_run_at:%Y-%m-%d %H:%M}"

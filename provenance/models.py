from django.db import models
from django.urls import reverse
from django.utils import timezone

from core.project_keys import ProjectForeignKey
from provenance.retention.digest import Sha256Field
from provenance.vocabulary import FUSED, FuseDecision
from tenancy.models import Project

DEFAULT_ENVIRONMENT = "production"


class Trace(models.Model):
    """One workflow run. Counters are maintained by ingest in the same statement
    that creates the trace, so the trace list never aggregates nodes."""

    # Foreign keys covered by a composite index get no index of their own:
    # every index is paid for on each ingested row.
    project = models.ForeignKey(Project, models.CASCADE, related_name="traces", db_index=False)
    trace_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True)
    ended_at = models.DateTimeField(null=True)
    node_count = models.IntegerField(default=0)
    min_confidence = models.FloatField(null=True)
    error_count = models.IntegerField(default=0)
    environment = models.CharField(
        max_length=50, default=DEFAULT_ENVIRONMENT,
        help_text="Set by the trace's first node and never changed (the contract's \"Environments\").",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "trace_id"], name="trace_unique_per_project")]
        indexes = [
            models.Index(fields=["project", "-ended_at"], name="trace_project_recent"),
            models.Index(fields=["project", "environment", "-ended_at"], name="trace_project_env_recent"),
        ]

    def __str__(self):
        return self.trace_id

    def get_absolute_url(self):
        return reverse("provenance:trace-detail", args=[self.project.slug, self.trace_id])


# On the ingest tables the project (and, for edges, trace) references are kept
# without database constraints: PostgreSQL checks each deferred constraint row
# by row at commit, thousands of lookups per batch for facts the ingest already
# guarantees (it writes them from the authenticated project and the traces it
# upserted in the same transaction). Django still cascades deletes through them.
NO_DB_CONSTRAINT = {"db_constraint": False}


class Node(models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False, **NO_DB_CONSTRAINT)
    trace = models.ForeignKey(Trace, models.CASCADE, related_name="nodes", db_index=False, **NO_DB_CONSTRAINT)
    product_id = models.CharField(max_length=255)
    event_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255)
    step = models.CharField(max_length=255, blank=True, default="")
    source_type = models.CharField(max_length=64, blank=True, default="")
    content = models.TextField(blank=True, default="")
    raw_input = models.TextField(blank=True, default="")
    confidence = models.FloatField(null=True, help_text="Normalized to [0, 1].")
    confidence_raw = models.FloatField(null=True)
    confidence_scale = models.FloatField(default=1.0)
    round = models.IntegerField(null=True)
    retry_of = models.CharField(
        max_length=255, blank=True, default="",
        help_text="The product id of the fused node this one replaces (kept like a parent: it may arrive later).",
    )
    attempt = models.IntegerField(null=True, help_text="1-based attempt number of a retried step.")
    is_error = models.BooleanField(default=False)
    fuse_state = models.SmallIntegerField(choices=FuseDecision.choices, default=FuseDecision.NONE)
    metrics = models.JSONField(default=dict)
    metadata = models.JSONField(default=dict)
    # The price of the step: None is "not sent" (a cost None is unpriced).
    duration_ms = models.FloatField(null=True, help_text="The step's wall time.")
    model = models.CharField(max_length=255, blank=True, default="")
    input_tokens = models.IntegerField(null=True)
    output_tokens = models.IntegerField(null=True)
    cost_usd = models.FloatField(
        null=True, help_text="As sent, else computed at ingest from the project's prices; null: unpriced."
    )
    timestamp = models.DateTimeField()
    received_at = models.DateTimeField(default=timezone.now)
    # Set by retention when content and raw_input were cut to their summary;
    # the digests let a later copy of the full text be matched. Nullable, so the
    # ingest's COPY leaves them out.
    summarized_at = models.DateTimeField(null=True, blank=True)
    content_sha256 = Sha256Field(null=True, blank=True)
    raw_input_sha256 = Sha256Field(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "product_id"], name="node_unique_per_project")]
        indexes = [
            models.Index(fields=["trace", "timestamp"], name="node_trace_time"),
            models.Index(fields=["project", "timestamp"], name="node_project_time"),
        ]

    def __str__(self):
        return self.product_id

    @property
    def fused(self) -> bool:
        return FUSED.holds(self)

    @property
    def status(self) -> str:
        return "error" if self.is_error else "ok"

    @property
    def content_tier(self) -> str:
        return content_tier(self.summarized_at)


class Edge(models.Model):
    """child consumed parent. Both ends are kept by product_id and joined at
    query time, so a parent may arrive later or live in another trace; an edge
    goes with its child's trace."""

    # The key doubles as the upward index (a child's parents), so an ingested
    # edge costs one index entry fewer than a surrogate id would.
    pk = models.CompositePrimaryKey("project", "child_product_id", "parent_product_id")
    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False, **NO_DB_CONSTRAINT)
    trace = models.ForeignKey(Trace, models.CASCADE, related_name="+", help_text="The child's trace.", **NO_DB_CONSTRAINT)
    child_product_id = models.CharField(max_length=255)
    parent_product_id = models.CharField(max_length=255)
    position = models.SmallIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["project", "parent_product_id"], name="edge_down")]

    def __str__(self):
        return f"{self.child_product_id} -> {self.parent_product_id}"


class Fuse(models.Model):
    """A consumer's accept/downweight/block decision about a node (which may not
    have arrived yet)."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    trace_id = models.CharField(max_length=255)
    product_id = models.CharField(max_length=255)
    event_id = models.CharField(max_length=255)
    decision = models.SmallIntegerField(choices=FuseDecision.choices)
    reason = models.TextField(blank=True, default="")
    reason_code = models.CharField(max_length=64, blank=True, default="", help_text="A short stable code to group reasons by.")
    policy_version = models.IntegerField(null=True, help_text="The fuse policy version that made the decision.")
    threshold = models.FloatField(null=True)
    by_agent_id = models.CharField(max_length=255, blank=True, default="")
    inline = models.BooleanField(default=False, help_text="Sent inside the node event itself.")
    timestamp = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "product_id"], name="fuse_product"),
            models.Index(fields=["project", "timestamp"], name="fuse_project_time"),
            # The refresh reads the decisions of the traces that got news (metrics.rollups.policy).
            models.Index(fields=["project", "trace_id", "timestamp"], name="fuse_trace_time"),
        ]

    def __str__(self):
        return f"{self.get_decision_display()} {self.product_id}"


class ReviewVerdict(models.TextChoices):
    CORRECT = "correct"
    INCORRECT = "incorrect"


class Review(models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    trace = models.ForeignKey(Trace, models.CASCADE, related_name="reviews", db_constraint=False)
    product_id = models.CharField(max_length=255, blank=True, default="")
    event_id = models.CharField(max_length=255)
    verdict = models.CharField(max_length=16, choices=ReviewVerdict.choices)
    comment = models.TextField(blank=True, default="")
    timestamp = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "timestamp"], name="review_project_time"),
            # Retention's "reviewed" rule asks it of every batch of nodes: without
            # it, each batch reads every review there is.
            models.Index(fields=["project", "product_id"], name="review_product"),
        ]
        constraints = [ProjectForeignKey(field="trace", name="review_trace_in_project")]

    def __str__(self):
        return f"{self.verdict} {self.trace_id}"


class Escalation(models.Model):
    """The workflow handed a node to a person. Open until a review of that node,
    or of its trace as a whole, arrives; that review closes it."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    trace = models.ForeignKey(Trace, models.CASCADE, related_name="escalations", db_constraint=False)
    product_id = models.CharField(max_length=255)
    event_id = models.CharField(max_length=255)
    reason = models.TextField(blank=True, default="")
    by_agent_id = models.CharField(max_length=255, blank=True, default="")
    timestamp = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by_review = models.ForeignKey(Review, models.SET_NULL, null=True, blank=True, related_name="closed_escalations",
                                         db_constraint=False)

    class Meta:
        indexes = [
            models.Index(fields=["project", "timestamp"], name="escalation_project_time"),
            models.Index(fields=["project", "product_id"], name="escalation_product"),
            models.Index(
                fields=["project", "-timestamp"], name="escalation_open", condition=models.Q(closed_at__isnull=True)
            ),
        ]
        constraints = [
            ProjectForeignKey(field="trace", name="escalation_trace_in_project"),
            ProjectForeignKey(field="closed_by_review", name="escalation_review_in_project"),
        ]

    def __str__(self):
        return f"escalation {self.product_id}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class IngestedEvent(models.Model):
    """The per-project record of accepted event ids that makes ingest idempotent.

    The key is the pair itself: one index, which the ingest claims ids against."""

    pk = models.CompositePrimaryKey("project", "event_id")
    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False, **NO_DB_CONSTRAINT)
    event_id = models.CharField(max_length=255)
    received_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return self.event_id


class FindingKind(models.TextChoices):
    """The finding kinds of the contract (`GET /api/v1/health/latest`)."""

    BROKEN_LINK = "broken_link", "broken link"
    ORPHAN = "orphan", "orphan"
    CYCLE = "cycle", "cycle"
    FUSED_INDIRECT_USE = "fused_indirect_use", "fused indirect use"
    ROUND_LIMIT_EXCEEDED = "round_limit_exceeded", "round limit exceeded"


class HealthReport(models.Model):
    """One run of the DAG health check over one project. Reports are kept, so
    the findings of every night stay comparable."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    checked_at = models.DateTimeField(help_text="The instant the check judged the DAG as of (its --now).")
    started_at = models.DateTimeField(default=timezone.now, help_text="Wall-clock start of the run.")
    finished_at = models.DateTimeField(null=True)
    node_count = models.IntegerField(default=0)
    finding_count = models.IntegerField(default=0)
    counts = models.JSONField(default=dict, help_text="Findings per kind.")

    class Meta:
        indexes = [
            models.Index(fields=["project", "-started_at"], name="health_report_latest"),
            models.Index(fields=["project", "-checked_at"], name="health_report_trend"),
        ]

    def __str__(self):
        return f"{self.project_id} @ {self.checked_at:%Y-%m-%d %H:%M}"


class HealthFinding(models.Model):
    """Trace and product are kept as the client's ids, not foreign keys, so a
    report's history survives the deletion of the trace it talks about."""

    report = models.ForeignKey(HealthReport, models.CASCADE, related_name="findings", db_constraint=False)
    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32, choices=FindingKind.choices)
    trace_id = models.CharField(max_length=255)
    product_id = models.CharField(max_length=255)
    # The node's agent and step as the check saw them, so findings group by
    # where they come from even after the trace is gone.
    agent_id = models.CharField(max_length=255, blank=True, default="")
    step = models.CharField(max_length=255, blank=True, default="")
    detail = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["report", "kind"], name="health_finding_report"),
            models.Index(fields=["project", "product_id"], name="health_finding_node"),
        ]
        constraints = [ProjectForeignKey(field="report", name="health_finding_report_in_project")]

    def __str__(self):
        return f"{self.kind} {self.product_id}"


def content_tier(summarized_at) -> str:
    """`full`, or `summary` once retention cut the node's text (the API's word)."""
    return "full" if summarized_at is None else "summary"


class RetentionRun(models.Model):
    """One run of the retention job over one project: what it did, for the
    settings page. A run that never finished (the process died) stays
    `running` until the next run marks it `interrupted`; the job is idempotent,
    so that next run completes the work."""

    class Status(models.TextChoices):
        RUNNING = "running"
        FINISHED = "finished"
        INTERRUPTED = "interrupted"

    project = models.ForeignKey(Project, models.CASCADE, related_name="retention_runs")
    as_of = models.DateTimeField(help_text="The instant the rules were applied as of (the job's --now).")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    nodes_summarized = models.BigIntegerField(default=0)
    traces_deleted = models.BigIntegerField(default=0)
    nodes_deleted = models.BigIntegerField(default=0)
    batches = models.IntegerField(default=0)
    settings = models.JSONField(default=dict, help_text="The retention settings the run applied.")

    class Meta:
        indexes = [models.Index(fields=["project", "-started_at"], name="retention_run_latest")]

    def __str__(self):
        return f"{self.project_id} retention @ {self.as_of:%Y-%m-%d %H:%M}"


class FinalAnswer(models.Model):
    """A trace's final answer (provenance.final_answer) that went wrong by at
    least one measure: reviewed incorrect, fused, or below the project's
    high-uncertainty threshold. Kept by provenance.root_causes.store for
    every ingest that touches the trace (or anything upstream of it), before
    anything reads it (provenance.root_causes.pending), so the aggregate over
    a month of answers never walks a DAG. Traces whose answer
    went right, or that gave none, have no row."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    trace = models.ForeignKey(Trace, models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    trace_key = models.CharField(max_length=255, help_text="The client's trace id.")
    node_pk = models.BigIntegerField(help_text="The answer node's id.")
    product_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255)
    step = models.CharField(max_length=255, blank=True, default="")
    timestamp = models.DateTimeField(help_text="The answer node's timestamp: the aggregate's window reads it.")
    confidence = models.FloatField(null=True)
    incorrect = models.BooleanField(help_text="Its newest review (of the node or of its trace) says incorrect.")
    fused = models.BooleanField()
    low_confidence = models.BooleanField()
    policy_version = models.IntegerField(null=True, help_text="The newest fuse policy version named in its trace.")
    threshold = models.FloatField(help_text="The high-uncertainty threshold its root causes were found with.")
    cause_count = models.IntegerField(default=0, help_text="Distinct (agent, step, reason) groups of its root causes.")
    environment = models.CharField(max_length=50, default=DEFAULT_ENVIRONMENT, help_text="Its trace's environment.")
    model = models.CharField(max_length=255, blank=True, default="", help_text="The answer node's model.")

    class Meta:
        indexes = [models.Index(fields=["project", "timestamp"], name="final_answer_time")]
        constraints = [
            # One per trace; the trace first, so a lookup by trace alone uses it.
            models.UniqueConstraint(fields=["trace", "project"], name="final_answer_once_per_trace"),
            ProjectForeignKey(field="trace", name="final_answer_trace_in_project"),
        ]

    def __str__(self):
        return f"{self.trace_key}: {self.product_id}"


class AnswerCause(models.Model):
    """One (agent, step, reason) group of a FinalAnswer's root causes, with the
    answer's own figures copied in, so the aggregate reads one table."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+", db_index=False)
    answer = models.ForeignKey(FinalAnswer, models.CASCADE, related_name="causes", db_constraint=False)
    # The answer's figures (see FinalAnswer).
    timestamp = models.DateTimeField()
    trace_key = models.CharField(max_length=255)
    answer_agent_id = models.CharField(max_length=255)
    incorrect = models.BooleanField()
    fused = models.BooleanField()
    low_confidence = models.BooleanField()
    policy_version = models.IntegerField(null=True)
    environment = models.CharField(max_length=50, default=DEFAULT_ENVIRONMENT)
    answer_model = models.CharField(max_length=255, blank=True, default="")
    # The group.
    agent_id = models.CharField(max_length=255)
    step = models.CharField(max_length=255, blank=True, default="")
    reason = models.CharField(max_length=16)
    product_ids = models.JSONField(default=list, help_text="Its root-cause nodes, oldest first.")
    cause_trace_key = models.CharField(max_length=255, help_text="The trace of the first of them.")
    path = models.JSONField(default=list, help_text="Product ids from the first of them to the answer.")
    path_agents = models.TextField(help_text="The agents along `path`, joined by ' → '.")
    passed_on = models.JSONField(
        default=list, help_text="Agents of the unfused nodes between the causes and the answer: who passed it on."
    )

    class Meta:
        indexes = [models.Index(fields=["project", "timestamp"], name="answer_cause_time")]
        constraints = [ProjectForeignKey(field="answer", name="answer_cause_answer_in_project")]

    def __str__(self):
        return f"{self.agent_id}/{self.step}/{self.reason} -> {self.trace_key}"


class RootCausePending(models.Model):
    """What an ingest changed whose stored root causes (FinalAnswer,
    AnswerCause) are not refreshed yet: written in the ingest's own
    transaction, drained by provenance.root_causes.pending before anything
    reads the stored rows, and by the periodic catch-up. One row per batch."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    trace_pks = models.JSONField(default=list, help_text="The traces the batch touched.")
    product_ids = models.JSONField(default=list, help_text="The nodes it stored or fused: their consumers' traces too.")
    unplaced = models.JSONField(default=list, help_text="Those of product_ids whose trace is not among trace_pks.")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.project_id}: {len(self.trace_pks)} traces pending"


class RootCauseMark(models.Model):
    """How far provenance.root_causes.catch_up has looked: the highest node,
    fuse and review ids whose traces it refreshed. One row."""

    node_id = models.BigIntegerField(default=0)
    fuse_id = models.BigIntegerField(default=0)
    review_id = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"root causes up to node {self.node_id}"

"""Rollups the metrics app maintains from provenance tables (see
metrics/rollups/refresh.py; their shared vocabulary is metrics/rollups/schema.py).

Nothing here is written by ingest: `refresh_rollups` folds new nodes and fuse
decisions in every 30 seconds, and the readers (metrics/windows/, metrics/counts/)
add a raw scan of whatever the last refresh has not seen, so figures stay exact.
"""

from django.db import models

from core.project_keys import ProjectForeignKey
from metrics.rollups.schema import DIMENSIONS, EVERY_DIMENSION
from provenance.models import Review
from tenancy.models import Project


def derived_project_key():
    """The project of a rollup row. Rollups are derived: the refresh writes
    them in bulk (a build, about ten rows a node) from rows whose project is
    already enforced, and a project's deletion removes them through Django's
    cascade, which needs no constraint. A database constraint would check every
    row at commit (a deferred trigger event queued per row, in memory), and an
    index of project_id alone would be one more B-tree per row that no reader
    uses: every rollup index leads with project_id already."""
    return models.ForeignKey(Project, models.CASCADE, related_name="+", db_constraint=False, db_index=False)


class Dimensions(models.Model):
    """The filter dimensions of a node, as rollup keys."""

    agent_id = models.CharField(max_length=255, default="")
    step = models.CharField(max_length=255, default="")
    source_type = models.CharField(max_length=64, default="")
    round = models.IntegerField(null=True)

    class Meta:
        abstract = True


class RollupSums(models.Model):
    """A rollup row's figures over its period (an hour, a minute): the
    additive figures of metrics.catalog.Totals, under the same names, and,
    for rows grouped by agent, the fused runs of the period's node sequence
    (metrics.windows.fused_runs.Run)."""

    nodes = models.IntegerField(default=0)
    traces = models.IntegerField(default=0, help_text="Distinct traces within the period.")
    confidence_count = models.IntegerField(default=0)
    confidence_sum = models.FloatField(default=0.0)
    low_traces = models.IntegerField(default=0, help_text="Distinct traces with a high-uncertainty node in the period.")
    accepted = models.IntegerField(default=0)
    downweighted = models.IntegerField(default=0)
    fused = models.IntegerField(default=0)
    failed = models.IntegerField(default=0)
    retried = models.IntegerField(default=0)
    retried_ok = models.IntegerField(default=0)
    run_prefix = models.IntegerField(default=0)
    run_suffix = models.IntegerField(default=0)
    run_best = models.IntegerField(default=0)

    class Meta:
        abstract = True


class HourRollup(Dimensions, RollupSums):
    """One hour of one project's nodes, for every combination of filter
    dimensions: `mask` says which dimensions the row is grouped by
    (metrics.rollups.schema.mask_of); the others hold placeholders. A filtered
    query reads exactly the rows of its mask. The counts are the additive
    figures of metrics.catalog.Totals, under the same names."""

    project = derived_project_key()
    hour = models.DateTimeField()
    mask = models.SmallIntegerField()

    class Meta:
        indexes = [models.Index(fields=["project", "mask", "hour"], name="rollup_project_mask_hour")]

    def __str__(self):
        return f"{self.project_id} {self.hour:%Y-%m-%d %H}h mask {self.mask}"


class TraceSpan(Dimensions):
    """Where a trace that spans two or more hours has nodes, per hour and
    dimensions: summing hourly distinct-trace counts counts such a trace once
    per hour, and these rows say by how much to correct. Rows with mask
    EVERY_DIMENSION carry every dimension; rows with mask NO_DIMENSIONS only
    (trace, hour), for unfiltered questions."""

    project = derived_project_key()
    trace_pk = models.BigIntegerField()
    hour = models.DateTimeField()
    mask = models.SmallIntegerField(default=EVERY_DIMENSION)
    low = models.BooleanField(default=False, help_text="Below the project's high-uncertainty threshold.")

    class Meta:
        indexes = [
            models.Index(fields=["project", "mask", "hour"], name="tracespan_project_mask_hour"),
            models.Index(fields=["trace_pk"], name="tracespan_trace"),
        ]

    def __str__(self):
        return f"trace {self.trace_pk} at {self.hour:%Y-%m-%d %H}h"


class HourTrace(models.Model):
    """One trace's production nodes in one hour: what the trace-weighted
    figures (metrics.windows.trace_weighted) add up per trace over a window's
    rolled hours instead of grouping its raw nodes. Rows with mask
    NO_DIMENSIONS hold every node of the trace that hour (agent_id ''), rows
    with the agent mask its nodes of one agent, for a window filtered by agent.
    Recomputed with the hour rollups (the same dirty hours)."""

    project = derived_project_key()
    hour = models.DateTimeField()
    mask = models.SmallIntegerField()
    agent_id = models.CharField(max_length=255, default="")
    trace_pk = models.BigIntegerField()
    nodes = models.IntegerField(default=0)
    fused = models.IntegerField(default=0)
    confidence_count = models.IntegerField(default=0)
    confidence_sum = models.FloatField(default=0.0)

    class Meta:
        indexes = [models.Index(fields=["project", "mask", "agent_id", "hour"], name="hourtrace_agent_hour"),
                   # The refresh deletes an hour's rows of every mask and agent.
                   models.Index(fields=["project", "hour"], name="hourtrace_project_hour")]

    def __str__(self):
        return f"trace {self.trace_pk} at {self.hour:%Y-%m-%d %H}h mask {self.mask}: {self.nodes} node(s)"


class MinuteRollup(RollupSums):
    """One minute of one project's nodes, all together (mask NO_DIMENSIONS)
    and per agent (the agent mask): the additive figures of HourRollup, the
    minute's distinct traces and, per agent, the fused runs of its node
    sequence. They answer the whole minutes of a window's partial hours
    (metrics.windows.minute_part), which under steady ingest hold up to an
    hour of nodes each; refreshed by dirty minute (metrics.rollups.minutes)."""

    project = derived_project_key()
    minute = models.DateTimeField()
    mask = models.SmallIntegerField()
    agent_id = models.CharField(max_length=255, default="")

    class Meta:
        indexes = [models.Index(fields=["project", "mask", "minute"], name="minuterollup_mask_minute")]

    def __str__(self):
        return f"{self.project_id} {self.minute:%Y-%m-%d %H:%M} mask {self.mask}"


class MinuteTrace(models.Model):
    """A trace's production nodes in a minute: the distinct traces of a
    window's whole minutes (a trace in two minutes counts once), which
    metrics.windows.totals corrects for traces seen elsewhere in the window,
    and the per-trace sums the trace-weighted figures add up
    (metrics.windows.trace_weighted), as HourTrace's."""

    project = derived_project_key()
    minute = models.DateTimeField()
    trace_pk = models.BigIntegerField()
    low = models.BooleanField(default=False, help_text="A node below the project's high-uncertainty threshold.")
    nodes = models.IntegerField(default=0)
    fused = models.IntegerField(default=0)
    confidence_count = models.IntegerField(default=0)
    confidence_sum = models.FloatField(default=0.0)

    class Meta:
        indexes = [models.Index(fields=["project", "minute"], name="minutetrace_project_minute")]

    def __str__(self):
        return f"trace {self.trace_pk} at {self.minute:%Y-%m-%d %H:%M}"


class DayHistogram(Dimensions):
    """Counts of values on a fixed grid (metrics.rollups.schema.bin_of) per
    day and dimensions: node confidence (metric "") and each numeric entry of
    Node.metrics. Only new nodes change it, so it is maintained by addition."""

    project = derived_project_key()
    day = models.DateTimeField()
    metric = models.CharField(max_length=255, default="", help_text='"" is the node confidence.')
    bin = models.BigIntegerField()
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "day", *DIMENSIONS, "metric", "bin"],
                name="histogram_cell_unique", nulls_distinct=False,
            )
        ]

    def __str__(self):
        return f"{self.metric or 'confidence'}[{self.bin}] = {self.n}"


# Not a bin of the grid (within ±40,000 even for the largest float): a
# DayStat group's row of its bins added up (metrics.rollups.day_stats).
WHOLE_BIN = -(1 << 62)


class DayStat(models.Model):
    """The distribution of one value (metrics.rollups.values: confidence, a
    `metrics` key, duration, tokens, cost) per day, environment and
    dimensions on the fine grid, each bin with the figures that make exact
    statistics: count, sums of powers, minimum and maximum (and how many
    values are not whole numbers). `mask` says which of
    metrics.rollups.values.STAT_DIMENSIONS a row is grouped by (none, one, or
    all); only new nodes change it, so it is maintained by addition."""

    project = derived_project_key()
    day = models.DateTimeField()
    environment = models.CharField(max_length=50, default="production")
    mask = models.SmallIntegerField()
    agent_id = models.CharField(max_length=255, default="")
    step = models.CharField(max_length=255, default="")
    source_type = models.CharField(max_length=64, default="")
    round = models.IntegerField(null=True)
    model = models.CharField(max_length=255, default="")
    metric = models.TextField(default="", help_text='"" is the node confidence; "@…" the node fields.')
    bin = models.BigIntegerField()
    n = models.BigIntegerField(default=0)
    total = models.FloatField(default=0.0)
    total_sq = models.FloatField(default=0.0)
    total_cube = models.FloatField(default=0.0)
    total_quad = models.FloatField(default=0.0)
    minimum = models.FloatField()
    maximum = models.FloatField()
    fractional = models.BigIntegerField(default=0, help_text="Values that are not whole numbers.")

    class Meta:
        constraints = [
            # The figures ride in the index: a read of a month of bins by group
            # (the Cost & latency page's latency by agent and day) is an
            # index-only scan of adjacent entries, not a heap page per few rows.
            models.UniqueConstraint(
                fields=["project", "environment", "mask", "metric", "day", "agent_id", "step", "source_type", "round",
                        "model", "bin"],
                name="daystat_cell_unique", nulls_distinct=False,
                include=["n", "total", "total_sq", "total_cube", "total_quad", "minimum", "maximum", "fractional"],
            )
        ]
        # The rows of bins added up, found without walking every bin of every day.
        indexes = [models.Index(fields=["project", "environment", "mask", "metric", "day"],
                                condition=models.Q(bin=WHOLE_BIN), name="daystat_whole_rows")]

    def __str__(self):
        return f"{self.metric or 'confidence'}[{self.bin}] = {self.n}"


class HourFuseReason(Dimensions):
    """Fuse decisions per hour (of the node they judge), dimensions, decision and reason."""

    project = derived_project_key()
    hour = models.DateTimeField()
    decision = models.SmallIntegerField()
    reason = models.CharField(max_length=200, default="")
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "hour", *DIMENSIONS, "decision", "reason"],
                name="fuse_reason_cell_unique", nulls_distinct=False,
            )
        ]

    def __str__(self):
        return f"{self.decision} {self.reason!r} = {self.n}"


class ReviewTarget(Dimensions):
    """The node a review judges (metrics.counts.judged_reviews) and the node's figures,
    kept so calibration neither resolves every trace's final answer nor reads
    every judged node on each read. Recomputed for the traces that got nodes
    since; node_pk is None while the node is unknown."""

    review = models.OneToOneField(Review, models.CASCADE, primary_key=True, related_name="+", db_constraint=False)
    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    node_pk = models.BigIntegerField(null=True)
    confidence = models.FloatField(null=True)
    metrics = models.JSONField(default=dict)

    class Meta:
        constraints = [ProjectForeignKey(field="review", name="review_target_review_in_project")]

    def __str__(self):
        return f"review {self.review_id} judges node {self.node_pk}"


class HourEscalation(Dimensions):
    """Escalations per hour (of the escalation): rows with mask NO_DIMENSIONS
    count every escalation, rows with mask EVERY_DIMENSION those whose node is
    known, by the node's dimensions. Only grows, maintained by addition."""

    project = derived_project_key()
    hour = models.DateTimeField()
    mask = models.SmallIntegerField()
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "hour", "mask", *DIMENSIONS], name="escalation_cell_unique", nulls_distinct=False,
            )
        ]

    def __str__(self):
        return f"{self.hour:%Y-%m-%d %H}h mask {self.mask}: {self.n} escalation(s)"


class PolicyHour(Dimensions):
    """What each fuse policy version did in one hour (of the fuse decision),
    for every combination of filter dimensions (`mask`, as HourRollup); the
    dimensions are those of the judged node. Distinct nodes and traces are
    counted within the hour; PolicyItemHour says how to correct sums over
    several hours. A row holds either the decision counts or the trace counts
    (the others 0): both add up."""

    project = derived_project_key()
    hour = models.DateTimeField()
    mask = models.SmallIntegerField()
    policy_version = models.IntegerField(null=True)
    decisions = models.IntegerField(default=0)
    nodes = models.IntegerField(default=0, help_text="Distinct nodes judged.")
    fused = models.IntegerField(default=0, help_text="Distinct nodes blocked.")
    traces = models.IntegerField(default=0, help_text="Distinct traces of the decisions.")
    reviewed = models.IntegerField(default=0, help_text="Of those traces, the reviewed ones.")
    incorrect = models.IntegerField(default=0, help_text="Of those, the ones whose newest review is incorrect.")
    escalations = models.IntegerField(default=0, help_text="Escalations in those traces.")

    class Meta:
        indexes = [models.Index(fields=["project", "mask", "hour"], name="policyhour_project_mask_hour")]

    def __str__(self):
        return f"version {self.policy_version} at {self.hour:%Y-%m-%d %H}h mask {self.mask}"


class PolicyItemHour(Dimensions):
    """A node (kind PRODUCT) or trace (kind TRACE) that fuse decisions of one
    policy version judged in one hour, with what PolicyHour counted for it:
    where an item appears in several hours (`spanning`), sums over hours
    subtract the repeats, and reads of recent rows find here whether an item
    was already counted. Product rows carry the node's dimensions (mask
    EVERY_DIMENSION; NO_DIMENSIONS while the node is unknown); trace rows come
    once per hour (NO_DIMENSIONS) and once per node dimensions (EVERY_DIMENSION)."""

    TRACE, PRODUCT = 0, 1

    project = derived_project_key()
    hour = models.DateTimeField()
    policy_version = models.IntegerField(null=True)
    kind = models.SmallIntegerField()
    key = models.CharField(max_length=255, help_text="The product id or the trace id.")
    mask = models.SmallIntegerField()
    decisions = models.IntegerField(default=0)
    blocked = models.BooleanField(default=False)
    reviewed = models.BooleanField(default=False)
    incorrect = models.BooleanField(default=False)
    escalations = models.IntegerField(default=0)
    spanning = models.BooleanField(default=False, help_text="The item appears in other hours under this version.")

    class Meta:
        indexes = [
            models.Index(fields=["project", "kind", "key"], name="policyitem_key"),
            models.Index(fields=["project", "hour"], name="policyitem_spanning_hour", condition=models.Q(spanning=True)),
            models.Index(fields=["project", "hour"], name="policyitem_hour"),
        ]

    def __str__(self):
        return f"{'trace' if self.kind == self.TRACE else 'node'} {self.key} at {self.hour:%Y-%m-%d %H}h"


class Watermark(models.Model):
    """How far the rollups have read: every node with id <= node_id, fuse with
    id <= fuse_id, review with id <= review_id and escalation with id <=
    escalation_id is in them (one row)."""

    node_id = models.BigIntegerField(default=0)
    fuse_id = models.BigIntegerField(default=0)
    review_id = models.BigIntegerField(default=0)
    escalation_id = models.BigIntegerField(default=0)
    refreshed_at = models.DateTimeField(null=True)

    def __str__(self):
        return f"nodes <= {self.node_id}, fuses <= {self.fuse_id}"


class RolledProject(models.Model):
    """A project whose hour rollups are complete, and the threshold they used:
    a changed threshold makes the query layer ignore them until rebuilt."""

    project = models.OneToOneField(Project, models.CASCADE, related_name="+")
    threshold = models.FloatField()
    rolled_at = models.DateTimeField()

    def __str__(self):
        return f"{self.project_id} at threshold {self.threshold}"

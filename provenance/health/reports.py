"""Reading stored health reports: the newest one, its findings grouped by kind
and by (agent, step), a page of them, the nightly trend. Every reader of "the latest report" (pages, API, alerts,
the metrics overview) goes through `latest_report`."""

from datetime import datetime, timedelta

from django.db.models import Count, F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from provenance.health.faults import DESCRIPTIONS
from provenance.models import FindingKind, HealthReport
from tenancy.models import Project

EXAMPLES_PER_GROUP = 3


def latest_report(project: Project | int) -> HealthReport | None:
    """The newest run's report (by when it ran, whatever its --now)."""
    return (
        HealthReport.objects.filter(project_id=getattr(project, "pk", project), finished_at__isnull=False)
        .order_by("-started_at", "-pk")
        .first()
    )


def latest_finding_count(project: Project | int) -> int:
    report = latest_report(project)
    return report.finding_count if report else 0


def nightly_trend(project: Project, nights: int = 60, now: datetime | None = None) -> list[dict]:
    """Findings per kind for each night, oldest first; a night's last run counts."""
    since = (now or timezone.now()) - timedelta(days=nights)
    per_night: dict[str, dict] = {}
    runs = (
        HealthReport.objects.filter(project=project, checked_at__gte=since, finished_at__isnull=False)
        .order_by("checked_at", "pk")
        .values_list("checked_at", "counts")
    )
    for checked_at, counts in runs:
        per_night[timezone.localtime(checked_at).date().isoformat()] = counts
    return [
        {"night": night, **{kind: counts.get(kind, 0) for kind in FindingKind.values}}
        for night, counts in sorted(per_night.items())
    ]


def finding_groups(report: HealthReport, examples: int = EXAMPLES_PER_GROUP) -> list[dict]:
    """Every kind in the contract's order, each with its findings grouped by
    (agent, step): the count and the first `examples` findings of each group,
    biggest groups first. Two queries, whatever the report's size."""
    counts = (
        report.findings.order_by().values("kind", "agent_id", "step").annotate(count=Count("pk"))
    )
    first = (
        report.findings.annotate(rank=Window(RowNumber(), partition_by=[F("kind"), F("agent_id"), F("step")],
                                             order_by=[F("trace_id").asc(), F("product_id").asc(), F("pk").asc()]))
        .filter(rank__lte=examples)
        .order_by("kind", "agent_id", "step", "rank")
        .values("kind", "agent_id", "step", "trace_id", "product_id", "detail")
    )
    shown: dict[tuple, list] = {}
    for finding in first:
        shown.setdefault((finding["kind"], finding["agent_id"], finding["step"]), []).append(
            {"trace_id": finding["trace_id"], "product_id": finding["product_id"], "detail": finding["detail"]})
    by_kind: dict[str, list] = {}
    for group in counts:
        key = (group["kind"], group["agent_id"], group["step"])
        by_kind.setdefault(group["kind"], []).append(
            {"agent_id": group["agent_id"], "step": group["step"], "count": group["count"],
             "examples": shown.get(key, [])})
    kinds = []
    for kind in FindingKind:
        groups = sorted(by_kind.get(kind.value, []), key=lambda g: (-g["count"], g["agent_id"], g["step"]))
        kinds.append({"kind": kind.value, "label": kind.label, "description": DESCRIPTIONS[kind],
                      "total": sum(g["count"] for g in groups), "groups": groups})
    return kinds


def findings_page(report: HealthReport, *, kind: str | None = None, agent_id: str | None = None,
                  step: str | None = None, offset: int = 0, limit: int | None = None,
                  with_source: bool = False) -> tuple[list[dict], int]:
    """The findings that match, in a stable order, from `offset` (at most
    `limit` of them), and how many match in all. Each is the contract's
    finding; `with_source` adds its node's agent and step."""
    findings = report.findings.all()
    if kind is not None:
        findings = findings.filter(kind=kind)
    if agent_id is not None:
        findings = findings.filter(agent_id=agent_id)
    if step is not None:
        findings = findings.filter(step=step)
    total = findings.count() if (offset or limit is not None) else None
    fields = ("kind", "trace_id", "product_id") + (("agent_id", "step") if with_source else ()) + ("detail",)
    rows = findings.order_by("kind", "trace_id", "product_id", "pk").values(*fields)
    rows = list(rows[offset: offset + limit] if limit is not None else rows[offset:])
    return rows, (total if total is not None else len(rows))

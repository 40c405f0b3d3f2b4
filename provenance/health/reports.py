"""Reading stored health reports: the newest one, its findings by kind, the
nightly trend. Every reader of "the latest report" (pages, API, alerts,
the metrics overview) goes through `latest_report`."""

from datetime import datetime, timedelta

from django.utils import timezone

from provenance.models import FindingKind, HealthReport, Project


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


def findings_by_kind(report: HealthReport, limit: int) -> list[dict]:
    """The report's findings per kind, in the contract's order, at most `limit`
    of each (the rest are counted, and listed in full by the API)."""
    groups = []
    for kind in FindingKind:
        total = report.counts.get(kind.value, 0)
        shown = list(
            report.findings.filter(kind=kind).order_by("trace_id", "product_id", "pk")
            .values("trace_id", "product_id", "detail")[:limit]
        ) if total else []
        groups.append({"kind": kind.value, "label": kind.label, "total": total, "findings": shown,
                       "more": total - len(shown)})
    return groups

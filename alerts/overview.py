"""What the alerts app shows on the metrics Overview (see metrics.overview_panels)."""

from django.urls import reverse

from alerts.models import AlertEvent
from tenancy.colocation import same_project

RECENT = 5


def recent_alerts(project) -> list[dict]:
    """The newest firings and resolutions, newest first."""
    events = AlertEvent.objects.filter(same_project("rule"), project=project).select_related("rule").order_by("-at", "-pk")[:RECENT]
    return [
        {"title": event.rule.name, "state": event.state, "at": event.at,
         "url": reverse("alerts:rule-detail", args=[project.slug, event.rule_id])}
        for event in events
    ]

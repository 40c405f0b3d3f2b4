"""The Overview's "Recent alerts" panel lists real alert events, filled by the
alerts app through metrics.overview_panels (metrics never imports alerts)."""

from django.utils import timezone

from alerts.models import AlertEvent
from demo.alert_rules import install_demo_rules


def test_recent_alerts_are_listed_newest_first(project, member):
    empty = member.get(f"/metrics/{project.slug}/").content.decode()
    assert "No alert has fired in this project yet." in empty and "Placeholder" not in empty
    first, second = install_demo_rules(project)[:2]
    AlertEvent.objects.create(project=project, rule=first, state="firing", at=timezone.now(), values=[],
                               window_start=timezone.now())
    AlertEvent.objects.create(project=project, rule=second, state="resolved", at=timezone.now(), values=[],
                               window_start=timezone.now())
    html = member.get(f"/metrics/{project.slug}/").content.decode()
    assert html.index(second.name) < html.index(first.name)
    assert f"/alerts/{project.slug}/{first.pk}/" in html

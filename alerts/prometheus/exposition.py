"""What `GET /metrics` answers for a project: per agent seen in the last 15
minutes, the alert metrics of that name over that window (through
metrics.values, the one entry alerts and pages use, so a gauge means what
the alert metric means); per alert rule, whether it fires; per finding kind
of the newest health report, its count.

Label values are agent ids and rule names, untrusted text: prometheus_client
escapes them per the exposition format. The answer is cached per project
for a few seconds (PROMETHEUS_CACHE_SECONDS): Prometheus scrapes every 15 s,
often from two replicas at once.
"""

from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest

from alerts.models import AlertRule, RuleState
from metrics.catalog import CATALOG
from metrics.values import values_by
from provenance.health import latest_report
from provenance.models import FindingKind

WINDOW = timedelta(minutes=15)
WINDOW_LABEL = "15m"
# (alert metric, gauge, help: the metric's meaning, from where it is defined)
GAUGES = [
    (metric, f"denoise_{metric}", f"Per agent over the last {WINDOW_LABEL}: {CATALOG[metric].meaning}.")
    for metric in ("node_count", "fuse_rate", "failure_rate", "mean_confidence", "high_uncertainty_ratio")
] + [
    ("p95_latency_ms", "denoise_p95_latency_ms",
     f"Per agent over the last {WINDOW_LABEL}: 95th percentile of duration_ms (nearest rank), production."),
    ("cost_usd", "denoise_cost_usd", f"Per agent over the last {WINDOW_LABEL}: cost_usd summed, production."),
    ("tokens", "denoise_tokens", f"Per agent over the last {WINDOW_LABEL}: input and output tokens, production."),
]


class ProjectCollector:
    def __init__(self, project, now=None):
        self.project, self.now = project, now or timezone.now()

    def collect(self):
        found = values_by(self.project, self.now - WINDOW, self.now, "agent_id", metrics=[m for m, _, _ in GAUGES])
        for metric, name, help_text in GAUGES:
            gauge = GaugeMetricFamily(name, help_text, labels=["agent_id", "window"])
            for agent in sorted(found):
                value = found[agent].get(metric)
                if value is not None:
                    gauge.add_metric([agent, WINDOW_LABEL], value)
            yield gauge
        firing = GaugeMetricFamily("denoise_alert_firing", "1 while the alert rule fires, else 0.",
                                   labels=["rule_id", "rule"])
        rules = AlertRule.objects.filter(project=self.project).order_by("pk").values_list("pk", "name", "state",
                                                                                            "enabled")
        for pk, name, state, enabled in rules:
            firing.add_metric([str(pk), name], 1 if enabled and state == RuleState.FIRING else 0)
        yield firing
        findings = GaugeMetricFamily("denoise_health_findings", "Findings of the newest DAG health report, by kind.",
                                     labels=["kind"])
        report = latest_report(self.project)
        if report is not None:
            for kind in FindingKind.values:
                findings.add_metric([kind], report.counts.get(kind, 0))
        yield findings


def project_exposition(project) -> bytes:
    seconds = settings.PROMETHEUS_CACHE_SECONDS
    if seconds <= 0:
        return render(project)
    return cache.get_or_set(f"prometheus:project:{project.pk}", lambda: render(project), seconds)


def render(project, now=None) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ProjectCollector(project, now))
    return generate_latest(registry)

"""The three rules the demo project ships with (issue: "Rules to ship in the
demo project"). They have no destination unless a webhook URL is given: firings
show in the alert history and on each rule's page. A URL on loopback is only
accepted with WEBHOOK_ALLOW_PRIVATE=1, like any other destination."""

from django.db import transaction

from alerts import rules
from alerts.models import AlertRule
from alerts.serializers import AlertRuleSerializer

DEMO_RULES = [
    {
        "name": "Fuse rate over 20% in 15 minutes",
        "match": "all",
        "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}],
        "for": "0m",
    },
    {
        "name": "An agent fused 3 times in a row",
        "match": "all",
        "conditions": [{"metric": "consecutive_fuses", "window": "15m", "op": ">=", "threshold": 3}],
        "for": "0m",
    },
    {
        "name": "Extraction degrading: uncertainty up 50% and entity extraction failing",
        "match": "all",
        "conditions": [
            {"metric": "high_uncertainty_ratio", "window": "15m", "change": "relative", "op": ">", "threshold": 0.5},
            {"metric": "failure_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
             "threshold": 0.7},
        ],
        "for": "0m",
    },
]


@transaction.atomic
def install_demo_rules(project, webhook_url: str | None = None) -> list[AlertRule]:
    """Creates the demo rules the project does not have yet (matched by name)."""
    existing = {rule.name: rule for rule in AlertRule.objects.filter(project=project)}
    installed = []
    for spec in DEMO_RULES:
        if spec["name"] in existing:
            installed.append(existing[spec["name"]])
            continue
        data = {**spec, "destinations": [{"type": "webhook", "url": webhook_url}] if webhook_url else []}
        serializer = AlertRuleSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        installed.append(rules.create_rule(project, serializer.validated_data))
    return installed

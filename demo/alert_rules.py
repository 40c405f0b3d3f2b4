"""The four rules the demo project ships with. In the demo they deliver to
the built-in webhook inbox (`inbox=True`), so a firing is seen arriving,
signed, on the inbox page; a webhook URL can be given instead. A URL on
loopback is only accepted with WEBHOOK_ALLOW_PRIVATE=1, like any other
destination."""

from django.db import transaction

from alerts import alert_rules, signing
from alerts.models import AlertRule, Destination
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
        # Both conditions watch the extractor itself. Project-wide, half the
        # demo's traces hold some doubtful node even in calm times (a fragment,
        # a conclusion built on a wrong extraction), so no incident can raise
        # that share by 50%; the extractor's own confidence, steady near 0.9
        # until the incident, falls by about half in it (demo/fake_llm.py).
        "name": "Extraction degrading: confidence down 25% and entity extraction failing",
        "match": "all",
        "conditions": [
            {"metric": "mean_confidence", "window": "15m", "filters": {"step": "entity_extraction"},
             "change": "relative", "op": "<", "threshold": -0.25},
            {"metric": "failure_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
             "threshold": 0.7},
        ],
        "for": "0m",
    },
    {
        # The evaluation runs of demo/truth_sets.py: the newest against the one before it.
        "name": "Evaluation accuracy dropped 5% since the last run",
        "match": "all",
        "conditions": [{"metric": "eval_accuracy", "filters": {"dataset": "ticket-triage"}, "change": "relative",
                        "op": "<", "threshold": -0.05}],
        "for": "0m",
    },
]


@transaction.atomic
def install_demo_rules(project, webhook_url: str | None = None, inbox: bool = False) -> list[AlertRule]:
    """Creates the demo rules the project does not have yet (matched by name);
    with `inbox`, each gets an inbox destination if it has none (the demo's
    opt-in to the inbox, whatever WEBHOOK_INBOX says)."""
    existing = {rule.name: rule for rule in AlertRule.objects.filter(project=project)}
    installed = []
    for spec in DEMO_RULES:
        if spec["name"] in existing:
            installed.append(existing[spec["name"]])
            continue
        data = {**spec, "destinations": [{"type": "webhook", "url": webhook_url}] if webhook_url else []}
        serializer = AlertRuleSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        installed.append(alert_rules.create_rule(project, serializer.validated_data))
    if inbox:
        for rule in installed:
            if not rule.destinations_in_project().filter(kind="inbox").exists():
                Destination.objects.create(project=project, rule=rule, kind="inbox",
                                           config={"secret": signing.new_secret()},
                                           position=rule.destinations_in_project().count())
    return installed

"""Slack, email and PagerDuty destinations against real local stand-ins: a
Block Kit-checking HTTP receiver for Slack, an Events API v2-checking one for
PagerDuty (PAGERDUTY_EVENTS_URL), a real SMTP server (aiosmtpd) for email.
Each: firing and resolution delivered once, retried after a failure that means
"later", given up after one that means "never"."""

import io
import json

import pytest
from django.core.management import call_command

from alerts.models import Delivery
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "low"}}
RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2},
        {"metric": "node_count", "window": "5m", "op": ">=", "threshold": 1}]
ROUTING_KEY = "R0UT1NGKEY0000000000000000000001"


@pytest.fixture
def fusing_rule(create_rule, ingest):
    """A rule with these destinations; fused traffic at minute 0 makes it fire at 1 and resolve at 10."""

    def make(*destinations, name="extraction fuses"):
        rule = create_rule(name=name, conditions=RULE, destinations=list(destinations))
        ingest(node_event("f1", "t1", seconds=10, **FUSED), node_event("f2", "t2", seconds=20, **FUSED))
        return rule

    return make


def retry_due():
    call_command("retry_deliveries", stdout=io.StringIO())


def statuses() -> list[str]:
    return list(Delivery.objects.order_by("pk").values_list("status", flat=True))


# --- Slack -----------------------------------------------------------------------------------------

def test_slack_gets_block_kit_on_firing_and_on_resolution_once_each(fusing_rule, slack, evaluate, settings):
    settings.SITE_ROOT = "https://dash.example"
    rule = fusing_rule({"type": "slack", "url": slack.url})
    evaluate(1)
    evaluate(2)
    evaluate(10)
    firing, resolved = slack.received
    assert len(slack.received) == 2, "once per state change"
    for request in (firing, resolved):
        assert request.problems == [], request.problems
        assert request.headers["content-type"].startswith("application/json")
    message = firing.json
    assert message["text"].startswith("[Denoise] firing: extraction fuses")
    header, summary, values, actions, _context = message["blocks"]
    assert header["type"] == "header" and "Firing: extraction fuses" in header["text"]["text"]
    assert "*firing*" in summary["text"]["text"]
    assert [field["text"] for field in values["fields"]] == [
        "*fuse_rate over 5m*\n100.0% &gt; 20.0%", "*node_count over 5m*\n2 &gt;= 1"]
    assert actions["elements"][0]["url"] == f"https://dash.example/alerts/acme/{rule['id']}/"
    assert resolved.json["text"].startswith("[Denoise] resolved: extraction fuses")
    assert [f["text"] for f in resolved.json["blocks"][2]["fields"]][0] == "*fuse_rate over 5m*\n0.0% &gt; 20.0%"
    assert statuses() == ["delivered", "delivered"]


def test_slack_text_is_escaped(create_rule, ingest, slack, evaluate):
    create_rule(name="<!channel> & <https://evil|click>", conditions=RULE[:1],
                destinations=[{"type": "slack", "url": slack.url}])
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    summary = slack.received[0].json["blocks"][1]["text"]["text"]
    assert "&lt;!channel&gt; &amp; &lt;https://evil|click&gt;" in summary
    assert "<!channel>" not in summary


def test_slack_is_retried_after_a_500(fusing_rule, slack, evaluate):
    slack.script = [500]
    fusing_rule({"type": "slack", "url": slack.url})
    evaluate(1)
    assert statuses() == ["pending"]
    retry_due()
    assert len(slack.received) == 2 and slack.received[0].body == slack.received[1].body
    delivery = Delivery.objects.get()
    assert delivery.status == "delivered"
    assert list(delivery.attempts.values_list("status_code", "success")) == [(500, False), (200, True)]


def test_a_revoked_slack_hook_is_given_up_and_disabled(fusing_rule, slack, evaluate, api):
    slack.default = 404
    rule = fusing_rule({"type": "slack", "url": slack.url})
    evaluate(1)
    retry_due()
    assert len(slack.received) == 1, "404 means the hook was removed: never retried"
    assert statuses() == ["failed"]
    destination = api.get(f"/api/v1/alert-rules/{rule['id']}").json()["destinations"][0]
    assert destination["disabled"] is True and "404" in destination["disabled_reason"]
    evaluate(10)
    assert len(slack.received) == 1, "nothing more goes to a disabled destination"


# --- email -----------------------------------------------------------------------------------------

def test_email_sends_one_message_per_state_change_with_text_and_html(fusing_rule, smtp, evaluate, settings):
    settings.DEFAULT_FROM_EMAIL = "alerts@denoise.test"
    rule = fusing_rule({"type": "email", "to": ["oncall@example.org", "lead@example.org"]})
    evaluate(1)
    evaluate(2)
    evaluate(10)
    assert len(smtp.messages) == 2
    (sender, recipients, firing), (_, _, resolved) = smtp.messages
    assert sender == "alerts@denoise.test"
    assert recipients == ["oncall@example.org", "lead@example.org"]
    assert firing["Subject"] == "[Denoise] firing: extraction fuses"
    assert resolved["Subject"] == "[Denoise] resolved: extraction fuses"
    text = firing.get_body(("plain",)).get_content()
    html = firing.get_body(("html",)).get_content()
    assert "fuse_rate over 5m: 100.0% > 20.0%" in text and f"/alerts/acme/{rule['id']}/" in text
    assert "100.0% &gt; 20.0%" in html, "HTML-escaped"
    assert statuses() == ["delivered", "delivered"]
    attempt = Delivery.objects.first().attempts.get()
    assert attempt.status_code == 250 and "accepted by 127.0.0.1" in attempt.response_excerpt


def test_email_rule_names_are_escaped_in_the_html_part(create_rule, ingest, smtp, evaluate):
    create_rule(name="<script>alert(1)</script>", conditions=RULE[:1],
                destinations=[{"type": "email", "to": ["oncall@example.org"]}])
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    html = smtp.messages[0][2].get_body(("html",)).get_content()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_email_is_retried_when_the_server_says_later(fusing_rule, smtp, evaluate):
    smtp.busy = 1
    fusing_rule({"type": "email", "to": ["oncall@example.org"]})
    evaluate(1)
    assert statuses() == ["pending"] and smtp.messages == []
    retry_due()
    assert len(smtp.messages) == 1
    assert list(Delivery.objects.get().attempts.values_list("status_code", "success")) == [(451, False),
                                                                                           (250, True)]


def test_email_to_refused_recipients_is_given_up(fusing_rule, smtp, evaluate):
    smtp.refuse = {"gone@example.org"}
    fusing_rule({"type": "email", "to": ["gone@example.org"]})
    evaluate(1)
    retry_due()
    assert smtp.messages == []
    delivery = Delivery.objects.get()
    assert delivery.status == "failed" and delivery.attempts.count() == 1
    assert "gone@example.org" in delivery.last_error


def test_email_is_retried_when_no_server_answers(fusing_rule, evaluate, settings):
    settings.ALERT_SMTP = {**settings.ALERT_SMTP, "host": "127.0.0.1", "port": 8169}
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    fusing_rule({"type": "email", "to": ["oncall@example.org"]})
    evaluate(1)
    delivery = Delivery.objects.get()
    assert delivery.status == "pending" and "ConnectionRefusedError" in delivery.last_error


# --- PagerDuty -------------------------------------------------------------------------------------

def test_pagerduty_triggers_then_resolves_one_incident_per_rule(fusing_rule, pagerduty, evaluate, settings):
    settings.SITE_ROOT = "https://dash.example"
    rule = fusing_rule({"type": "pagerduty", "routing_key": ROUTING_KEY})
    evaluate(1)
    evaluate(2)
    evaluate(10)
    trigger, resolve = pagerduty.received
    assert len(pagerduty.received) == 2
    for request in (trigger, resolve):
        assert request.problems == [], request.problems
        assert request.json["routing_key"] == ROUTING_KEY
        assert request.json["dedup_key"] == f"denoise-acme-{rule['id']}"
    assert trigger.json["event_action"] == "trigger" and resolve.json["event_action"] == "resolve"
    payload = trigger.json["payload"]
    assert payload["source"] == "denoise" and payload["severity"] == "error"
    assert payload["summary"].startswith("firing: extraction fuses")
    details = payload["custom_details"]
    assert details["rule"] == {"id": rule["id"], "name": "extraction fuses"}
    assert details["url"] == f"https://dash.example/alerts/acme/{rule['id']}/"
    assert [(c["value"], c["op"], c["threshold"]) for c in details["conditions"]] == [(1.0, ">", 0.2),
                                                                                      (2, ">=", 1)]
    assert statuses() == ["delivered", "delivered"]


def test_pagerduty_is_retried_after_a_500_and_given_up_after_a_400(fusing_rule, pagerduty, evaluate):
    pagerduty.script = [500, 202, 400]
    fusing_rule({"type": "pagerduty", "routing_key": ROUTING_KEY})
    evaluate(1)
    retry_due()
    assert statuses() == ["delivered"]
    evaluate(10)
    retry_due()
    assert len(pagerduty.received) == 3, "400 (invalid event or routing key) is never retried"
    assert statuses() == ["delivered", "failed"]


def test_pagerduty_url_is_the_operators_and_exempt_from_the_address_guard(fusing_rule, pagerduty, evaluate,
                                                                         settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    fusing_rule({"type": "pagerduty", "routing_key": ROUTING_KEY})
    evaluate(1)
    assert len(pagerduty.received) == 1 and statuses() == ["delivered"]


# --- every kind at once ----------------------------------------------------------------------------

def test_one_rule_reaches_every_kind_and_only_webhooks_are_signed(fusing_rule, receiver, slack, pagerduty, smtp,
                                                                 evaluate):
    from tests.support.alerts import SECRET

    fusing_rule({"type": "webhook", "url": receiver.url, "secret": SECRET}, {"type": "slack", "url": slack.url},
                {"type": "email", "to": ["oncall@example.org"]},
                {"type": "pagerduty", "routing_key": ROUTING_KEY})
    evaluate(1)
    assert [len(receiver.received), len(slack.received), len(pagerduty.received), len(smtp.messages)] == [1, 1, 1, 1]
    assert receiver.received[0].verified
    assert "webhook-signature" not in slack.received[0].headers
    assert json.loads(receiver.received[0].body)["values"] == [{"metric": "fuse_rate", "value": 1.0},
                                                               {"metric": "node_count", "value": 2}]

"""The built-in webhook inbox: an inbox destination keeps the signed request a
receiver would get, and the inbox page shows it with its signature verified.
Opt-in: the destination type is refused unless WEBHOOK_INBOX is on."""

from alerts.models import Delivery, Destination, InboxMessage
from alerts.transports import transport_for
from demo.alert_rules import install_demo_rules


def test_the_inbox_type_is_refused_unless_turned_on(api, settings):
    rule = {"name": "r", "match": "all", "for": "0m", "destinations": [{"type": "inbox"}],
            "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}]}
    settings.WEBHOOK_INBOX = False
    refused = api.post("/api/v1/alert-rules", rule, format="json")
    assert refused.status_code == 400 and "WEBHOOK_INBOX" in refused.content.decode()
    settings.WEBHOOK_INBOX = True
    assert api.post("/api/v1/alert-rules", rule, format="json").status_code == 201


def test_a_delivery_to_the_inbox_is_shown_verified(project, member):
    demo_rules = install_demo_rules(project, inbox=True)
    rule = demo_rules[0]
    destination = rule.destinations.get(kind="inbox")
    delivery = Delivery.objects.create(project=project, rule=rule, destination=destination, target="inbox",
                                       payload='{"type": "firing"}')
    sent = transport_for(destination).notify(delivery)
    assert sent.status_code == 202
    message = InboxMessage.objects.get()
    assert message.headers["webhook-id"] == delivery.webhook_id and message.headers["webhook-signature"].startswith("v1,")

    page = member.get(f"/alerts/{project.slug}/inbox/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "✓ signature verified" in html and delivery.webhook_id in html and "&quot;firing&quot;" in html

    # A body changed after signing no longer verifies.
    InboxMessage.objects.filter(pk=message.pk).update(body='{"type": "resolved"}')
    assert "✕ signature does not verify" in member.get(f"/alerts/{project.slug}/inbox/").content.decode()
    assert Destination.objects.filter(kind="inbox").count() == len(demo_rules), "every demo rule sends to the inbox"


def test_the_inbox_page_says_how_to_turn_it_on(project, member, settings):
    settings.WEBHOOK_INBOX = False
    assert "WEBHOOK_INBOX=1" in member.get(f"/alerts/{project.slug}/inbox/").content.decode()

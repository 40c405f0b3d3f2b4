"""Storm control: a flapping rule notifies at most once per state change and at
most once per ALERT_NOTIFY_INTERVAL_SECONDS; the history says what was held
back, and a state held back is sent once the interval has passed, so an
incident opened in a storm is closed."""

import pytest

from alerts.models import AlertEvent
from tests.support.alerts import SECRET
from tests.support.events import node_event

FLAPPING = [{"metric": "node_count", "window": "30s", "op": ">", "threshold": 0}]


@pytest.fixture
def flapping(create_rule, ingest, receiver, slack, pagerduty, smtp):
    """Nodes in the first half of each of 10 minutes: evaluated every 30 s the rule
    fires and resolves 20 times in 10 minutes (a state change on every evaluation)."""
    rule = create_rule(name="flapper", conditions=FLAPPING, destinations=[
        {"type": "webhook", "url": receiver.url, "secret": SECRET}, {"type": "slack", "url": slack.url},
        {"type": "pagerduty", "routing_key": "KEY"}, {"type": "email", "to": ["oncall@example.org"]}])
    ingest(*[node_event(f"n{minute}", f"t{minute}", seconds=minute * 60 + 5) for minute in range(10)])

    def sent() -> dict[str, list[str]]:
        return {"webhook": [r.json["type"].removeprefix("alert.") for r in receiver.received],
                "slack": [r.json["text"].split(":")[0].removeprefix("[Denoise] ") for r in slack.received],
                "pagerduty": [r.json["event_action"] for r in pagerduty.received],
                "email": [m["Subject"].split(":")[0].removeprefix("[Denoise] ") for _, _, m in smtp.messages]}

    return rule, sent


@pytest.mark.parametrize("interval", [300, 120])
def test_twenty_flaps_in_ten_minutes_send_at_most_the_configured_number(flapping, evaluate, alert_events, settings,
                                                                         interval):
    settings.ALERT_NOTIFY_INTERVAL_SECONDS = interval
    rule, sent = flapping
    for step in range(1, 21):
        evaluate(step / 2)
    events = alert_events()
    assert len(events) == 20, "every state change is recorded"
    assert [e["state"] for e in reversed(events)] == ["firing", "resolved"] * 10
    limit = 600 // interval + 1
    for kind, states in sent().items():
        assert 1 <= len(states) <= limit, (kind, states)
        assert all(a != b for a, b in zip(states, states[1:])), f"{kind}: once per state change"
    held = [e for e in events if e["held_back"]]
    assert len(held) == 20 - len(sent()["webhook"])

    # The storm is over (resolved at 10:00): once the interval has passed, the
    # destinations are told the state that held, once.
    for minute in range(11, 11 + interval // 60 + 2):
        evaluate(minute)
    final = sent()
    assert final["webhook"][-1] == "resolved" and final["pagerduty"][-1] == "resolve"
    assert final["slack"][-1] == "resolved" and final["email"][-1] == "resolved"
    assert len(final["webhook"]) <= limit + 1


def test_the_history_page_says_what_was_held_back(flapping, evaluate, member, settings):
    settings.ALERT_NOTIFY_INTERVAL_SECONDS = 300
    for step in range(1, 5):
        evaluate(step / 2)
    page = member.get("/alerts/acme/history/").content.decode()
    assert page.count("held back (storm control)") == AlertEvent.objects.filter(held_back=True).count() == 3


def test_a_zero_interval_sends_every_state_change(flapping, evaluate, settings):
    settings.ALERT_NOTIFY_INTERVAL_SECONDS = 0
    _, sent = flapping
    for step in range(1, 7):
        evaluate(step / 2)
    assert sent()["webhook"] == ["firing", "resolved"] * 3

"""The alert pages through Django's test client, as a logged-in member: the
builder (errors, preview, save), rule page actions, history with trace links."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from alerts.models import AlertRule
from tests.support.alerts import SECRET
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


FUSE_RULE = [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}]


def builder_post(**overrides) -> dict:
    form = {
        "name": "fuses", "match": "all", "for": "0m", "action": "save",
        "condition_metric": ["fuse_rate", "failure_rate"], "condition_window": ["15m", "15m"],
        "condition_change": ["", ""], "condition_agent_id": ["", ""],
        "condition_step": ["", "entity_extraction"], "condition_source_type": ["", ""],
        "condition_op": [">", ">"], "condition_threshold": ["20", "70"],  # rates are typed as percentages
        "destination_type": ["webhook"], "destination_address": ["https://example.org/hook"],
        "destination_secret": [SECRET],
    }
    form.update(overrides)
    return form


def recent_fused_nodes(ingest):
    """Fused nodes a minute ago, so "as of now" sees them."""
    now = timezone.now()
    events = []
    for i in range(3):
        event = node_event(f"n{i}", f"trace-{i}", step="entity_extraction", fuse={"decision": "block", "reason": "x"})
        event["timestamp"] = (now - timedelta(seconds=60 + i)).isoformat()
        events.append(event)
    ingest(*events)


def test_pages_need_a_member(client, project, create_rule):
    rule = create_rule(conditions=FUSE_RULE)
    for url in ("/alerts/acme/", f"/alerts/acme/{rule['id']}/", "/alerts/acme/history/", "/alerts/acme/new/"):
        assert client.get(url).status_code == 302, url
    outsider = get_user_model().objects.create_user("bob")
    client.force_login(outsider)
    for url in ("/alerts/acme/", f"/alerts/acme/{rule['id']}/", "/alerts/acme/history/"):
        assert client.get(url).status_code == 404, url


def test_another_projects_rule_is_not_found_from_this_project(member, make_project, create_rule):
    from rest_framework.test import APIClient

    _, key = make_project("globex")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    foreign = create_rule(client=other, conditions=FUSE_RULE)
    assert member.get(f"/alerts/acme/{foreign['id']}/").status_code == 404
    assert member.post(f"/alerts/acme/{foreign['id']}/toggle/").status_code == 404


def test_the_builder_creates_a_rule(member, api):
    response = member.post("/alerts/acme/new/", builder_post())
    assert response.status_code == 302
    rule = api.get("/api/v1/alert-rules").json()[0]
    assert response["Location"] == f"/alerts/acme/{rule['id']}/"
    assert rule["conditions"] == [
        {"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2},
        {"metric": "failure_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
         "threshold": 0.7},
    ]
    assert rule["destinations"][0]["url"] == "https://example.org/hook"
    page = member.get(response["Location"]).content.decode()
    assert "fuse_rate over 15m &gt; 0.2" in page
    assert "failure_rate [step=entity_extraction] over 15m &gt; 0.7" in page


def test_the_builder_shows_errors_by_field_and_keeps_the_input(member):
    response = member.post("/alerts/acme/new/", builder_post(condition_threshold=["20", "lots"],
                                                            condition_window=["15m", "15 minutes"]))
    assert response.status_code == 200
    page = response.content.decode()
    assert "<code>conditions[1].threshold</code>: A valid number is required." in page
    assert "<code>conditions[1].window</code>: must be a duration" in page
    assert 'value="lots"' in page
    assert AlertRule.objects.count() == 0


def test_preview_says_whether_the_rule_holds_now_without_saving(member, ingest):
    recent_fused_nodes(ingest)
    response = member.post("/alerts/acme/new/", builder_post(action="preview", condition_metric=["fuse_rate",
                                                                                                 "node_count"],
                                                            condition_threshold=["20", "0.7"]))
    page = response.content.decode()
    assert "As of now this rule would be: <strong>holding</strong>" in page
    assert re.search(r"fuse_rate over 15m &gt; 0.2</code>: value <strong>1</strong> — holds", page), "20 is 20%"
    assert AlertRule.objects.count() == 0

    response = member.post("/alerts/acme/new/", builder_post(action="preview", condition_threshold=["20", "5"],
                                                            condition_metric=["fuse_rate", "node_count"],
                                                            condition_step=["", ""]))
    page = response.content.decode()
    assert "As of now this rule would be: <strong>not holding</strong>" in page
    assert re.search(r"node_count over 15m &gt; 5</code>: value <strong>3</strong> — does not hold", page)


def test_editing_keeps_the_destination_and_its_history(member, api, create_rule):
    rule = create_rule(conditions=FUSE_RULE, destinations=[{"type": "webhook", "url": "https://example.org/hook",
                                                            "secret": SECRET}])
    form = member.get(f"/alerts/acme/{rule['id']}/edit/").content.decode()
    assert 'value="https://example.org/hook"' in form
    response = member.post(f"/alerts/acme/{rule['id']}/edit/", builder_post(name="renamed"))
    assert response.status_code == 302
    after = api.get(f"/api/v1/alert-rules/{rule['id']}").json()
    assert after["name"] == "renamed"
    assert after["destinations"][0]["id"] == rule["destinations"][0]["id"]


def test_enable_disable_mute_and_delete(member, api, create_rule):
    rule = create_rule(conditions=FUSE_RULE)
    url = f"/alerts/acme/{rule['id']}/"
    member.post(url + "toggle/")
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["enabled"] is False
    assert "Disabled" in member.get(url).content.decode()
    member.post(url + "toggle/")
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["enabled"] is True

    member.post(url + "mute/", {"minutes": "60"})
    muted_until = api.get(f"/api/v1/alert-rules/{rule['id']}").json()["muted_until"]
    assert muted_until is not None
    assert "Muted until" in member.get(url).content.decode()
    member.post(url + "mute/", {"until": "2099-01-02T03:04"})
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["muted_until"] == "2099-01-02T03:04:00Z"
    response = member.post(url + "mute/", {"until": "2001-01-01T00:00"}, follow=True)
    assert "give a time in the future" in response.content.decode()
    member.post(url + "mute/", {"unmute": "1"})
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["muted_until"] is None

    assert member.get(url + "toggle/").status_code == 405
    member.post(url + "delete/")
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").status_code == 404


def test_send_test_posts_and_shows_the_attempt(member, create_rule, receiver, django_capture_on_commit_callbacks):
    rule = create_rule(conditions=FUSE_RULE, destinations=[{"type": "webhook", "url": receiver.url,
                                                            "secret": SECRET}])
    with django_capture_on_commit_callbacks(execute=True):
        response = member.post(f"/alerts/acme/{rule['id']}/test/")
    assert response.status_code == 302
    request = receiver.wait_for(1)[0]
    assert request.verified
    assert request.json["type"] == "alert.test"
    assert request.json["rule"] == {"id": rule["id"], "name": "rule"}
    page = member.get(f"/alerts/acme/{rule['id']}/").content.decode()
    assert request.headers["webhook-id"] in page
    assert re.search(r"<td>1</td><td>[\d:]+</td><td>ok</td>\s*<td>200</td><td>\d+ ms</td>", page)
    assert "answered 200" in page


def test_a_disabled_destination_can_be_enabled_again(member, api, create_rule, receiver, evaluate, ingest):
    receiver.script = [410]
    rule = create_rule(conditions=[{"metric": "node_count", "window": "5m", "op": "<", "threshold": 1}],
                       destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    evaluate(0)
    page = member.get(f"/alerts/acme/{rule['id']}/").content.decode()
    assert "410 Gone" in page and "Enable again" in page
    destination_id = rule["destinations"][0]["id"]
    member.post(f"/alerts/acme/{rule['id']}/destinations/{destination_id}/enable/")
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["destinations"][0]["disabled"] is False


def test_history_lists_events_with_values_and_example_traces(member, create_rule, ingest, evaluate):
    rule = create_rule(name="fuses <b>", conditions=FUSE_RULE)
    ingest(node_event("ok1", "calm-trace", seconds=10, confidence=0.9),
           node_event("bad1", "<script>alert(1)</script>", seconds=20, fuse={"decision": "block", "reason": "x"}))
    evaluate(1)
    page = member.get("/alerts/acme/history/").content.decode()
    assert "fuses &lt;b&gt;" in page
    assert "<code>fuse_rate</code> 0.5" in page
    links = re.findall(r'<a class="trace-link" href="([^"]+)">([^<]+)</a>', page)
    assert links[0] == ("/p/acme/traces/%3Cscript%3Ealert(1)%3C/script%3E/", "&lt;script&gt;alert(1)&lt;/script&gt;"), \
        "the fused trace first, escaped"
    assert links[1] == ("/p/acme/traces/calm-trace/", "calm-trace")
    assert "<script>alert(1)" not in page
    assert f"/alerts/acme/{rule['id']}/" in page


def test_the_builder_takes_rates_as_percentages_and_shows_them_back(member, api):
    member.post("/alerts/acme/new/", builder_post())
    rule = api.get("/api/v1/alert-rules").json()[0]
    assert [c["threshold"] for c in rule["conditions"]] == [0.2, 0.7]
    form = member.get(f"/alerts/acme/{rule['id']}/edit/").content.decode()
    assert form.count('name="condition_threshold" value="20"') == 1
    assert 'name="condition_threshold" value="70"' in form


def test_a_rate_over_100_percent_is_refused_by_the_builder(member):
    response = member.post("/alerts/acme/new/", builder_post(condition_threshold=["2000", "70"]))
    assert response.status_code == 200
    assert "<code>conditions[0].threshold</code>: fuse_rate is a percentage: give 0-100" in response.content.decode()
    assert AlertRule.objects.count() == 0


def test_a_relative_change_is_not_a_percentage(member, api):
    member.post("/alerts/acme/new/", builder_post(condition_change=["relative", ""], condition_threshold=["0.5", "70"]))
    assert api.get("/api/v1/alert-rules").json()[0]["conditions"][0]["threshold"] == 0.5


def test_the_builder_lists_the_known_agents_steps_sources_and_rounds(member, ingest):
    ingest(node_event("a", "t1", agent_id="retriever", step="retrieval", source_type="retrieval", round=1),
           node_event("b", "t1", agent_id="reasoner", step="reasoning", source_type="reasoning", round=2))
    page = member.get("/alerts/acme/new/").content.decode()
    for key, values in {"agent_id": ["reasoner", "retriever"], "step": ["reasoning", "retrieval"],
                        "round": ["1", "2"]}.items():
        listed = re.search(f'<datalist id="known-{key}">(.*?)</datalist>', page).group(1)
        assert re.findall(r'<option value="([^"]*)">', listed) == values


def test_a_local_webhook_is_refused_with_how_to_reach_it(member, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    response = member.post("/alerts/acme/new/", builder_post(destination_address=["http://127.0.0.1:9000/hook"]))
    page = response.content.decode()
    assert "<code>destinations[0].url</code>" in page and "WEBHOOK_ALLOW_PRIVATE=1" in page and "inbox" in page
    assert 'id="local-receiver-hint"' in page


def test_the_builder_sends_to_every_kind(member, api):
    api.post("/api/v1/destinations", {"name": "on-call", "type": "pagerduty", "routing_key": "abc"}, format="json")
    response = member.post("/alerts/acme/new/", builder_post(
        destination_type=["slack", "email", "pagerduty", "shared:on-call"],
        destination_address=["https://hooks.slack.example/services/x", "a@example.org, b@example.org", "KEY", ""],
        destination_secret=["", "", "", ""]))
    assert response.status_code == 302, response.content.decode()[-3000:]
    shown = [{k: v for k, v in d.items() if k not in ("id", "disabled", "disabled_reason")}
             for d in api.get("/api/v1/alert-rules").json()[0]["destinations"]]
    assert shown == [{"type": "slack", "url": "https://hooks.slack.example/services/x"},
                     {"type": "email", "to": ["a@example.org", "b@example.org"]},
                     {"type": "pagerduty", "routing_key": "KEY"},
                     {"type": "shared", "name": "on-call", "kind": "pagerduty"}]


def test_send_test_is_not_the_primary_button_without_a_destination(member, create_rule):
    rule = create_rule(conditions=FUSE_RULE)
    page = member.get(f"/alerts/acme/{rule['id']}/").content.decode()
    button = re.search(r'<button[^>]*id="send-test-button"[^>]*>', page).group(0)
    assert "primary" not in button and "disabled" in button


def test_send_test_to_one_destination_shows_the_receivers_answer(member, create_rule, slack):
    slack.script = [404]
    rule = create_rule(conditions=FUSE_RULE, destinations=[{"type": "slack", "url": slack.url}])
    destination_id = rule["destinations"][0]["id"]
    response = member.post(f"/alerts/acme/{rule['id']}/destinations/{destination_id}/test/", follow=True)
    page = response.content.decode()
    assert "failed: Slack: the incoming webhook was removed (404)" in page and "answered 404" in page
    assert slack.received[0].json["text"].startswith("[Denoise] test: ")


def test_the_destinations_page_adds_and_lists_project_destinations(member, api, create_rule):
    response = member.post("/alerts/acme/destinations/", {"name": "on-call", "type": "email",
                                                          "address": "oncall@example.org", "secret": ""})
    assert response.status_code == 302
    create_rule(name="uses it", conditions=FUSE_RULE, destinations=[{"type": "shared", "name": "on-call"}])
    page = member.get("/alerts/acme/destinations/").content.decode()
    assert "on-call" in page and "oncall@example.org" in page and "uses it" in page
    bad = member.post("/alerts/acme/destinations/", {"name": "x", "type": "email", "address": "nope", "secret": ""})
    assert "<code>to[0]</code>" in bad.content.decode()
    assert [d["name"] for d in api.get("/api/v1/destinations").json()] == ["on-call"]

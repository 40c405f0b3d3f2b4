"""Hostile input to the destinations and silences endpoints (the API, a rule's
inline destinations, and the pages that add them) answers below 500, and a
refused request stores nothing. Seeded: a failure reproduces."""

import json
import random
from datetime import timedelta

import pytest
from django.utils import timezone

from alerts.models import AlertRule, Destination, SharedDestination, Silence

SEED = 25
CASES = 120  # per endpoint; each case one request
RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]
FUTURE = (timezone.now() + timedelta(days=30)).isoformat()

HOSTILE = [
    None, True, False, 0, -1, 1.5, 10**30, -(2**63) - 1, 2**63, 1e308, "", " ", "\x00", "a\x00b", "x" * 5000,
    "💥" * 40, "\u202egnp.exe", "<b>x</b>", [], {}, [None], {"a": None}, [1, "a", None], ["a@b.example"] * 300,
    "2026-02-30T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+01:00", "+275760-09-13T00:00:00Z",
    "2026-11-20T25:61:61Z", "http://[::1]/x", "http://169.254.169.254/latest", "http://0x7f.1/x", "https://exa mple.org",
    "http://xn--/x", "https://" + "a" * 300 + ".example/x", "javascript:alert(1)", "x@" + "a" * 300 + ".example",
    "oncall@example.org\r\nBcc: all@example.org", "²", "9" * 40, "-0", "1e999",
]


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


DESTINATIONS = [
    {"name": "chat", "type": "slack", "url": "https://hooks.slack.example/services/T/B/x"},
    {"name": "mail", "type": "email", "to": ["oncall@example.org", "lead@example.org"]},
    {"name": "pager", "type": "pagerduty", "routing_key": "R0UT1NGKEY"},
    {"name": "hook", "type": "webhook", "url": "https://example.org/hook", "secret": "whsec_abc"},
    {"name": "box", "type": "inbox"},
]
# The pages' form inputs (one string each), hostile values as a browser would send them.
PAGE_STRINGS = [v if isinstance(v, str) else json.dumps(v) for v in HOSTILE]


def mutated(template: dict, rng: random.Random) -> object:
    """The template with one key given a hostile value, or dropped, or one unknown key added; now and then
    not an object at all, or an object nested one level deeper."""
    body = json.loads(json.dumps(template))
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([[body], "text", 3, None, [None, None]])
    if roll < 0.15:
        body.pop(rng.choice(list(body)), None)
    elif roll < 0.2:
        body[rng.choice(["channel", "rule", "id", "\x00", "type2"])] = rng.choice(HOSTILE)
    else:
        key = rng.choice(list(body))
        value = rng.choice(HOSTILE)
        if isinstance(body[key], list) and rng.random() < 0.5:
            body[key] = [*body[key][:1], value]  # a hostile element in a good list
        else:
            body[key] = value
    return body


def answer_below_500(response, body) -> int:
    assert response.status_code < 500, (body, response.content[:500])
    return response.status_code


def test_hostile_project_destinations_are_refused_and_store_nothing(api):
    rng = random.Random(SEED)
    existing = api.post("/api/v1/destinations", {**DESTINATIONS[0], "name": "kept"}, format="json").json()
    for _ in range(CASES):
        body = mutated(rng.choice(DESTINATIONS), rng)
        before = SharedDestination.objects.count()
        if answer_below_500(api.post("/api/v1/destinations", body, format="json"), body) != 201:
            assert SharedDestination.objects.count() == before, body
        else:
            SharedDestination.objects.exclude(pk=existing["id"]).delete()
        status = answer_below_500(api.put(f"/api/v1/destinations/{existing['id']}", body, format="json"), body)
        if status != 200:
            assert SharedDestination.objects.filter(pk=existing["id"], name="kept", kind="slack",
                                                    config={"url": DESTINATIONS[0]["url"]}).exists(), body
        else:
            api.put(f"/api/v1/destinations/{existing['id']}", {**DESTINATIONS[0], "name": "kept"}, format="json")
    for hostile_id in ["0", "-1", "9" * 30, "x", "%00"]:
        for method in (api.get, api.put, api.delete):
            answer_below_500(method(f"/api/v1/destinations/{hostile_id}"), hostile_id)


def test_hostile_inline_destinations_are_refused_and_store_nothing(api):
    rng = random.Random(SEED + 1)
    for _ in range(CASES):
        destination = mutated({k: v for k, v in rng.choice(DESTINATIONS).items() if k != "name"}, rng)
        body = {"name": "r", "conditions": RULE, "destinations": [destination]}
        if answer_below_500(api.post("/api/v1/alert-rules", body, format="json"), body) != 201:
            assert not AlertRule.objects.exists() and not Destination.objects.exists(), body
        AlertRule.objects.all().delete()


def test_hostile_silences_are_refused_and_store_nothing(api, create_rule):
    rng = random.Random(SEED + 2)
    rule = create_rule(conditions=RULE)
    templates = [{"rule_id": rule["id"], "until": FUTURE, "reason": "reindex"}, {"until": FUTURE, "reason": "x"}]
    for _ in range(CASES):
        body = mutated(rng.choice(templates), rng)
        if answer_below_500(api.post("/api/v1/silences", body, format="json"), body) != 201:
            assert not Silence.objects.exists(), body
        Silence.objects.all().delete()
    for hostile_id in ["0", "-1", "9" * 30, "x", "%00"]:
        answer_below_500(api.delete(f"/api/v1/silences/{hostile_id}"), hostile_id)
        answer_below_500(api.get(f"/api/v1/silences/{hostile_id}"), hostile_id)


def test_hostile_forms_on_the_destinations_and_silences_pages(member, api, create_rule):
    rng = random.Random(SEED + 3)
    rule = create_rule(conditions=RULE)
    for _ in range(CASES):
        form = {"name": "chat", "type": rng.choice(["slack", "email", "pagerduty", "webhook", "inbox", "shared:x",
                                                   "sms", ""]),
                "address": "https://hooks.slack.example/services/T/B/x", "secret": ""}
        form[rng.choice(list(form))] = rng.choice(PAGE_STRINGS)
        if answer_below_500(member.post("/alerts/acme/destinations/", form), form) != 302:
            assert not SharedDestination.objects.exists(), form
        SharedDestination.objects.all().delete()

        form = {"rule_id": str(rule["id"]), "minutes": "60", "until": "", "reason": "reindex"}
        form[rng.choice(list(form))] = rng.choice(PAGE_STRINGS)
        if answer_below_500(member.post("/alerts/acme/silences/", form), form) != 302:
            assert not Silence.objects.exists(), form
        Silence.objects.all().delete()
    for hostile_id in ["0", "9" * 30]:
        answer_below_500(member.post(f"/alerts/acme/silences/{hostile_id}/end/"), hostile_id)
        answer_below_500(member.post(f"/alerts/acme/destinations/{hostile_id}/delete/"), hostile_id)
        answer_below_500(member.post(f"/alerts/acme/destinations/{hostile_id}/enable/"), hostile_id)


@pytest.mark.parametrize("minutes", ["9" * 30, "²", "-5"])
def test_a_silence_or_mute_of_impossible_minutes_is_a_form_error(member, create_rule, minutes):
    response = member.post("/alerts/acme/silences/", {"rule_id": "", "minutes": minutes, "until": "", "reason": "x"})
    assert response.status_code == 200 and not Silence.objects.exists()
    assert "until" in response.content.decode()
    rule = create_rule(conditions=RULE)
    response = member.post(f"/alerts/acme/{rule['id']}/mute/", {"minutes": minutes}, follow=True)
    assert response.status_code == 200 and "give a time in the future" in response.content.decode()
    assert AlertRule.objects.get(pk=rule["id"]).muted_until is None


@pytest.mark.parametrize("until", ["2026-02-30T00:00:00", "2026-11-20T25:61:61"])
def test_a_mute_until_no_such_time_is_a_form_error(member, create_rule, until):
    rule = create_rule(conditions=RULE)
    response = member.post(f"/alerts/acme/{rule['id']}/mute/", {"until": until}, follow=True)
    assert response.status_code == 200
    assert AlertRule.objects.get(pk=rule["id"]).muted_until is None


@pytest.mark.parametrize("rule_id", ["²", "x", "9" * 30, "-1"])
def test_a_silence_of_a_rule_id_that_is_none_is_a_form_error_not_every_rule(member, rule_id):
    response = member.post("/alerts/acme/silences/", {"rule_id": rule_id, "minutes": "60", "until": "", "reason": "x"})
    assert response.status_code == 200 and not Silence.objects.exists()

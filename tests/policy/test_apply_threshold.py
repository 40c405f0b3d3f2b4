"""Apply this threshold: Calibration's suggested block threshold becomes a new
policy version with a note saying where it came from, once its price was shown
and confirmed; too few reviews, no suggestion (and the page says how many are
needed)."""

import re

import pytest

from policy.suggestion import MIN_REVIEWS
from tests.policy.calibration_data import reviewed_nodes
from tests.support.events import BASE_TIME


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


RANGE = {"start": (BASE_TIME.replace(hour=0)).strftime("%Y-%m-%dT%H:%M:%S"),
         "end": (BASE_TIME.replace(hour=23)).strftime("%Y-%m-%dT%H:%M:%S")}
APPLY = "/policy/acme/apply-threshold"


def confirmed(member, data):
    """Apply, as the page does it: the preview first, then the confirmation of the threshold it priced."""
    shown = member.post(APPLY, data)
    assert shown.status_code == 200, shown
    block = re.search(r'name="block" value="([^"]+)"', shown.content.decode()).group(1)
    return member.post(APPLY, {**data, "block": block, "confirm": "yes"})


def test_calibration_offers_the_suggested_threshold_and_applying_it_makes_a_version(member, ingest, api):
    ingest(*reviewed_nodes(60))
    page = member.get("/metrics/acme/calibration/", RANGE).content.decode()
    assert "Apply this threshold" in page
    response = confirmed(member, {**RANGE, "scope": "profile"})
    assert response.status_code == 302 and response["Location"] == "/policy/acme/"
    policy = api.get("/api/v1/policy").json()
    assert policy["version"] == 1
    block = policy["profiles"]["default"]["block"]
    assert 0.3 < block < 0.5
    assert "AUC" in policy["note"] and "Youden's J" in policy["note"] and "60 reviews" in policy["note"]
    versions = api.get("/api/v1/policy/versions").json()
    assert versions[0]["source"] == "calibration" and versions[0]["changed_by"] == "mia"


def test_the_threshold_can_go_to_the_agent_type_or_the_step_filtered_on(member, ingest, api):
    ingest(*reviewed_nodes(60))
    page = member.get("/metrics/acme/calibration/", {**RANGE, "agent_id": "retrieval_agent_v2"}).content.decode()
    assert "by_agent_type:retrieval_agent_v2" in page
    confirmed(member, {**RANGE, "agent_id": "retrieval_agent_v2", "scope": "by_agent_type:retrieval_agent_v2"})
    confirmed(member, {**RANGE, "step": "retrieval", "scope": "by_step:retrieval"})
    profile = api.get("/api/v1/policy").json()["profiles"]["default"]
    assert profile["block"] == 0.5
    assert 0.3 < profile["by_agent_type"]["retrieval_agent_v2"]["block"] < 0.5
    assert 0.3 < profile["by_step"]["retrieval"]["block"] < 0.5


def test_too_few_reviews_are_refused_saying_how_many_are_needed(member, ingest, api):
    ingest(*reviewed_nodes(12))
    page = member.get("/metrics/acme/calibration/", RANGE).content.decode()
    assert "Apply this threshold" not in page
    assert f"at least {MIN_REVIEWS} are needed" in page and "12 reviewed answers" in page
    response = member.post(APPLY, {**RANGE, "scope": "profile"}, follow=True)
    assert f"at least {MIN_REVIEWS} are needed" in response.content.decode()
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_bad_filters_or_scope_change_nothing(member, ingest, api):
    ingest(*reviewed_nodes(40))
    assert "not valid" in member.post(APPLY, {"start": "yesterday"}, follow=True).content.decode()
    assert "not applied" in member.post(APPLY, {**RANGE, "scope": "everything"}, follow=True).content.decode()
    assert "not applied" in member.post(APPLY, {**RANGE, "scope": "by_step:"}, follow=True).content.decode()
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_another_projects_calibration_cannot_be_applied(member, make_project):
    make_project("globex")
    assert member.post("/policy/globex/apply-threshold", {"scope": "profile"}).status_code == 404


def test_with_no_range_chosen_the_box_judges_the_reviews_the_page_shows(member, ingest, api):
    # The data is days old: the page fits its range to it, and so must the suggestion and the form.
    ingest(*reviewed_nodes(60))
    page = member.get("/metrics/acme/calibration/").content.decode()
    assert 'id="range-fitted"' in page and "60 reviews)" in page and "Apply this threshold" in page
    fields = dict(re.findall(r'<input type="hidden" name="(start|end)" value="([^"]*)">', page))
    confirmed(member, {**fields, "scope": "profile"})
    assert "60 reviews" in api.get("/api/v1/policy").json()["note"]

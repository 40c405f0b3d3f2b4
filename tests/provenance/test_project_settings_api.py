"""`GET/PATCH /api/v1/project`: the key's project's settings, validated field by field."""

import pytest

from tenancy.models import Project

pytestmark = pytest.mark.django_db

DEFAULTS = {"trace_days": None, "full_content_days": None, "keep_full_below": 0.8}


def test_a_new_project_keeps_everything(api):
    answer = api.get("/api/v1/project")
    assert answer.status_code == 200
    assert answer.json() == {"slug": "acme", "name": "", "high_uncertainty_threshold": 0.5, "retention": DEFAULTS,
                             "prices": {}}


def test_a_patch_changes_only_what_it_names(api):
    answer = api.patch("/api/v1/project", {"retention": {"full_content_days": 7}}, format="json")
    assert answer.status_code == 200
    assert answer.json()["retention"] == {**DEFAULTS, "full_content_days": 7}
    answer = api.patch("/api/v1/project", {"high_uncertainty_threshold": 0.4,
                                           "retention": {"trace_days": 90, "keep_full_below": 0.7}}, format="json")
    assert answer.json()["high_uncertainty_threshold"] == 0.4
    assert answer.json()["retention"] == {"trace_days": 90, "full_content_days": 7, "keep_full_below": 0.7}
    assert api.get("/api/v1/project").json() == answer.json()


def test_the_settings_read_edited_and_sent_back_whole_are_accepted(api):
    document = api.get("/api/v1/project").json()
    document["retention"]["trace_days"] = 30

    answer = api.patch("/api/v1/project", document, format="json")

    assert answer.status_code == 200, answer.content
    assert answer.json() == document


def test_null_goes_back_to_keeping_forever(api):
    api.patch("/api/v1/project", {"retention": {"trace_days": 30, "full_content_days": 1}}, format="json")
    answer = api.patch("/api/v1/project", {"retention": {"trace_days": None, "full_content_days": None}},
                       format="json")
    assert answer.json()["retention"] == DEFAULTS


@pytest.mark.parametrize("body, field", [
    ({"retention": {"trace_days": -1}}, "retention.trace_days"),
    ({"retention": {"trace_days": 0}}, "retention.trace_days"),
    ({"retention": {"trace_days": 10**9}}, "retention.trace_days"),
    ({"retention": {"trace_days": 1.5}}, "retention.trace_days"),
    ({"retention": {"trace_days": "90"}}, "retention.trace_days"),
    ({"retention": {"trace_days": True}}, "retention.trace_days"),
    ({"retention": {"full_content_days": -7}}, "retention.full_content_days"),
    ({"retention": {"full_content_days": 10**12}}, "retention.full_content_days"),
    ({"retention": {"keep_full_below": 1.5}}, "retention.keep_full_below"),
    ({"retention": {"keep_full_below": -0.1}}, "retention.keep_full_below"),
    ({"retention": {"keep_full_below": None}}, "retention.keep_full_below"),
    ({"retention": {"keep_full_below": "high"}}, "retention.keep_full_below"),
    ({"retention": {"keep_forever": True}}, "retention.keep_forever"),
    ({"retention": [90]}, "retention"),
    ({"high_uncertainty_threshold": 2}, "high_uncertainty_threshold"),
    ({"high_uncertainty_threshold": False}, "high_uncertainty_threshold"),
    ({"slug": "renamed"}, "slug"),
    ({"colour": "blue"}, "colour"),
    ({"name": 5}, "name"),
])
def test_a_bad_value_is_refused_by_name_and_changes_nothing(api, body, field):
    before = api.get("/api/v1/project").json()
    # A good change beside the bad one is not applied either.
    answer = api.patch("/api/v1/project", {**body, "name": "changed"} if "name" not in body else body, format="json")
    assert answer.status_code == 400
    assert field in answer.json()["fields"]
    assert answer.json()["error"]
    assert api.get("/api/v1/project").json() == before


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'"text"', b"null"])
def test_a_body_that_is_not_an_object_is_a_clear_400(api, raw):
    answer = api.generic("PATCH", "/api/v1/project", raw, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"]


def test_each_key_sees_and_changes_its_own_project(api, other_api):
    other_api.patch("/api/v1/project", {"retention": {"trace_days": 5}}, format="json")
    assert api.get("/api/v1/project").json()["retention"] == DEFAULTS
    assert other_api.get("/api/v1/project").json()["slug"] == "globex"
    assert Project.objects.get(slug="globex").trace_days == 5


def test_no_key_no_settings(client):
    assert client.get("/api/v1/project").status_code == 401
    assert client.patch("/api/v1/project", {}, content_type="application/json").status_code == 401


PRICES = {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}, "local": {"input_per_mtok": 0,
                                                                                      "output_per_mtok": 0}}


def test_the_price_table_is_set_read_and_replaced_whole(api):
    answer = api.patch("/api/v1/project", {"prices": PRICES}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["prices"] == PRICES
    assert api.get("/api/v1/project").json()["prices"] == PRICES
    api.patch("/api/v1/project", {"prices": {"local": PRICES["local"]}}, format="json")
    assert api.get("/api/v1/project").json()["prices"] == {"local": PRICES["local"]}


@pytest.mark.parametrize("prices, field", [
    ({"m": {"input_per_mtok": -0.1, "output_per_mtok": 1}}, "prices.m.input_per_mtok"),
    ({"m": {"input_per_mtok": 1, "output_per_mtok": "1"}}, "prices.m.output_per_mtok"),
    ({"m": {"input_per_mtok": True, "output_per_mtok": 1}}, "prices.m.input_per_mtok"),
    ({"m": {"input_per_mtok": 1e308, "output_per_mtok": 1}}, "prices.m.input_per_mtok"),
    ({"m": {"input_per_mtok": 1, "output_per_mtok": None}}, "prices.m.output_per_mtok"),
    ({"m": {"input_per_mtok": 1}}, "prices.m.output_per_mtok"),
    ({"m": {"input_per_mtok": 1, "output_per_mtok": 1, "cached_per_mtok": 1}}, "prices.m.cached_per_mtok"),
    ({"m": 0.5}, "prices.m"),
    ({"": {"input_per_mtok": 1, "output_per_mtok": 1}}, "prices."),
    ([1, 2], "prices"),
    ("cheap", "prices"),
])
def test_a_bad_price_is_refused_by_name_and_changes_nothing(api, prices, field):
    api.patch("/api/v1/project", {"prices": PRICES}, format="json")
    before = api.get("/api/v1/project").json()
    answer = api.patch("/api/v1/project", {"prices": prices, "name": "changed"}, format="json")
    assert answer.status_code == 400
    assert field in answer.json()["fields"], answer.json()
    assert api.get("/api/v1/project").json() == before

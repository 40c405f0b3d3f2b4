"""`/api/v1/policy`: the default, replacing it, ETag and 304, versions,
rollback, validation naming the field, and isolation between projects."""

import pytest

DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5,
           "max_retries": 2, "escalate_after": 3}
TUNED = {
    "default": {"accept": 0.8, "block": 0.5,
                "by_agent_type": {"retrieval": {"accept": 0.7, "block": 0.4}},
                "by_step": {"refund": {"accept": 0.95, "block": 0.9}},
                "max_rounds": 5, "max_retries": 2, "escalate_after": 3},
}


def put(api, profiles, note="", **headers):
    return api.put("/api/v1/policy", {"profiles": profiles, "note": note}, format="json", **headers)


def test_before_any_change_the_policy_is_version_0_with_the_default_profile(api):
    response = api.get("/api/v1/policy")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 0
    assert body["profiles"] == {"default": DEFAULT}
    assert "updated_at" in body and "note" in body
    assert response["ETag"]


def test_put_replaces_the_policy_and_answers_the_next_version(api):
    response = put(api, TUNED, "retrieval block 0.4 (ROC)")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 1
    assert body["note"] == "retrieval block 0.4 (ROC)"
    assert body["profiles"] == TUNED
    assert api.get("/api/v1/policy").json() == body
    assert put(api, TUNED, "again").json()["version"] == 2


def test_a_profile_may_leave_out_keys_which_take_the_defaults(api):
    body = put(api, {"default": {"block": 0.6}, "strict": {"accept": 0.95, "block": 0.9,
                                                          "by_step": {"refund": {"block": 0.92}}}}).json()
    assert body["profiles"]["default"] == {**DEFAULT, "block": 0.6}
    assert body["profiles"]["strict"]["by_step"] == {"refund": {"accept": 0.95, "block": 0.92}}


def test_if_none_match_with_the_current_etag_answers_304_without_a_body(api):
    etag = api.get("/api/v1/policy")["ETag"]
    response = api.get("/api/v1/policy", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag


def test_a_change_changes_the_etag_and_the_old_one_gets_the_new_policy(api):
    old = api.get("/api/v1/policy")["ETag"]
    new = put(api, TUNED)["ETag"]
    assert new != old
    response = api.get("/api/v1/policy", HTTP_IF_NONE_MATCH=old)
    assert response.status_code == 200
    assert response.json()["version"] == 1
    assert response["ETag"] == new
    assert api.get("/api/v1/policy", HTTP_IF_NONE_MATCH=f'"x", W/{new}').status_code == 304


def test_the_304_path_is_the_key_lookup_and_one_version_probe(api, django_assert_max_num_queries):
    etag = put(api, TUNED)["ETag"]
    api.get("/api/v1/policy")  # the key's last-used stamp is written at most once a minute
    with django_assert_max_num_queries(2):
        assert api.get("/api/v1/policy", HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_versions_are_listed_newest_first(api):
    put(api, TUNED, "first")
    put(api, {"default": DEFAULT}, "second")
    versions = api.get("/api/v1/policy/versions").json()
    assert [v["version"] for v in versions] == [2, 1, 0]
    assert [v["note"] for v in versions[:2]] == ["second", "first"]
    assert all("updated_at" in v for v in versions)
    assert versions[0]["changed_by"].startswith("API key dd_")


def test_rollback_makes_a_new_version_equal_to_the_one_named(api):
    put(api, TUNED, "tuned")
    put(api, {"default": {**DEFAULT, "block": 0.7}}, "stricter")
    response = api.post("/api/v1/policy/rollback", {"version": 1}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 3
    assert body["profiles"] == TUNED
    assert api.get("/api/v1/policy").json()["profiles"] == TUNED
    assert api.post("/api/v1/policy/rollback", {"version": 0}, format="json").json()["profiles"] == {"default": DEFAULT}


@pytest.mark.parametrize("body", [{"version": 9}, {"version": -1}, {"version": "1"}, {}, {"version": 1, "x": 1},
                                  {"version": 10**30}, {"version": 1.0}, {"version": None}, [1]])
def test_rollback_to_an_unknown_version_names_the_field_and_changes_nothing(api, body):
    put(api, TUNED)
    response = api.post("/api/v1/policy/rollback", body, format="json")
    assert response.status_code == 400
    fields = response.json()["fields"]
    assert "version" in fields or "x" in fields
    assert api.get("/api/v1/policy").json()["version"] == 1


BAD = [
    ({"default": {**DEFAULT, "block": 0.9}}, "profiles.default.block"),
    ({"default": {**DEFAULT, "accept": 1.2}}, "profiles.default.accept"),
    ({"default": {**DEFAULT, "block": -0.1}}, "profiles.default.block"),
    ({"default": {**DEFAULT, "accept": "high"}}, "profiles.default.accept"),
    ({"default": {**DEFAULT, "accept": True}}, "profiles.default.accept"),
    ({"default": {**DEFAULT, "max_rounds": 10**30}}, "profiles.default.max_rounds"),
    ({"": DEFAULT, "default": DEFAULT}, "profiles."),
    ({"default": {**DEFAULT, "by_agent_type": {"retrieval": {"accept": 0.3, "block": 0.4}}}},
     "profiles.default.by_agent_type.retrieval.block"),
    ({"default": {**DEFAULT, "by_step": {"refund": {"accept": 0.95, "block": 1.5}}}},
     "profiles.default.by_step.refund.block"),
    ({"default": {**DEFAULT, "by_step": {"refund": {"accept": 0.9, "blok": 0.5}}}},
     "profiles.default.by_step.refund.blok"),
    ({"default": {**DEFAULT, "by_step": {"refund": 0.9}}}, "profiles.default.by_step.refund"),
    ({"default": {**DEFAULT, "by_agent_type": []}}, "profiles.default.by_agent_type"),
    ({"default": {**DEFAULT, "max_rounds": -1}}, "profiles.default.max_rounds"),
    ({"default": {**DEFAULT, "max_retries": 1.5}}, "profiles.default.max_retries"),
    ({"default": {**DEFAULT, "escalate_after": "3"}}, "profiles.default.escalate_after"),
    ({"default": {**DEFAULT, "colour": "red"}}, "profiles.default.colour"),
    ({"strict": DEFAULT}, "profiles.default"),
    ({"default": DEFAULT, "strict": {**DEFAULT, "block": 0.99}}, "profiles.strict.block"),
    ({"default": "loose"}, "profiles.default"),
    ([], "profiles"),
]


@pytest.mark.parametrize("profiles, field", BAD)
def test_a_bad_policy_is_a_400_naming_the_field_and_nothing_changes(api, profiles, field):
    before = put(api, TUNED).json()
    response = put(api, profiles)
    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["fields"], body
    assert field in body["error"] or len(body["fields"]) > 1
    assert api.get("/api/v1/policy").json() == before
    assert len(api.get("/api/v1/policy/versions").json()) == 2


@pytest.mark.parametrize("body, field", [
    ({"note": "no profiles"}, "profiles"),
    ({"profiles": {"default": DEFAULT}, "notes": "typo"}, "notes"),
    ({"profiles": {"default": DEFAULT}, "note": 7}, "note"),
])
def test_a_bad_document_names_the_field(api, body, field):
    response = api.put("/api/v1/policy", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"]
    assert api.get("/api/v1/policy").json()["version"] == 0


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b"null", b'{"profiles": {"default": {"accept": 1e309}}}',
                                 b'{"profiles": {"default": {"accept": NaN}}}'])
def test_a_body_that_is_no_policy_object_is_a_400(api, raw):
    response = api.generic("PUT", "/api/v1/policy", raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_if_match_with_a_stale_etag_refuses_the_change(api):
    stale = api.get("/api/v1/policy")["ETag"]
    put(api, TUNED)
    response = put(api, {"default": DEFAULT}, HTTP_IF_MATCH=stale)
    assert response.status_code == 412
    assert api.get("/api/v1/policy").json()["version"] == 1


def test_each_project_has_its_own_policy(api, other_api):
    put(api, TUNED, "acme's")
    assert other_api.get("/api/v1/policy").json()["version"] == 0
    assert other_api.post("/api/v1/policy/rollback", {"version": 1}, format="json").status_code == 400
    assert [v["version"] for v in other_api.get("/api/v1/policy/versions").json()] == [0]
    put(other_api, {"default": {**DEFAULT, "block": 0.6}})
    assert api.get("/api/v1/policy").json()["profiles"] == TUNED


@pytest.mark.parametrize("method, path", [("get", "/api/v1/policy"), ("put", "/api/v1/policy"),
                                          ("get", "/api/v1/policy/versions"), ("post", "/api/v1/policy/rollback")])
def test_the_policy_needs_an_api_key(client, db, method, path):
    assert getattr(client, method)(path).status_code == 401


def test_a_policy_read_edited_and_sent_back_replaces_it(api):
    document = api.get("/api/v1/policy").json()
    document["profiles"]["default"]["block"] = 0.4
    document["note"] = "block 0.4"

    response = api.put("/api/v1/policy", document, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["version"] == 1
    assert api.get("/api/v1/policy").json()["profiles"]["default"] == {**DEFAULT, "block": 0.4}

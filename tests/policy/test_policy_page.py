"""The policy page: the current profiles as an editable table, the history
with who changed what, a diff between two versions, rollback."""

import pytest


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5, "max_retries": 2,
           "escalate_after": 3}
URL = "/policy/acme/"


def table(**overrides) -> dict:
    """The form as the page posts it: the default profile's row, then any others."""
    rows = [{"profile": "default", "kind": "profile", "name": "", "accept": "0.8", "block": "0.5",
             "max_rounds": "5", "max_retries": "2", "escalate_after": "3"}, *overrides.pop("rows", [])]
    rows[0].update(overrides)
    keys = ("profile", "kind", "name", "accept", "block", "max_rounds", "max_retries", "escalate_after")
    return {f"row_{key}": [row.get(key, "") for row in rows] for key in keys}


def test_the_page_shows_the_built_in_version_as_an_editable_table(member):
    page = member.get(URL).content.decode()
    assert "version 0" in page
    assert 'name="row_accept" value="0.8"' in page
    assert "built-in defaults" in page


def test_saving_the_table_makes_a_new_version_signed_by_the_person(member, api):
    rows = [{"profile": "default", "kind": "by_agent_type", "name": "retrieval", "accept": "0.7", "block": "0.4"}]
    response = member.post(URL, {**table(block="0.55", rows=rows), "note": "retrieval looser"})
    assert response.status_code == 302
    policy = api.get("/api/v1/policy").json()
    assert policy["version"] == 1
    assert policy["note"] == "retrieval looser"
    assert policy["profiles"]["default"]["block"] == 0.55
    assert policy["profiles"]["default"]["by_agent_type"] == {"retrieval": {"accept": 0.7, "block": 0.4}}
    page = member.get(URL).content.decode()
    assert "Saved as version 1." in page
    assert "mia" in page and "retrieval looser" in page


def test_emptying_a_rows_numbers_removes_it(member, api):
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "by_step": {"refund": {"accept": 0.9,
                                                                                          "block": 0.8}}}}},
            format="json")
    rows = [{"profile": "default", "kind": "by_step", "name": "refund", "accept": "", "block": ""}]
    assert member.post(URL, table(rows=rows)).status_code == 302
    assert api.get("/api/v1/policy").json()["profiles"]["default"]["by_step"] == {}


@pytest.mark.parametrize("changes, field", [
    ({"block": "0.9"}, "profiles.default.block"),
    ({"accept": "lots"}, "profiles.default.accept"),
    ({"max_retries": "-2"}, "profiles.default.max_retries"),
    ({"rows": [{"profile": "default", "kind": "by_agent_type", "name": "tool", "accept": "0.2", "block": "0.3"}]},
     "profiles.default.by_agent_type.tool.block"),
])
def test_a_bad_table_names_the_field_keeps_what_was_typed_and_saves_nothing(member, api, changes, field):
    response = member.post(URL, {**table(**changes), "note": "typed note"})
    assert response.status_code == 400
    page = response.content.decode()
    assert field in page and "Nothing was saved" in page
    assert 'value="typed note"' in page
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_history_diff_and_rollback(member, api):
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "block": 0.6}}, "note": "stricter"}, format="json")
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "block": 0.3}}, "note": "looser"}, format="json")
    page = member.get(URL + "?from=1&to=2").content.decode()
    assert "default.block" in page and "0.6" in page and "0.3" in page
    assert member.post(URL + "rollback", {"version": "1"}).status_code == 302
    policy = api.get("/api/v1/policy").json()
    assert (policy["version"], policy["profiles"]["default"]["block"]) == (3, 0.6)
    page = member.get(URL).content.decode()
    assert "Rolled back: version 3 equals version 1." in page
    assert "rollback to version 1" in page


def test_rollback_to_a_version_that_does_not_exist_says_so(member, api):
    response = member.post(URL + "rollback", {"version": "7"}, follow=True)
    assert "no version 7" in response.content.decode()
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_agent_text_in_notes_and_names_is_escaped(member, api):
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "by_agent_type": {
        "<img src=x onerror=alert(1)>": {"accept": 0.7, "block": 0.4}}}}, "note": "<script>alert(1)</script>"},
        format="json")
    page = member.get(URL).content.decode()
    assert "<script>alert(1)</script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page


def test_another_projects_policy_page_is_not_found(member, make_project):
    make_project("globex")
    assert member.get("/policy/globex/").status_code == 404
    assert member.post("/policy/globex/rollback", {"version": "0"}).status_code == 404


def test_the_pages_need_a_sign_in(client, project):
    assert client.get(URL).status_code == 302

"""Datasets through the API: names, items, versions as they were, rollback, JSON Lines."""

import pytest

from tests.support.evals import number_items, part


def test_create_answers_version_zero_and_a_taken_name_is_a_conflict(api):
    response = api.post("/api/v1/datasets", {"name": "ticket-stats", "description": "d"}, format="json")
    assert response.status_code == 201
    assert part(response.json(), {"name": "ticket-stats", "version": 0, "item_count": 0}) == {"name": "ticket-stats", "version": 0, "item_count": 0}
    again = api.post("/api/v1/datasets", {"name": "ticket-stats"}, format="json")
    assert again.status_code == 409
    assert "already exists" in again.json()["error"]


@pytest.mark.parametrize("name", ["", "a/b", "a b", "x" * 101, "ü", None, 7, ".."])
def test_bad_names_are_refused_naming_the_field(api, name):
    response = api.post("/api/v1/datasets", {"name": name}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()["fields"]


@pytest.mark.parametrize("name", ["a", "A-b_c.1", "x" * 100])
def test_good_names(api, name):
    assert api.post("/api/v1/datasets", {"name": name}, format="json").status_code == 201
    assert api.get(f"/api/v1/datasets/{name}").json()["name"] == name


def test_items_add_replace_unchanged_and_versions(api, dataset):
    dataset("ds")
    first = api.post("/api/v1/datasets/ds/items", {"items": number_items(3)}, format="json")
    assert first.json() == {"version": 1, "created": 3, "updated": 0, "unchanged": 0, "deleted": 0}
    changed = number_items(3)
    changed[1]["expected"] = 99
    changed.append({"id": "label-1", "input": "ticket", "expected": "refund", "kind": "label", "tags": ["refunds"],
                    "origin": "production"})
    second = api.post("/api/v1/datasets/ds/items", {"items": changed}, format="json")
    assert part(second.json(), {"version": 2, "created": 1, "updated": 1, "unchanged": 2}) == {"version": 2, "created": 1, "updated": 1, "unchanged": 2}
    same = api.post("/api/v1/datasets/ds/items", {"items": changed}, format="json")
    assert part(same.json(), {"version": 2, "created": 0, "updated": 0, "unchanged": 4}) == {"version": 2, "created": 0, "updated": 0, "unchanged": 4}

    newest = api.get("/api/v1/datasets/ds").json()
    assert newest["version"] == 2 and newest["description"] == "from a test"
    items = {item["id"]: item for item in newest["items"]}
    assert items["q-2"]["expected"] == 99 and items["q-1"]["kind"] == "number"
    assert part(items["label-1"], {"kind": "label", "tags": ["refunds"], "origin": "production", "drifted": False}) == {"kind": "label", "tags": ["refunds"], "origin": "production", "drifted": False}
    assert items["q-1"]["origin"] == "synthetic" and items["q-1"]["tags"] == []

    as_it_was = api.get("/api/v1/datasets/ds?version=1").json()
    assert as_it_was["version"] == 1
    assert {i["id"]: i["expected"] for i in as_it_was["items"]} == {"q-1": 10, "q-2": 20, "q-3": 30}
    assert api.get("/api/v1/datasets/ds?version=0").json()["items"] == []
    assert api.get("/api/v1/datasets/ds?version=3").status_code == 404
    assert api.get("/api/v1/datasets/ds?version=x").status_code == 400


def test_kind_defaults_number_for_numbers_else_exact(api, dataset):
    dataset("ds", [{"id": "n", "expected": 1.5}, {"id": "e", "expected": {"a": [1]}}, {"id": "s", "expected": "x"}])
    kinds = {i["id"]: i["kind"] for i in api.get("/api/v1/datasets/ds").json()["items"]}
    assert kinds == {"n": "number", "e": "exact", "s": "exact"}


def test_delete_an_item_makes_a_version_and_rollback_restores(api, dataset):
    dataset("ds", number_items(3))
    deleted = api.delete("/api/v1/datasets/ds/items/q-2")
    assert deleted.status_code == 200 and deleted.json()["version"] == 2
    assert api.delete("/api/v1/datasets/ds/items/q-2").status_code == 404
    assert [i["id"] for i in api.get("/api/v1/datasets/ds").json()["items"]] == ["q-1", "q-3"]

    back = api.post("/api/v1/datasets/ds/rollback", {"version": 1}, format="json")
    assert back.status_code == 200 and back.json()["version"] == 3
    restored = api.get("/api/v1/datasets/ds").json()
    assert restored["version"] == 3
    assert restored["items"] == api.get("/api/v1/datasets/ds?version=1").json()["items"]
    # Rolling back to what is already there changes nothing.
    assert api.post("/api/v1/datasets/ds/rollback", {"version": 1}, format="json").json()["version"] == 3
    to_empty = api.post("/api/v1/datasets/ds/rollback", {"version": 0}, format="json").json()
    assert part(to_empty, {"version": 4, "deleted": 3}) == {"version": 4, "deleted": 3}
    assert api.get("/api/v1/datasets/ds").json()["items"] == []
    assert api.get("/api/v1/datasets/ds?version=3").json()["items"] == restored["items"]
    assert api.post("/api/v1/datasets/ds/rollback", {"version": 9}, format="json").status_code == 400
    assert "version" in api.post("/api/v1/datasets/ds/rollback", {}, format="json").json()["fields"]


BAD_ITEMS = [
    ({"id": "a", "expected": "ten", "kind": "number"}, "items[1].expected"),
    ({"id": "a", "expected": [50, 50], "kind": "percentages"}, "items[1].expected"),
    ({"id": "a", "expected": {"x": "50"}, "kind": "percentages"}, "items[1].expected.x"),
    ({"id": "a", "expected": {"x": 150}, "kind": "percentages"}, "items[1].expected.x"),
    ({"id": "a", "expected": 3, "tolerance": {"abs": -1}}, "items[1].tolerance.abs"),
    ({"id": "a", "expected": 3, "tolerance": {"points": 1}}, "items[1].tolerance.points"),
    ({"id": "a", "expected": 3, "tolerance": "wide"}, "items[1].tolerance"),
    ({"id": "a", "expected": 3, "kind": "fuzzy"}, "items[1].kind"),
    ({"id": "a", "expected": 5, "kind": "label"}, "items[1].expected"),
    ({"id": "a", "expected": 3, "origin": "prod"}, "items[1].origin"),
    ({"id": "a", "expected": 3, "tags": "refunds"}, "items[1].tags"),
    ({"id": "", "expected": 3}, "items[1].id"),
    ({"id": 4, "expected": 3}, "items[1].id"),
    ({"id": "a"}, "items[1].expected"),
    ({"id": "a", "expected": 3, "colour": "red"}, "items[1].colour"),
    ("a", "items[1]"),
]


@pytest.mark.parametrize(("bad", "field"), BAD_ITEMS)
def test_a_bad_item_names_itself_and_nothing_of_the_call_is_stored(api, dataset, bad, field):
    dataset("ds", number_items(1))
    response = api.post("/api/v1/datasets/ds/items", {"items": [{"id": "new", "expected": 1}, bad]}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert response.json()["error"].startswith(field)
    after = api.get("/api/v1/datasets/ds").json()
    assert after["version"] == 1 and [i["id"] for i in after["items"]] == ["q-1"]


def test_more_than_a_thousand_items_is_refused(api, dataset):
    dataset("ds")
    response = api.post("/api/v1/datasets/ds/items", {"items": number_items(1001)}, format="json")
    assert response.status_code == 400 and "items" in response.json()["fields"]
    assert api.get("/api/v1/datasets/ds").json()["version"] == 0
    assert api.post("/api/v1/datasets/ds/items", {"items": number_items(1000)}, format="json").status_code == 200


@pytest.mark.parametrize("body", [{}, {"items": "x"}, [], {"items": None}])
def test_a_malformed_body_is_refused(api, dataset, body):
    dataset("ds")
    response = api.post("/api/v1/datasets/ds/items", body, format="json")
    assert response.status_code == 400 and "items" in response.json()["fields"]


def test_a_body_that_is_not_json_is_refused(api, dataset):
    dataset("ds")
    response = api.post("/api/v1/datasets/ds/items", b"{nope", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]


def test_jsonl_export_and_import_round_trip(api, dataset):
    dataset("ds", number_items(2) + [{"id": "p", "expected": {"a": 60, "b": 40}, "kind": "percentages",
                                      "tolerance": {"points": 1}, "tags": ["mix"]}])
    exported = api.get("/api/v1/datasets/ds?format=jsonl")
    assert exported.status_code == 200
    assert exported["Content-Type"].startswith("application/x-ndjson")
    lines = exported.content.decode().splitlines()
    assert len(lines) == 3

    dataset("copy")
    imported = api.post("/api/v1/datasets/copy/items?format=jsonl", exported.content, content_type="text/plain")
    assert imported.status_code == 200, imported.content
    assert part(imported.json(), {"version": 1, "created": 3}) == {"version": 1, "created": 3}
    strip = lambda d: [{k: v for k, v in i.items()} for i in d["items"]]  # noqa: E731
    assert strip(api.get("/api/v1/datasets/copy").json()) == strip(api.get("/api/v1/datasets/ds").json())


def test_jsonl_import_with_a_bad_line_names_it_and_stores_nothing(api, dataset):
    dataset("ds")
    body = b'{"id": "a", "expected": 1}\n\n{"id": "b", "expected": "x", "kind": "number"}\n'
    response = api.post("/api/v1/datasets/ds/items?format=jsonl", body, content_type="application/x-ndjson")
    assert response.status_code == 400 and "items[1].expected" in response.json()["fields"]
    broken = api.post("/api/v1/datasets/ds/items?format=jsonl", b'{"id": "a", "expected": 1}\n{oops\n',
                      content_type="application/x-ndjson")
    assert broken.status_code == 400 and "line 2" in broken.json()["error"]
    assert api.get("/api/v1/datasets/ds").json()["version"] == 0


def test_jsonl_import_with_replace_makes_the_dataset_equal_the_file(api, dataset):
    dataset("ds", number_items(3))
    body = b'{"id": "q-1", "expected": 10, "input": {"question": "how many 1?"}}\n{"id": "z", "expected": 5}\n'
    response = api.post("/api/v1/datasets/ds/items?format=jsonl&replace=true", body,
                        content_type="application/x-ndjson")
    assert part(response.json(), {"version": 2, "created": 1, "unchanged": 1, "deleted": 2}) == {"version": 2, "created": 1, "unchanged": 1, "deleted": 2}
    assert [i["id"] for i in api.get("/api/v1/datasets/ds").json()["items"]] == ["q-1", "z"]


def test_list_datasets_with_counts_and_pagination(api, dataset):
    for name in ("a", "b", "c"):
        dataset(name, number_items(2))
    listed = api.get("/api/v1/datasets").json()
    assert [(d["name"], d["version"], d["item_count"]) for d in listed] == [("a", 1, 2), ("b", 1, 2), ("c", 1, 2)]
    first = api.get("/api/v1/datasets?limit=2")
    assert [d["name"] for d in first.json()] == ["a", "b"]
    assert 'rel="next"' in first["Link"] and "offset=2" in first["Link"]
    assert [d["name"] for d in api.get("/api/v1/datasets?limit=2&offset=2").json()] == ["c"]
    assert api.get("/api/v1/datasets?limit=0").status_code == 400


def test_versions_say_what_changed(api, dataset):
    dataset("ds", number_items(2))
    api.delete("/api/v1/datasets/ds/items/q-1")
    api.post("/api/v1/datasets/ds/rollback", {"version": 1}, format="json")
    versions = api.get("/api/v1/datasets/ds/versions").json()
    assert [(v["version"], v["action"], v["created"], v["deleted"], v["item_count"]) for v in versions] == [
        (3, "rollback", 1, 0, 2), (2, "delete", 0, 1, 1), (1, "items", 2, 0, 2), (0, "created", 0, 0, 0)]


def test_another_projects_dataset_is_not_found(api, other_api, dataset):
    dataset("ds", number_items(1))
    assert other_api.get("/api/v1/datasets/ds").status_code == 404
    assert other_api.post("/api/v1/datasets/ds/items", {"items": number_items(1)}, format="json").status_code == 404
    assert other_api.delete("/api/v1/datasets/ds/items/q-1").status_code == 404
    assert other_api.post("/api/v1/datasets/ds/rollback", {"version": 0}, format="json").status_code == 404
    assert other_api.post("/api/v1/datasets/ds/recheck", {"values": []}, format="json").status_code == 404
    assert other_api.get("/api/v1/datasets").json() == []
    # The same name is free in another project.
    assert other_api.post("/api/v1/datasets", {"name": "ds"}, format="json").status_code == 201


def test_without_a_key_it_is_401(client):
    assert client.get("/api/v1/datasets").status_code == 401

"""A key only ever sees and writes its own project: another project's objects
answer 404 as if they did not exist, and equal ids in two projects stay apart."""

import pytest

from tenancy.models import Project
from tests.provenance.stored import impact, root_cause, statuses, stored_rows
from tests.support.events import fuse_event, node_event, review_event

FOREIGN_URLS = [
    "/api/v1/traces/secret-run",
    "/api/v1/traces/secret-run/nodes/secret",
    "/api/v1/traces/secret-run/nodes/secret/root-cause",
    "/api/v1/traces/secret-run/nodes/secret/impact",
]


@pytest.mark.parametrize("url", FOREIGN_URLS)
def test_another_projects_trace_and_nodes_answer_404(api, other_api, ingest, url):
    ingest(node_event("secret", "secret-run", status="error"), node_event("child", "secret-run", parents=["secret"]),
           client=other_api)
    assert other_api.get(url).status_code == 200

    response = api.get(url)

    assert response.status_code == 404
    assert "secret" not in response.content.decode().replace(url, "")


def test_trace_list_shows_only_the_keys_project(api, other_api, ingest):
    ingest(node_event("mine", "my-run"))
    ingest(node_event("theirs", "their-run", fuse={"decision": "block"}), client=other_api)

    assert [t["trace_id"] for t in api.get("/api/v1/traces").json()["results"]] == ["my-run"]
    assert api.get("/api/v1/traces?q=theirs").json()["results"] == []
    assert api.get("/api/v1/traces?has_fused=true").json()["results"] == []


def test_the_audit_log_shows_only_the_keys_project(api, other_api, make_project):
    other_api.post("/api/v1/datasets", {"name": "their-secret-set"}, format="json")
    other_api.patch("/api/v1/project", {"name": "Globex Secret"}, format="json")
    api.post("/api/v1/datasets", {"name": "ours"}, format="json")

    for query in ("", "?action=dataset.create", "?object_type=project", "?actor=default", "?limit=1&offset=1"):
        response = api.get(f"/api/v1/audit{query}")
        assert response.status_code == 200
        assert "their-secret-set" not in response.content.decode()
        assert "Globex" not in response.content.decode() and "globex" not in response.content.decode()
    assert [e["object"] for e in api.get("/api/v1/audit").json()] == ["dataset ours"]
    assert [e["object"] for e in other_api.get("/api/v1/audit").json()] == ["project globex", "dataset their-secret-set"]


def test_equal_trace_and_product_ids_in_two_projects_stay_separate(api, other_api, ingest):
    mine = ingest(node_event("frag", confidence=0.9, content="mine"), node_event("final", parents=["frag"], seconds=1))
    theirs = ingest(
        node_event("frag", confidence=0.1, content="theirs", status="error"),
        node_event("final", parents=["frag"], seconds=1),
        node_event("extra", parents=["frag"], seconds=2),
        client=other_api,
    )

    assert set(statuses(mine).values()) == set(statuses(theirs).values()) == {201}
    assert api.get("/api/v1/traces/t1/nodes/frag").json()["content"] == "mine"
    assert other_api.get("/api/v1/traces/t1/nodes/frag").json()["content"] == "theirs"
    assert [n["product_id"] for n in api.get("/api/v1/traces/t1").json()["nodes"]] == ["frag", "final"]
    assert root_cause(api, "final")["root_causes"] == []
    assert [c["product_id"] for c in root_cause(other_api, "final")["root_causes"]] == ["frag"]
    assert impact(api, "frag") == ["final"]
    assert impact(other_api, "frag") == ["final", "extra"]


def test_equal_event_ids_in_two_projects_are_each_new(project, other_api, ingest):
    ingest(node_event("p1"))

    result = ingest(node_event("p1"), client=other_api)

    assert statuses(result) == {"ev-p1": 201}
    assert stored_rows(project)["nodes"] == 1
    assert stored_rows(Project.objects.get(slug="globex"))["nodes"] == 1


def test_fuse_and_review_events_only_touch_the_keys_project(api, other_api, ingest):
    ingest(node_event("p1"))

    ingest(fuse_event("p1"), review_event("t1", "incorrect"), client=other_api)

    assert api.get("/api/v1/traces/t1/nodes/p1").json()["fused"] is False
    assert api.get("/api/v1/traces?verdict=incorrect").json()["results"] == []


def test_walks_never_follow_a_parent_id_into_another_project(api, other_api, ingest):
    ingest(node_event("shared-parent", "their-run", status="error"), client=other_api)

    ingest(node_event("child", parents=["shared-parent"], confidence=0.9))

    assert root_cause(api, "child")["root_causes"] == []
    assert impact(other_api, "shared-parent", "their-run") == []

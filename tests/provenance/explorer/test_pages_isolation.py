"""A member of one project sees nothing of another in any page or page endpoint;
staff see every project."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.events import node_event, review_event

pytestmark = pytest.mark.django_db

PAGES = [
    "/p/{slug}/traces/",
    "/p/{slug}/bad-answers/",
    "/p/{slug}/traces/{trace}/",
    # What the trace page reads, through the API with the session.
    "/api/v1/traces/{trace}/graph?project={slug}",
    "/api/v1/traces/{trace}/nodes/{node}?view=explorer&project={slug}",
    "/api/v1/traces/{trace}/nodes/{node}/root-cause?view=explorer&project={slug}",
    "/api/v1/traces/{trace}/nodes/{node}/impact?view=explorer&project={slug}",
]


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def two_tenants(project, api, other_api, ingest):
    """acme and globex, each with a bad answer, and one member each. globex's
    nodes name acme's product ids as parents, which must not leak either way."""
    ingest(node_event("a-frag", "shared-name", confidence=0.2),
           node_event("a-final", "shared-name", parents=["a-frag"], seconds=1, source_type="final_answer",
                      confidence=0.3, content="acme answer"),
           node_event("a-only", "acme-trace"))
    ingest(node_event("g-final", "shared-name", parents=["a-frag"], seconds=2, source_type="final_answer",
                      confidence=0.1, content="globex secret"),
           node_event("g-only", "globex-trace", parents=["a-final"]),
           review_event("globex-trace", "incorrect"),
           client=other_api)
    users = get_user_model().objects
    alice, bob = users.create_user("alice"), users.create_user("bob")
    project.members.add(alice)
    from tenancy.models import Project

    Project.objects.get(slug="globex").members.add(bob)
    return alice, bob


@pytest.mark.parametrize("url", PAGES)
def test_a_member_gets_404_for_another_projects_pages(two_tenants, url):
    alice, _ = two_tenants
    address = url.format(slug="globex", trace="globex-trace", node="g-only")
    response = signed_in(alice).get(address)
    assert response.status_code == 404
    # The 404 page repeats the address asked for; nothing else of globex's may show.
    assert b"globex" not in response.content.replace(address.split("?")[0].encode(), b"").replace(b"/p/globex", b"")


@pytest.mark.parametrize("url", PAGES[2:])
def test_another_projects_trace_is_not_reachable_through_ones_own_project(two_tenants, url):
    alice, _ = two_tenants
    response = signed_in(alice).get(url.format(slug="acme", trace="globex-trace", node="g-only"))
    assert response.status_code == 404
    response = signed_in(alice).get(url.format(slug="acme", trace="shared-name", node="g-final"))
    if "{node}" in url:
        assert response.status_code == 404  # g-final is globex's node
    else:
        assert response.status_code == 200  # acme's own trace of that name
        assert b"globex secret" not in response.content and b"g-final" not in response.content


def test_lists_and_searches_only_show_ones_own_traces(two_tenants):
    alice, _ = two_tenants
    client = signed_in(alice)
    listed = client.get("/p/acme/traces/").content.decode()
    assert 'data-trace-id="acme-trace"' in listed and 'data-trace-id="globex-trace"' not in listed
    assert 'data-trace-id="globex-trace"' not in client.get("/p/acme/traces/?q=globex").content.decode()
    assert 'data-trace-id="shared-name"' not in client.get("/p/acme/traces/?q=g-final").content.decode()
    bad = client.get("/p/acme/bad-answers/").content.decode()
    assert "a-final" in bad and "g-final" not in bad and "globex" not in bad.replace("/p/globex", "")
    home = client.get("/", follow=True).content.decode()
    assert "globex" not in home


def test_same_trace_id_shows_only_ones_own_nodes(two_tenants):
    alice, _ = two_tenants
    client = signed_in(alice)
    graph = client.get("/api/v1/traces/shared-name/graph?project=acme").json()
    assert graph["nodes"]["id"] == ["a-frag", "a-final"]
    assert graph["external"]["id"] == []
    detail = client.get("/api/v1/traces/shared-name/nodes/a-frag?view=explorer&project=acme").json()
    assert [c["product_id"] for c in detail["children"]] == ["a-final"]
    impact = client.get("/api/v1/traces/shared-name/nodes/a-frag/impact?view=explorer&project=acme").json()
    assert impact["descendants"] == ["a-final"]
    cause = client.get("/api/v1/traces/shared-name/nodes/a-final/root-cause?view=explorer&project=acme").json()
    assert [c["product_id"] for c in cause["root_causes"]] == ["a-frag"]


def test_staff_see_every_project(two_tenants):
    staff = get_user_model().objects.create_user("root", is_staff=True)
    client = signed_in(staff)
    assert client.get("/api/v1/traces/globex-trace/graph?project=globex").status_code == 200
    assert client.get("/p/acme/traces/acme-trace/").status_code == 200
    home = client.get("/").content.decode()
    assert "/p/acme/traces/" in home and "/p/globex/traces/" in home


def test_a_user_without_projects_sees_a_helpful_empty_state(two_tenants):
    loner = get_user_model().objects.create_user("loner")
    client = signed_in(loner)
    assert b"not a member of any project" in client.get("/").content
    assert client.get("/p/acme/traces/").status_code == 404

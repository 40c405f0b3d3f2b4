"""The trace explorer's pages and JSON endpoints, through the Django test client:
what a signed-in member sees, and what it costs in queries."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.browser.traces import bad_answer_trace
from tests.support.accounts import MEMBER_PASSWORD, MEMBER_USERNAME
from tests.support.events import BASE_TIME, node_event, review_event

pytestmark = pytest.mark.django_db


def test_pages_need_a_login(client, project):
    response = client.get("/p/acme/traces/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")
    assert client.get("/api/v1/traces/t1/graph?project=acme").status_code == 401


def test_login_page_signs_a_member_in_and_lands_on_their_project(client, member_user):
    page = client.get("/login/")
    assert b'name="username"' in page.content
    response = client.post("/login/", {"username": MEMBER_USERNAME, "password": MEMBER_PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/p/acme/traces/"
    assert b"No traces yet" in response.content


def test_trace_list_shows_figures_of_each_trace(member, ingest):
    ingest(*bad_answer_trace("t1"), node_event("solo", "t2", seconds=60, confidence=0.95, source_type="final_answer"))
    html = member.get("/p/acme/traces/").content.decode()
    first, second = html.index('data-trace-id="t2"'), html.index('data-trace-id="t1"')
    assert first < second, "newest activity first"
    row = html[second:html.index("</tr>", second)]
    assert ">6</td>" in row  # nodes
    assert "0.45" in row  # min confidence
    assert "✕ 1" in row  # fused count
    assert "0.70" in row  # the final answer's confidence
    assert "incorrect" in row


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("agent=reasoner", {"t1"}),
        ("step=retrieval", {"t1"}),
        ("fused=on", {"t1"}),
        ("low=on", {"t1", "t3"}),
        ("incorrect=on", {"t1"}),
        ("q=t2", {"t2"}),
        ("q=frag-bad", {"t1"}),
        ("range=custom&since=2026-11-20T09:30", {"t3"}),
        ("range=custom&until=2026-11-20T09:01", {"t1"}),
    ],
)
def test_trace_list_filters(member, ingest, query, expected):
    ingest(
        *bad_answer_trace("t1"),
        node_event("ok", "t2", seconds=600, confidence=0.9, agent_id="other"),
        node_event("doubt", "t3", seconds=3600, confidence=0.2, agent_id="other"),
    )
    html = member.get(f"/p/acme/traces/?{query}").content.decode()
    shown = {t for t in ("t1", "t2", "t3") if f'data-trace-id="{t}"' in html}
    assert shown == expected


def test_trace_list_time_range_preset(member, ingest):
    recent = (timezone.now() - timedelta(minutes=5)).isoformat()
    ingest(node_event("old", "old-trace"), {**node_event("new", "new-trace"), "timestamp": recent})
    html = member.get("/p/acme/traces/?range=1h").content.decode()
    assert 'data-trace-id="new-trace"' in html and 'data-trace-id="old-trace"' not in html


def test_trace_list_empty_states(member, ingest):
    assert b"No traces yet" in member.get("/p/acme/traces/").content
    ingest(node_event("a", "t1"))
    assert b"No traces match these filters" in member.get("/p/acme/traces/?q=nothing").content


def test_trace_list_is_paginated(member, ingest):
    ingest(*[node_event(f"n{i}", f"trace-{i:02d}", seconds=i) for i in range(55)])
    first = member.get("/p/acme/traces/").content.decode()
    assert first.count("data-trace-id=") == 50
    assert 'data-trace-id="trace-54"' in first and "1–50 of 55" in first
    second = member.get("/p/acme/traces/?page=2").content.decode()
    assert second.count("data-trace-id=") == 5
    assert 'data-trace-id="trace-00"' in second


def test_trace_list_query_count_does_not_grow_with_the_page(member, ingest, django_assert_max_num_queries):
    ingest(*bad_answer_trace("t1"))
    # 10: the navigation's open-escalations count is one of them.
    with django_assert_max_num_queries(10):
        member.get("/p/acme/traces/")
    ingest(*[event for i in range(2, 30) for event in bad_answer_trace(f"t{i}", prefix=f"{i}-")])
    with django_assert_max_num_queries(10):
        assert member.get("/p/acme/traces/").content.decode().count("data-trace-id=") == 29


def test_bad_answers_lists_incorrect_then_least_confident(member, ingest):
    ingest(
        *bad_answer_trace("wrong"),
        node_event("doubtful", "doubt", seconds=10, confidence=0.3, source_type="final_answer"),
        node_event("very-doubtful", "doubt2", seconds=20, confidence=0.1, source_type="final_answer"),
        node_event("fine", "good", seconds=30, confidence=0.9, source_type="final_answer"),
        # A low node upstream does not make a confident final answer bad.
        node_event("low-upstream", "upstream", seconds=40, confidence=0.2),
        node_event("sure", "upstream", parents=["low-upstream"], seconds=41, confidence=0.95),
        review_event("good", "correct"),
    )
    html = member.get("/p/acme/bad-answers/").content.decode()
    order = [t for t in ("wrong", "doubt2", "doubt", "good", "upstream") if f'data-trace-id="{t}"' in html]
    assert order == ["wrong", "doubt2", "doubt"]
    assert html.index('data-trace-id="wrong"') < html.index('data-trace-id="doubt2"') < html.index('data-trace-id="doubt"')
    assert "?node=final" in html


def test_bad_answers_follows_a_later_correct_review(member, ingest):
    later = (BASE_TIME + timedelta(hours=1)).isoformat()
    ingest(*bad_answer_trace("t1"), {**review_event("t1", "correct"), "timestamp": later})
    assert b"No bad answers" in member.get("/p/acme/bad-answers/").content


def test_trace_page_carries_a_nonce_csp_and_no_inline_script(member, ingest):
    ingest(*bad_answer_trace("t1"))
    response = member.get("/p/acme/traces/t1/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    html = response.content.decode()
    assert html.count("<script") == html.count(" nonce=")
    assert "<script>" not in html and "onclick=" not in html
    assert 'data-selected="final"' in html, "the final answer is selected first"


def test_graph_endpoint_returns_nodes_edges_and_layout(member, ingest):
    ingest(*bad_answer_trace("t1"), node_event("elsewhere", "t0", seconds=-5),
           node_event("late-consumer", "t1", parents=["elsewhere", "never-arrived"], seconds=6))
    graph = member.get("/api/v1/traces/t1/graph").json()
    nodes = graph["nodes"]
    assert nodes["id"] == ["q", "frag-ok", "frag-bad", "concl", "check", "final", "late-consumer"]
    at = {pid: i for i, pid in enumerate(nodes["id"])}
    assert nodes["fused"][at["frag-bad"]] == 1 and nodes["confidence"][at["frag-bad"]] == 0.45
    assert [nodes["x"][at[p]] for p in ("q", "frag-ok", "concl", "check", "final")] == [0, 1, 2, 3, 4]
    assert graph["external"]["id"] == ["elsewhere", "never-arrived"]
    assert graph["external"]["trace_id"] == ["t0", None]
    assert graph["external"]["url"][0] == "/p/acme/traces/t0/?node=elsewhere"
    edges = list(zip(graph["edges"][::2], graph["edges"][1::2]))
    assert (at["frag-bad"], at["concl"]) in edges
    assert len(edges) == 8
    assert graph["layers"][:2] == ["user_input", "retrieval"]
    assert graph["colorscale"][0] == [0.0, "#d73027"] and graph["colorscale"][-1] == [1.0, "#1a9850"]


def test_graph_endpoint_query_count_is_fixed(member, ingest, django_assert_num_queries):
    ingest(*bad_answer_trace("small"))
    big = [node_event("root", "big")] + [
        node_event(f"b{i}", "big", parents=["root", f"b{i - 1}" if i else "outside"], seconds=i) for i in range(300)
    ]
    ingest(*big, node_event("outside", "other"))
    # session, user, project, trace, nodes, edges, homes of outside parents
    with django_assert_num_queries(7):
        assert len(member.get("/api/v1/traces/big/graph").json()["nodes"]["id"]) == 301
    with django_assert_num_queries(6):  # no parent outside the trace: no lookup of their homes
        member.get("/api/v1/traces/small/graph")


def test_node_endpoint_details_a_node(member, ingest):
    ingest(*bad_answer_trace("t1"), node_event("reuse", "t2", parents=["frag-bad"], seconds=9))
    node = member.get("/api/v1/traces/t1/nodes/frag-bad?view=explorer").json()
    assert node["content"] == "Sydney is the capital."
    assert node["raw_input"] == "query: capital"
    assert node["metrics"] == {"retrieval_similarity": 0.45}
    assert node["fused"] is True
    assert node["fuses"][0]["decision"] == "block" and node["fuses"][0]["reason"] == "similarity 0.45 below 0.6"
    assert [p["product_id"] for p in node["parents"]] == ["q"]
    children = {c["product_id"]: c for c in node["children"]}
    assert set(children) == {"concl", "reuse"}
    assert children["reuse"]["other_trace"] is True
    assert children["reuse"]["url"] == "/p/acme/traces/t2/?node=reuse"
    final = member.get("/api/v1/traces/t1/nodes/final?view=explorer").json()
    assert final["is_final"] is True
    assert [r["verdict"] for r in final["reviews"]] == ["incorrect"]


def test_node_endpoint_needs_a_node_of_this_trace(member, ingest):
    ingest(*bad_answer_trace("t1"), node_event("x", "t2"))
    assert member.get("/api/v1/traces/t1/nodes/final?view=page").status_code == 400
    assert member.get("/api/v1/traces/t1/nodes/x?view=explorer").status_code == 404
    assert member.get("/api/v1/traces/nope/nodes/x?view=explorer").status_code == 404


def test_root_cause_endpoint_matches_the_api(member, api, ingest):
    ingest(*bad_answer_trace("t1"))
    page = member.get("/api/v1/traces/t1/nodes/final/root-cause?view=explorer").json()
    contract = api.get("/api/v1/traces/t1/nodes/final/root-cause").json()
    assert page["path"] == contract["path"] == ["frag-bad", "concl", "check", "final"]
    assert [(c["product_id"], c["reason"]) for c in page["root_causes"]] == [
        (c["product_id"], c["reason"]) for c in contract["root_causes"]
    ] == [("frag-bad", "fused")]
    assert page["root_causes"][0]["fuse_reason"] == "similarity 0.45 below 0.6"


def test_impact_endpoint_matches_the_api(member, api, ingest):
    ingest(*bad_answer_trace("t1"), node_event("reuse", "t2", parents=["frag-bad"], seconds=9))
    page = member.get("/api/v1/traces/t1/nodes/frag-bad/impact?view=explorer").json()
    contract = api.get("/api/v1/traces/t1/nodes/frag-bad/impact").json()
    assert page["descendants"] == contract["descendants"]
    assert set(page["descendants"]) == {"concl", "check", "final", "reuse"}
    assert {n["product_id"]: n["trace_id"] for n in page["nodes"]}["reuse"] == "t2"


def test_trace_ids_with_slashes_and_odd_characters_route(member, ingest):
    ingest(node_event("n1", "a/b c?d#e"))
    detail = member.get("/p/acme/traces/a/b%20c%3Fd%23e/")
    assert detail.status_code == 200
    graph = member.get("/api/v1/traces/a/b%20c%3Fd%23e/graph").json()
    assert graph["trace_id"] == "a/b c?d#e"


def test_project_switcher_offers_the_same_page_in_each_project(member, member_user, make_project):
    other, _ = make_project("globex")
    other.members.add(member_user)
    html = member.get("/p/acme/bad-answers/").content.decode()
    assert 'value="/p/globex/bad-answers/"' in html
    html = member.get("/").content.decode()
    assert "/p/globex/traces/" in html and "/p/acme/traces/" in html


def test_bad_answers_query_count_does_not_grow_with_the_page(member, ingest, django_assert_max_num_queries):
    ingest(*bad_answer_trace("t1"))
    with django_assert_max_num_queries(10):
        member.get("/p/acme/bad-answers/")
    ingest(*[event for i in range(2, 30) for event in bad_answer_trace(f"t{i}", prefix=f"{i}-")])
    with django_assert_max_num_queries(10):
        assert member.get("/p/acme/bad-answers/").content.decode().count("data-trace-id=") == 29

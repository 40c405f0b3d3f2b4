"""`GET /api/v1/root-causes` over a corpus whose root causes are known, and
the same figures recomputed from the per-trace root-cause endpoint."""

from collections import defaultdict

import pytest

from tests.provenance import root_cause_corpus as corpus
from tests.support.events import BASE_TIME

pytestmark = pytest.mark.django_db(transaction=True)
START, END = (moment.isoformat().replace("+00:00", "Z") for moment in corpus.WINDOW)


def root_causes(api, **params):
    response = api.get("/api/v1/root-causes", {"start": START, "end": END, **params})
    assert response.status_code == 200, response.content
    return response.json()


def test_groups_the_incorrect_answers_by_agent_step_and_reason(api, ingest):
    corpus.load(ingest)
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    assert root_causes(api, answers="incorrect") == root_causes(api)


def test_fused_and_low_confidence_answers(api, ingest):
    corpus.load(ingest)
    assert root_causes(api, answers="fused") == {"answers": 1, "unexplained": 0, "causes": [
        {"agent_id": "summarizer", "step": "answer", "reason": "fused", "count": 1, "share": 1.0,
         "examples": ["t-fused-answer"]}]}
    assert root_causes(api, answers="low_confidence") == {"answers": 1, "unexplained": 0, "causes": [
        {"agent_id": "summarizer", "step": "answer", "reason": "low_confidence", "count": 1, "share": 1.0,
         "examples": ["t-low-answer"]}]}


def test_the_window_is_the_answers_timestamp_half_open(api, ingest):
    corpus.load(ingest)
    at_fused = (BASE_TIME.replace(second=12)).isoformat().replace("+00:00", "Z")
    just_after = (BASE_TIME.replace(second=13)).isoformat().replace("+00:00", "Z")
    assert api.get("/api/v1/root-causes", {"start": START, "end": at_fused}).json()["answers"] == 0
    found = api.get("/api/v1/root-causes", {"start": at_fused, "end": just_after}).json()
    assert (found["answers"], [c["examples"] for c in found["causes"]]) == (1, [["t-fused"]])


def test_a_later_fuse_on_an_upstream_node_in_another_trace_moves_the_cause(api, ingest):
    corpus.load(ingest)
    from tests.support.events import fuse_event

    ingest(fuse_event("x-frag", trace_id="t-source"))
    causes = {(c["agent_id"], c["reason"]): c["examples"] for c in root_causes(api)["causes"]}
    assert causes[("retriever", "fused")] == ["t-cross", "t-shared", "t-fused"]
    assert causes[("retriever", "low_confidence")] == ["t-low"]


def test_bad_parameters_are_a_400_naming_the_field(api):
    assert "start" in api.get("/api/v1/root-causes", {"end": END}).json()["fields"]
    assert "answers" in api.get("/api/v1/root-causes", {"start": START, "end": END, "answers": "wrong"}).json()["fields"]
    assert "end" in api.get("/api/v1/root-causes", {"start": END, "end": START}).json()["fields"]
    assert api.get("/api/v1/root-causes", {"start": "yesterday", "end": END}).status_code == 400


def test_another_projects_answers_are_not_counted(api, other_api, ingest):
    corpus.load(ingest)
    found = other_api.get("/api/v1/root-causes", {"start": START, "end": END}).json()
    assert found == {"answers": 0, "unexplained": 0, "causes": []}


def final_answer_of(nodes: list[dict]) -> dict | None:
    """The contract's rule, read off the trace as the API answers it."""
    consumed = {parent for node in nodes for parent in node["parent_ids"]}
    finals = [n for n in nodes if n["source_type"] == "final_answer"]
    if finals:
        return finals[-1]
    unconsumed = [n for n in nodes if n["product_id"] not in consumed]
    if not unconsumed or unconsumed[-1]["fused"]:
        return None
    return unconsumed[-1]


def test_the_aggregate_equals_the_per_trace_endpoint_applied_to_each_answer(api, ingest):
    corpus.load(ingest)
    traces = api.get("/api/v1/traces", {"page_size": 500}).json()["results"]
    answers, unexplained, groups = 0, 0, defaultdict(list)
    for trace in traces:
        nodes = api.get(f"/api/v1/traces/{trace['trace_id']}").json()["nodes"]
        answer = final_answer_of(nodes)
        if (answer is None or trace["trace_id"] not in corpus.INCORRECT_TRACES
                or not START <= answer["timestamp"].replace("+00:00", "Z") < END):
            continue
        answers += 1
        found = api.get(f"/api/v1/traces/{trace['trace_id']}/nodes/{answer['product_id']}/root-cause").json()
        if not found["root_causes"]:
            unexplained += 1
        keys = set()
        for cause in found["root_causes"]:
            node = api.get(f"/api/v1/traces/{cause['trace_id']}/nodes/{cause['product_id']}").json()
            keys.add((node["agent_id"], node["step"], cause["reason"]))
        for key in keys:
            groups[key].append((answer["timestamp"], trace["trace_id"]))
    expected = sorted(
        ({"agent_id": k[0], "step": k[1], "reason": k[2], "count": len(v), "share": len(v) / answers,
          "examples": [t for _, t in sorted(v, reverse=True)[:5]]} for k, v in groups.items()),
        key=lambda c: (-c["count"], c["agent_id"], c["step"], c["reason"]))
    assert root_causes(api) == {"answers": answers, "unexplained": unexplained, "causes": expected}


def test_filters_by_the_answering_agent_and_the_policy_version(api, ingest):
    corpus.load(ingest)
    from tests.support.events import fuse_event

    ingest(fuse_event("f-concl", "downweight", trace_id="t-fused", policy_version=4, event_id="fuse-v4"))
    assert root_causes(api, agent_id="summarizer")["answers"] == 7
    assert root_causes(api, agent_id="nobody") == {"answers": 0, "unexplained": 0, "causes": []}
    assert root_causes(api, policy_version=4) == {"answers": 1, "unexplained": 0, "causes": [
        {"agent_id": "retriever", "step": "retrieval", "reason": "fused", "count": 1, "share": 1.0,
         "examples": ["t-fused"]}]}
    assert "policy_version" in api.get("/api/v1/root-causes", {"start": START, "end": END,
                                                               "policy_version": "four"}).json()["fields"]


def cause(agent_id, step, trace_id, share):
    return {"agent_id": agent_id, "step": step, "reason": "fused", "count": 1, "share": share,
            "examples": [trace_id]}


def test_filters_by_the_traces_environment_and_the_final_answers_model(api, ingest):
    assert ingest(*corpus.environments_and_models())["errors"] == []
    assert root_causes(api) == {"answers": 2, "unexplained": 0, "causes": [
        cause("reasoner", "reasoning", "m-prod-b", 0.5), cause("retriever", "retrieving", "m-prod-a", 0.5)]}
    # Blank, as a form sends "any", is the default: production.
    assert root_causes(api, environment="production") == root_causes(api, environment="") == root_causes(api)
    assert root_causes(api, environment="staging") == {"answers": 1, "unexplained": 0, "causes": [
        cause("retriever", "retrieving", "m-stage-a", 1.0)]}
    # The answer node's model, not the model of the cause's node (model-b here).
    assert root_causes(api, model="model-a") == {"answers": 1, "unexplained": 0, "causes": [
        cause("retriever", "retrieving", "m-prod-a", 1.0)]}
    assert root_causes(api, model="model-b") == {"answers": 1, "unexplained": 0, "causes": [
        cause("reasoner", "reasoning", "m-prod-b", 1.0)]}
    assert root_causes(api, environment="staging", model="model-b") == {"answers": 0, "unexplained": 0, "causes": []}
    assert root_causes(api, environment="nowhere")["answers"] == 0


def test_bad_environment_or_model_is_a_400_naming_it(api):
    for params, field in (({"environment": "no spaces"}, "environment"), ({"environment": "x" * 51}, "environment"),
                          ({"model": "m" * 256}, "model")):
        response = api.get("/api/v1/root-causes", {"start": START, "end": END, **params})
        assert response.status_code == 400 and field in response.json()["fields"], (params, response.content)

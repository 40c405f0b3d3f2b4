"""Each uncertainty tool against a live dashboard: what it records shows up in
the trace API as nodes, parents, metrics and fuse decisions."""

import pytest

import denoiseflow as df
from tests.denoiseflow.dashboard import nodes_of
from tests.denoiseflow.fakes import FakeLLM


def node(api, trace_id, product_id):
    response = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_vote_is_recorded_with_its_clusters_and_losers(live_recorder, api):
    model = FakeLLM("refund", ["billing", "shipping"], seed=3, stray=0.3)
    vote = df.run_redundant(lambda temperature, perspective: model.complete("q", temperature, perspective), n=7)
    ref = vote.record("tk-vote", "intent_agent", step="intent", recorder=live_recorder)
    split = df.run_redundant(lambda temperature: {0.7: "a", 0.85: "b", 1.0: "c"}[temperature], n=3)
    fused = split.record("tk-vote", "intent_agent", step="intent_retry", recorder=live_recorder)
    assert live_recorder.flush(timeout=10)

    stored = node(api, "tk-vote", ref.product_id)
    assert stored["content"] == "refund" and stored["confidence"] == pytest.approx(5 / 7, abs=1e-4)
    assert stored["metrics"]["vote_ratio"] == pytest.approx(5 / 7, abs=1e-4)
    assert stored["metrics"]["semantic_entropy"] == vote.semantic_entropy
    assert stored["metadata"]["cluster_sizes"] == [5, 1, 1]
    assert stored["metadata"]["losing_answers"] == ["shipping", "billing"]
    assert stored["metadata"]["redundancy_path"] == "voted"
    split_node = node(api, "tk-vote", fused.product_id)
    assert split_node["fused"] is True
    assert split_node["fuses"][0]["reason"] == "vote 0.33 below agreement 0.60"
    assert split_node["fuses"][0]["reason_code"] == "vote_split"


def test_validate_first_records_which_path_it_took(live_recorder, api):
    valid = df.one_of(["refund", "billing"])
    cheap = df.run_redundant(lambda: "refund", validate=valid).record("tk-vf", "intent", recorder=live_recorder)
    answers = iter(["maybe refund?", "refund", "refund", "billing", "refund"])
    costly = df.run_redundant(lambda: next(answers), validate=valid, max_concurrency=1).record(
        "tk-vf", "intent", recorder=live_recorder)
    assert live_recorder.flush(timeout=10)

    first, second = node(api, "tk-vf", cheap.product_id), node(api, "tk-vf", costly.product_id)
    assert (first["metrics"]["expensive_path"], first["metadata"]["redundancy_path"]) == (0, "validated")
    assert (second["metrics"]["expensive_path"], second["metadata"]["redundancy_path"]) == (1, "sampled")
    assert second["metrics"]["samples"] == 5 and second["metrics"]["vote_ratio"] == 0.6
    assert second["metadata"]["validation_error"] == "output: 'maybe refund?' is not one of ['refund', 'billing']"


def test_the_reflection_loop_is_a_chain_of_drafts_and_critiques(live_recorder, api):
    question = live_recorder.record("tk-reflect", "gateway", "How long do refunds take?", source_type="user_input")
    drafts = iter(["Refunds take a while.", "Refunds take 14 days.", "Refunds take 14 days!"])
    result = df.reflect(lambda: next(drafts), lambda draft: "be specific", lambda draft, note: next(drafts),
                        max_rounds=4, trace_id="tk-reflect", agent_id="writer", parent_ids=[question],
                        recorder=live_recorder)
    assert live_recorder.flush(timeout=10)

    assert result.stopped == "converged" and len(result.nodes) == 3
    nodes = nodes_of(api, "tk-reflect")
    one, two, three = (nodes[n.product_id] for n in result.nodes)
    critiques = [n for n in nodes.values() if n["source_type"] == "verification"]
    assert [n["round"] for n in (one, two, three)] == [1, 2, 3]
    assert one["parent_ids"] == [question.product_id]
    assert len(critiques) == 2 and all(c["parent_ids"] in ([one["product_id"]], [two["product_id"]])
                                       for c in critiques)
    assert two["parent_ids"][0] == one["product_id"] and len(two["parent_ids"]) == 2
    assert three["parent_ids"][0] == two["product_id"]
    last = node(api, "tk-reflect", three["product_id"])
    assert last["metadata"]["reflection_stopped"] == "converged" and last["metrics"]["draft_similarity"] >= 0.95


def test_a_judges_rejection_is_a_fuse_decision_on_the_answer(live_recorder, api):
    answer = live_recorder.record("tk-judge", "responder", "Refunds take 90 days.", source_type="final_answer")
    verdict = df.cross_check("Refunds take 90 days.", lambda a: "FAIL: policy says 14 days", node=answer,
                             recorder=live_recorder, by_agent_id="judge_model")
    assert live_recorder.flush(timeout=10)

    assert verdict.blocked
    stored = node(api, "tk-judge", answer.product_id)
    assert stored["fused"] is True
    fuse = stored["fuses"][0]
    assert (fuse["decision"], fuse["reason"], fuse["reason_code"], fuse["by_agent_id"]) == (
        "block", "FAIL: policy says 14 days", "judge_rejected", "judge_model")


def test_semantic_entropy_tool_checks_and_fused_confidence_are_node_metrics(live_recorder, api):
    samples = ["Refunds take 14 days.", "Refunds take 14 days!", "We ship worldwide."]
    entropy = df.semantic_entropy(samples)
    tool = df.check_tool_result({"status_code": 503, "error": "upstream timeout"})
    fused = df.fuse_signals(self_consistency=2 / 3, semantic_entropy=entropy, retrieval_score=0.8,
                            tool_reliability=tool)
    lookup = live_recorder.record("tk-signals", "order_tool", "{...}", source_type="tool_result", **tool.node_fields())
    answer = live_recorder.record("tk-signals", "responder", samples[0], source_type="final_answer",
                                  parent_ids=[lookup], **fused.node_fields())
    assert live_recorder.flush(timeout=10)

    tool_node = node(api, "tk-signals", lookup.product_id)
    assert tool_node["confidence"] == 0.1 and tool_node["metrics"]["tool_reliability"] == 0.1
    assert tool_node["metadata"]["tool_reliability"] == "low" and tool_node["metadata"]["tool_rule"] == "error"
    assert tool_node["fused"] is True and tool_node["fuses"][0]["reason"] == "error: upstream timeout"
    assert tool_node["fuses"][0]["reason_code"] == "tool_error"
    answer_node = node(api, "tk-signals", answer.product_id)
    assert answer_node["confidence"] == pytest.approx(fused.confidence, abs=1e-4)
    assert answer_node["metrics"]["semantic_entropy"] == pytest.approx(entropy)
    assert answer_node["metrics"]["fused_confidence"] == pytest.approx(fused.confidence)


def test_unserializable_fields_reach_the_dashboard_as_markers(live_recorder, api):
    class Unprintable:
        def __str__(self):
            raise RuntimeError("no")

    metadata = {"raw": b"\xffbytes", "nan": float("nan")}
    metadata["self"] = metadata
    ref = live_recorder.record("tk-odd", "agent", Unprintable(), metadata=metadata)
    assert live_recorder.flush(timeout=10)
    stored = node(api, "tk-odd", ref.product_id)
    assert stored["content"] == "<unserializable Unprintable: RuntimeError>"
    assert stored["metadata"] == {"raw": "\ufffdbytes", "nan": "NaN", "self": "<cycle>"}
    assert live_recorder.stats()["unserializable"] == 3

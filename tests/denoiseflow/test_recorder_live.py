"""The recorder against a live dashboard: nodes, parents, fuses and reviews
recorded by an agent show up through the read API."""

import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import denoiseflow
from tests.denoiseflow.dashboard import nodes_of
from tests.support.serving import REPO


def test_recorded_nodes_arrive_with_their_parents(live_recorder, api):
    question = live_recorder.record("ticket-1", "gateway", "Where is my refund?", source_type="user_input")
    fragment = live_recorder.record("ticket-1", "retrieval_agent_v2", "Refunds take 14 days.", step="retrieval",
                                    source_type="retrieval", parent_ids=[question], confidence=38,
                                    confidence_scale=100, round=1)
    answer = live_recorder.record("ticket-1", "responder", "Within 14 days.", step="final_answer",
                                  source_type="final_answer", parent_ids=[question, fragment.product_id],
                                  metrics={"semantic_entropy": 0.4}, metadata={"model": "fake"})
    assert live_recorder.flush(timeout=10)

    nodes = nodes_of(api, "ticket-1")
    assert nodes[fragment.product_id]["confidence"] == 0.38
    assert nodes[fragment.product_id]["parent_ids"] == [question.product_id]
    assert nodes[answer.product_id]["parent_ids"] == [question.product_id, fragment.product_id]
    assert live_recorder.stats()["sent"] == 3


def test_fuse_decisions_and_reviews_arrive(live_recorder, api):
    fragment = live_recorder.record("ticket-2", "retrieval_agent_v2", "stale policy", confidence=55,
                                    confidence_scale=100)
    fuse = denoiseflow.ConfidenceFuse(by_agent_type={"retrieval": denoiseflow.Thresholds(accept=0.85, block=0.6)})
    verdict = fuse.gate(fragment, by_agent_id="reasoning_agent", recorder=live_recorder)  # judged on its own confidence
    answer = live_recorder.record("ticket-2", "responder", "wrong", source_type="final_answer",
                                  parent_ids=[fragment])
    live_recorder.review("ticket-2", "incorrect", answer, comment="quoted a 2019 policy")
    assert live_recorder.flush(timeout=10)

    assert verdict.blocked
    assert nodes_of(api, "ticket-2")[fragment.product_id]["fused"] is True
    cause = api.get(f"/api/v1/traces/ticket-2/nodes/{answer.product_id}/root-cause").json()
    assert cause["root_causes"][0]["product_id"] == fragment.product_id
    node = api.get(f"/api/v1/traces/ticket-2/nodes/{fragment.product_id}").json()
    assert node["fuses"][0]["reason"] == "confidence below the block threshold (retrieval)"
    assert node["fuses"][0]["threshold"] == 0.6
    assert node["fuses"][0]["by_agent_id"] == "reasoning_agent"
    assert api.get(f"/api/v1/traces/ticket-2/nodes/{answer.product_id}").json()["reviews"][0]["verdict"] == "incorrect"


def test_a_blocked_artifact_is_reported_with_an_inline_fuse(live_recorder, api):
    verdict = denoiseflow.ConfidenceFuse().decide(0.2)
    blocked = live_recorder.record("ticket-3", "extractor", "{}", confidence=verdict.confidence, fuse=verdict,
                                   timestamp=datetime(2026, 1, 5, 9, 30, tzinfo=UTC))
    assert live_recorder.flush(timeout=10)
    node = nodes_of(api, "ticket-3")[blocked.product_id]
    assert node["fused"] is True
    assert node["timestamp"] == "2026-01-05T09:30:00Z"


def test_events_the_server_refuses_are_counted_and_the_rest_delivered(live_recorder, api):
    live_recorder.record("ticket-4", "agent", "ok")
    live_recorder.record("ticket-4", "agent", "too sure", confidence=1.7)
    live_recorder.record("ticket-4", "agent", "not a number", confidence=float("nan"))
    assert live_recorder.flush(timeout=10)
    stats = live_recorder.stats()
    assert (stats["sent"], stats["rejected"], stats["pending"]) == (1, 2, 0)
    assert len(nodes_of(api, "ticket-4")) == 1


def test_many_threads_recording_at_once_lose_nothing(live_recorder, api):
    def agent(worker: int):
        for i in range(100):
            live_recorder.record("ticket-5", f"agent-{worker}", f"artifact {i}")

    threads = [threading.Thread(target=agent, args=(w,)) for w in range(4)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - started < 1.0  # recording never waits for the network
    assert live_recorder.flush(timeout=20)
    assert api.get("/api/v1/traces/ticket-5").json()["node_count"] == 400


def test_the_module_level_recorder_reads_its_settings_from_the_environment(live_server, project_and_key, api,
                                                                        monkeypatch):
    monkeypatch.setenv("DENOISE_URL", live_server.url)
    monkeypatch.setenv("DENOISE_API_KEY", project_and_key[1])
    recorder = denoiseflow.configure(flush_interval=0.05)
    try:
        denoiseflow.record("ticket-6", "agent", "hello")
        assert denoiseflow.flush(timeout=10)
    finally:
        recorder.close()
    assert api.get("/api/v1/traces/ticket-6").json()["node_count"] == 1


def test_default_product_ids_name_the_trace_and_step_and_never_collide(live_recorder, api):
    """`<trace>:<step>:<n>-<tag>`: readable where the dashboard shows an id, unique
    within the project even when another process (another tag) writes the same trace."""
    question = live_recorder.record("ticket-9", "gateway", "Where is my refund?")
    first = live_recorder.record("ticket-9", "retrieval_agent_v2", "a", step="retrieval", parent_ids=[question])
    second = live_recorder.record("ticket-9", "retrieval_agent_v2", "b", step="retrieval", parent_ids=[question])
    with denoiseflow.step("ticket-9", "responder", step="final_answer", recorder=live_recorder) as answer:
        answer.content = "Within 14 days."
    assert live_recorder.flush(timeout=10)

    tag = question.product_id.rsplit("-", 1)[1]
    assert [question.product_id, first.product_id, second.product_id, answer.node.product_id] == [
        f"ticket-9:gateway:1-{tag}", f"ticket-9:retrieval:1-{tag}", f"ticket-9:retrieval:2-{tag}",
        f"ticket-9:final_answer:1-{tag}"]
    assert set(nodes_of(api, "ticket-9")) == {question.product_id, first.product_id, second.product_id,
                                              answer.node.product_id}
    # Another process writing the same trace draws its own tag: its first retrieval node is another id.
    other = subprocess.run([sys.executable, "-c", "import denoiseflow; print(denoiseflow.new_product_id('ticket-9', "
                            "'retrieval'))"], capture_output=True, text=True, check=True, cwd=REPO / "sdk").stdout
    assert re.fullmatch(r"ticket-9:retrieval:1-[0-9a-f]{6}\n", other) and other.strip() != first.product_id

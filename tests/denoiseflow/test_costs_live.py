"""What agent steps cost, from the SDK to the trace API: timed steps, model and
usage read from OpenAI- and LangChain-shaped responses, the expensive path's
calls recorded and marked (redundant samples, reflection rounds, retries after
a fuse, cross-checks), costs priced by the project's table, and evaluation
traces in the `evaluation` environment with each case's cost."""

import time
from types import SimpleNamespace

import pytest

import denoiseflow as df
from tests.denoiseflow.dashboard import nodes_of
from tests.denoiseflow.eval_tasks import priced_answer

PRICES = {"fake-small": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}


def cost(usage):
    return usage["input_tokens"] * 1.0 / 1e6 + usage["output_tokens"] * 4.0 / 1e6


@pytest.fixture
def priced(api):
    assert api.patch("/api/v1/project", {"prices": PRICES}, format="json").status_code == 200


def openai_response(text, prompt_tokens, completion_tokens, model="fake-small"):
    message = SimpleNamespace(content=text, role="assistant")
    return SimpleNamespace(model=model, choices=[SimpleNamespace(message=message)],
                           usage=SimpleNamespace(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens))


def test_model_and_usage_are_read_from_openai_anthropic_and_langchain_shapes():
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult

    assert df.llm_fields(openai_response("x", 12, 3)) == {"model": "fake-small",
                                                           "usage": {"input_tokens": 12, "output_tokens": 3}}
    anthropic = {"model": "claude", "usage": {"input_tokens": 5, "output_tokens": 7}}
    assert df.llm_fields(anthropic) == {"model": "claude", "usage": {"input_tokens": 5, "output_tokens": 7}}
    message = AIMessage("hi", usage_metadata={"input_tokens": 9, "output_tokens": 2, "total_tokens": 11},
                        response_metadata={"model_name": "gpt-4o-mini"})
    assert df.llm_fields(message) == {"model": "gpt-4o-mini", "usage": {"input_tokens": 9, "output_tokens": 2}}
    result = LLMResult(generations=[[ChatGeneration(message=AIMessage("a"))]],
                       llm_output={"token_usage": {"prompt_tokens": 30, "completion_tokens": 4}, "model_name": "m"})
    assert df.llm_fields(result) == {"model": "m", "usage": {"input_tokens": 30, "output_tokens": 4}}
    from_messages = LLMResult(generations=[[ChatGeneration(message=message)], [ChatGeneration(message=message)]])
    assert df.usage_of(from_messages) == {"input_tokens": 18, "output_tokens": 4}
    assert df.llm_fields("plain text") == {} and df.llm_fields({"usage": {"input_tokens": -1}}) == {}


def test_a_timed_step_records_its_duration_model_usage_and_cost(live_recorder, api, priced):
    with df.step("tk-step", "retrieval_agent", step="retrieval", recorder=live_recorder) as s:
        time.sleep(0.05)
        s.content = "three passages"
        s.llm(openai_response("three passages", 1000, 200))
    with pytest.raises(LookupError):
        with df.step("tk-step", "reasoning_agent", step="answer", parent_ids=[s.node], recorder=live_recorder):
            raise LookupError("no passage answers it")
    assert live_recorder.flush(timeout=10)

    nodes = nodes_of(api, "tk-step", "agent_id")
    retrieval, failed = nodes["retrieval_agent"], nodes["reasoning_agent"]
    assert retrieval["product_id"] == s.node.product_id
    assert retrieval["duration_ms"] >= 50 and retrieval["duration_ms"] == s.duration_ms
    assert retrieval["usage"] == {"input_tokens": 1000, "output_tokens": 200} and retrieval["model"] == "fake-small"
    assert retrieval["cost_usd"] == pytest.approx(cost(retrieval["usage"]))
    assert failed["status"] == "error" and failed["parent_ids"] == [s.node.product_id]
    assert failed["duration_ms"] is not None


def test_a_decorated_step_reads_the_response_it_returns(live_recorder, api, priced):
    @df.step("tk-deco", "writer", step="draft", recorder=live_recorder)
    def write(topic):
        return openai_response(f"about {topic}", 40, 10)

    assert write("refunds").choices[0].message.content == "about refunds"
    assert live_recorder.flush(timeout=10)
    [node] = nodes_of(api, "tk-deco").values()
    assert (node["model"], node["usage"]) == ("fake-small", {"input_tokens": 40, "output_tokens": 10})
    assert api.get(f"/api/v1/traces/tk-deco/nodes/{node['product_id']}").json()["content"] == "about refunds"


def test_a_priced_vote_records_its_samples_and_marks_the_redundant_ones(live_recorder, api, priced):
    answers = iter(["refund", "refund", "billing", "refund"])
    usages = iter([(100, 5), (110, 6), (90, 4), (120, 5)])

    def sample(temperature):
        input_tokens, output_tokens = next(usages)
        return df.Priced(next(answers), model="fake-small",
                         usage={"input_tokens": input_tokens, "output_tokens": output_tokens})

    vote = df.run_redundant(sample, n=4, max_concurrency=1)
    ref = vote.record("tk-vote-cost", "intent_agent", step="intent", recorder=live_recorder)
    assert vote.answer == "refund" and len(vote.calls) == 4
    assert live_recorder.flush(timeout=10)

    nodes = nodes_of(api, "tk-vote-cost")
    voted = nodes[ref.product_id]
    samples = [n for pid, n in nodes.items() if pid != ref.product_id]
    assert sorted(voted["parent_ids"]) == sorted(n["product_id"] for n in samples)
    assert voted["usage"] is None and voted["cost_usd"] is None and voted["duration_ms"] is not None
    details = [api.get(f"/api/v1/traces/tk-vote-cost/nodes/{n['product_id']}").json() for n in samples]
    marked = [d for d in details if d["metadata"].get("expensive_path") == "redundant_sample"]
    assert len(marked) == 3 and all(d["metadata"]["expensive_path_of"] == ref.product_id for d in marked)
    assert [d["metadata"]["redundancy_sample"] for d in details if d not in marked] == [0]
    trace = api.get("/api/v1/traces/tk-vote-cost").json()
    assert trace["cost_usd"] == pytest.approx(sum(cost(n["usage"]) for n in samples))
    assert trace["tokens"] == 100 + 5 + 110 + 6 + 90 + 4 + 120 + 5


def test_an_unpriced_vote_is_one_node_with_its_wall_time(live_recorder, api):
    vote = df.run_redundant(lambda temperature: "refund", n=3)
    ref = vote.record("tk-vote-plain", "intent_agent", recorder=live_recorder)
    assert live_recorder.flush(timeout=10)
    assert list(nodes_of(api, "tk-vote-plain")) == [ref.product_id]
    assert nodes_of(api, "tk-vote-plain")[ref.product_id]["duration_ms"] == vote.duration_ms


def test_reflection_rounds_are_timed_priced_and_marked(live_recorder, api, priced):
    usage = {"input_tokens": 50, "output_tokens": 10}
    loop = df.reflect(lambda: df.Priced("draft one", model="fake-small", usage=usage),
                      lambda draft: df.Priced("too vague" if draft == "draft one" else None, model="fake-small",
                                              usage=usage),
                      lambda draft, note: df.Priced("a precise second draft", model="fake-small", usage=usage),
                      trace_id="tk-reflect", recorder=live_recorder)
    assert loop.answer == "a precise second draft"
    assert live_recorder.flush(timeout=10)
    first = loop.nodes[0].product_id
    details = {pid: api.get(f"/api/v1/traces/tk-reflect/nodes/{pid}").json() for pid in nodes_of(api, "tk-reflect")}
    assert "expensive_path" not in details[first]["metadata"]
    rounds = [d for pid, d in details.items() if pid != first]
    assert len(rounds) == 3  # critique, second draft, the critique that found nothing
    assert all(d["metadata"]["expensive_path"] == "reflection_round" for d in rounds)
    assert all(d["metadata"]["expensive_path_of"] == first for d in rounds)
    assert all(d["cost_usd"] == pytest.approx(cost(usage)) and d["duration_ms"] is not None for d in details.values())


def test_a_retry_after_a_fuse_is_marked_and_timed(live_recorder, api, priced):
    confidences = iter([0.1, 0.95])
    result = df.guard(lambda feedback: df.Priced(df.Output("fragment", next(confidences)), model="fake-small",
                                                 usage={"input_tokens": 10, "output_tokens": 1}),
                      consumer="reasoning_agent", trace_id="tk-retry", agent_id="retrieval_agent", step="retrieval",
                      recorder=live_recorder, max_retries=1)
    assert result.ok and result.attempts == 2
    assert live_recorder.flush(timeout=10)
    nodes = nodes_of(api, "tk-retry")
    retry = next(n for n in nodes.values() if n["retry_of"])
    first = nodes[retry["retry_of"]]
    detail = api.get(f"/api/v1/traces/tk-retry/nodes/{retry['product_id']}").json()
    assert detail["metadata"] == {"expensive_path": "fuse_retry", "expensive_path_of": first["product_id"]}
    assert retry["cost_usd"] == first["cost_usd"] == pytest.approx(cost({"input_tokens": 10, "output_tokens": 1}))
    assert retry["duration_ms"] is not None and first["duration_ms"] is not None


def test_a_priced_cross_check_records_the_judges_call(live_recorder, api, priced):
    answer = live_recorder.record("tk-judge", "writer", "14 days")
    verdict = df.cross_check("14 days", lambda a: df.Priced("FAIL: the policy says 30", model="fake-small",
                                                            usage={"input_tokens": 300, "output_tokens": 20}),
                             node=answer, recorder=live_recorder)
    assert verdict.blocked
    assert live_recorder.flush(timeout=10)
    judge = nodes_of(api, "tk-judge", "agent_id")["judge"]
    detail = api.get(f"/api/v1/traces/tk-judge/nodes/{judge['product_id']}").json()
    assert detail["metadata"]["expensive_path"] == "cross_check"
    assert detail["metadata"]["expensive_path_of"] == answer.product_id
    assert judge["parent_ids"] == [answer.product_id] and judge["source_type"] == "verification"
    assert judge["cost_usd"] == pytest.approx(cost({"input_tokens": 300, "output_tokens": 20}))


def test_evaluate_records_in_the_evaluation_environment_and_reports_cost_per_case(live_recorder, api, priced):
    items = [{"id": f"q-{n}", "input": {"n": n}, "expected": n * 10} for n in range(1, 4)]
    api.post("/api/v1/datasets", {"name": "costed"}, format="json")
    api.post("/api/v1/datasets/costed/items", {"items": items}, format="json")

    summary = df.evaluate("costed", priced_answer, recorder=live_recorder)

    for result in summary["results"]:
        trace = api.get(f"/api/v1/traces/{result['trace_id']}").json()
        assert trace["environment"] == "evaluation"
        assert result["cost_usd"] == pytest.approx(trace["cost_usd"])
    listed = api.get("/api/v1/traces?environment=evaluation").json()["results"]
    assert {t["trace_id"] for t in listed} == {r["trace_id"] for r in summary["results"]}
    assert api.get("/api/v1/traces?environment=production").json()["count"] == 0
    assert summary["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in summary["results"]))
    assert summary["cost_per_passed"] == pytest.approx(summary["cost_usd"] / summary["passed"])

"""The LangChain callback handler: chain, LLM and tool runs become nodes whose
parents follow the data through the run tree; framework plumbing is skipped
unless asked for, without breaking the chain of parents."""

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake import FakeListLLM  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import PromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnableParallel  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from denoiseflow.integrations.langchain import DenoiseCallbackHandler  # noqa: E402
from tests.denoiseflow.dashboard import nodes_of  # noqa: E402


@tool
def order_status(order_id: str) -> str:
    """Looks an order up."""
    if order_id == "missing":
        raise ValueError("no such order")
    return f"order {order_id}: refunded on 3 March"


def ticket_chain():
    retrieve = RunnableLambda(lambda q: "Refunds are paid within 14 days.", name="retrieve_policy").with_config(
        metadata={"denoise_source_type": "retrieval", "denoise_confidence": 0.42})
    gather = RunnableParallel(context=retrieve, question=RunnableLambda(lambda q: q, name="question"))
    prompt = PromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    return gather | prompt | FakeListLLM(responses=["Within 14 days."]) | StrOutputParser()


def test_by_default_the_dag_shows_agent_steps_not_plumbing(live_recorder, api):
    handler = DenoiseCallbackHandler(live_recorder, trace_id="lc-0")
    assert ticket_chain().invoke("Where is my refund?", config={"callbacks": [handler]}) == "Within 14 days."
    assert live_recorder.flush(timeout=10)

    steps = nodes_of(api, "lc-0", key="step")
    # Gone: the parallel map, the passthrough lambda, the prompt template, the output parser.
    assert sorted(steps) == ["FakeListLLM", "RunnableSequence", "retrieve_policy"]
    pid = {step: node["product_id"] for step, node in steps.items()}
    assert steps["FakeListLLM"]["parent_ids"] == [pid["retrieve_policy"]]  # through the skipped map and prompt
    assert steps["RunnableSequence"]["parent_ids"] == [pid["FakeListLLM"]]  # through the skipped parser
    assert steps["RunnableSequence"]["source_type"] == "final_answer"


def test_anonymous_lambdas_are_plumbing_but_failures_and_marked_runs_are_kept(live_recorder, api):
    handler = DenoiseCallbackHandler(live_recorder, trace_id="lc-3")
    shout = RunnableLambda(lambda text: text.upper())
    kept = RunnableLambda(lambda text: text + "!").with_config(metadata={"denoise_keep": True})

    def broken(text):
        raise ValueError("parser failed")

    chain = FakeListLLM(responses=["ok"]) | shout | kept | StrOutputParser() | RunnableLambda(broken, name="parse")
    with pytest.raises(ValueError):
        chain.invoke("hi", config={"callbacks": [handler]})
    assert live_recorder.flush(timeout=10)
    nodes = nodes_of(api, "lc-3", key="step")
    assert sorted(nodes) == ["FakeListLLM", "RunnableLambda", "RunnableSequence", "parse"]
    assert nodes["RunnableLambda"]["parent_ids"] == [nodes["FakeListLLM"]["product_id"]]
    assert nodes["parse"]["status"] == "error"
    assert nodes["parse"]["parent_ids"] == [nodes["RunnableLambda"]["product_id"]]


def test_keep_plumbing_records_every_run(live_recorder, api):
    handler = DenoiseCallbackHandler(live_recorder, trace_id="lc-1", keep_plumbing=True)
    assert ticket_chain().invoke("Where is my refund?", config={"callbacks": [handler]}) == "Within 14 days."
    assert live_recorder.flush(timeout=10)

    steps = nodes_of(api, "lc-1", key="step")
    pid = {step: node["product_id"] for step, node in steps.items()}
    assert steps["retrieve_policy"]["confidence"] == 0.42
    assert steps["retrieve_policy"]["source_type"] == "retrieval"
    # The two parallel branches consumed nothing of each other; the map consumed both.
    assert steps["retrieve_policy"]["parent_ids"] == [] and steps["question"]["parent_ids"] == []
    assert sorted(steps["RunnableParallel<context,question>"]["parent_ids"]) == sorted(
        [pid["retrieve_policy"], pid["question"]])
    assert steps["FakeListLLM"]["parent_ids"] == [pid["PromptTemplate"]]
    assert steps["FakeListLLM"]["source_type"] == "reasoning"
    final = steps["RunnableSequence"]
    assert final["source_type"] == "final_answer" and final["parent_ids"] == [pid["StrOutputParser"]]

    cause = api.get(f"/api/v1/traces/lc-1/nodes/{final['product_id']}/root-cause").json()
    assert cause["root_causes"][0]["product_id"] == pid["retrieve_policy"]  # low confidence, found upstream


def test_a_failing_tool_is_an_error_node(live_recorder, api):
    handler = DenoiseCallbackHandler(live_recorder, trace_id="lc-2")
    assert "refunded" in order_status.invoke("A-1043", config={"callbacks": [handler]})
    with pytest.raises(ValueError):
        order_status.invoke("missing", config={"callbacks": [handler]})
    assert live_recorder.flush(timeout=10)

    nodes = api.get("/api/v1/traces/lc-2").json()["nodes"]
    assert [(n["step"], n["status"]) for n in nodes] == [("order_status", "ok"), ("order_status", "error")]


def test_without_a_trace_id_each_top_level_run_is_its_own_trace(live_recorder, api):
    handler = DenoiseCallbackHandler(live_recorder)
    chain = RunnableLambda(lambda x: x * 2, name="double")
    chain.invoke(2, config={"callbacks": [handler], "run_id": "0193a9d4-7b4c-7000-8000-000000000001"})
    assert live_recorder.flush(timeout=10)
    nodes = api.get("/api/v1/traces/0193a9d4-7b4c-7000-8000-000000000001").json()["nodes"]
    assert [n["product_id"] for n in nodes] == ["0193a9d4-7b4c-7000-8000-000000000001"]

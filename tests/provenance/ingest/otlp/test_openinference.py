"""Spans written by OpenInference instrumentation and with OpenTelemetry GenAI
attributes become nodes with the right kind, text, agent, step, scores and
verdicts, exported through the real OTLP exporter to a live server."""

import pytest
from openinference.semconv.trace import DocumentAttributes, OpenInferenceSpanKindValues, SpanAttributes
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from provenance.models import Review


@pytest.fixture
def provider(live_server, project_and_key):
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=f"{live_server.url}/v1/traces", headers={"Authorization": f"Bearer {project_and_key[1]}"}, timeout=10)))
    yield provider
    provider.shutdown()


@pytest.fixture
def langchain_instrumented(provider):
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield
    instrumentor.uninstrument()


def nodes_by_step(api, trace_id: str) -> dict:
    response = api.get(f"/api/v1/traces/{trace_id}")
    assert response.status_code == 200, response.content
    return {node["step"]: node for node in response.json()["nodes"]}


def node_detail(api, trace_id: str, product_id: str) -> dict:
    response = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}")
    assert response.status_code == 200
    return response.json()


def test_an_openinference_langchain_run_becomes_a_dag(langchain_instrumented, api):
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda

    class PolicyRetriever(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content="Refunds within 30 days.", metadata={"score": 0.82}),
                    Document(page_content="Shipping takes 5 days.", metadata={"score": 0.41})]

    llm = FakeListChatModel(responses=["The refund window is 30 days."])
    prompt = ChatPromptTemplate.from_template("Context: {context}\nQuestion: {question}")
    join = RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs)).with_config(run_name="join_documents")
    chain = ({"context": PolicyRetriever() | join, "question": RunnableLambda(lambda q: q)}
             | prompt | llm | StrOutputParser()).with_config(run_name="answer_question")

    assert chain.invoke("How long do I have to ask for a refund?") == "The refund window is 30 days."

    traces = api.get("/api/v1/traces").json()["results"]
    assert len(traces) == 1
    trace_id = traces[0]["trace_id"]
    nodes = nodes_by_step(api, trace_id)
    by_id = {n["product_id"]: n for n in nodes.values()}

    assert nodes["answer_question"]["source_type"] == "chain"
    assert nodes["answer_question"]["parent_ids"] == []
    assert nodes["PolicyRetriever"]["source_type"] == "retrieval"
    assert nodes["ChatPromptTemplate"]["source_type"] == "prompt"
    assert nodes["FakeListChatModel"]["source_type"] == "reasoning"
    assert {n["agent_id"] for n in nodes.values()} == {"support-bot"}
    # The DAG follows the spans: the model's node hangs under the whole chain.
    assert by_id[nodes["FakeListChatModel"]["parent_ids"][0]]["step"] == "answer_question"

    retrieval = node_detail(api, trace_id, nodes["PolicyRetriever"]["product_id"])
    assert retrieval["raw_input"] == "How long do I have to ask for a refund?"
    assert "Refunds within 30 days." in retrieval["content"]
    assert retrieval["metrics"]["retrieval_score"] == 0.82
    assert retrieval["confidence"] == 0.82

    model = node_detail(api, trace_id, nodes["FakeListChatModel"]["product_id"])
    assert "Question: How long do I have to ask for a refund?" in model["raw_input"]
    assert "The refund window is 30 days." in model["content"]
    assert model["metadata"]["llm.provider"] == "fakelistchatmodel"
    answer = node_detail(api, trace_id, nodes["StrOutputParser"]["product_id"])
    assert answer["content"] == "The refund window is 30 days."


def test_an_openinference_tool_span_is_a_tool_result_named_for_the_tool(langchain_instrumented, api):
    from langchain_core.tools import tool

    @tool
    def lookup_order(order_id: str) -> str:
        """Looks up an order."""
        return f"order {order_id}: shipped"

    assert lookup_order.invoke({"order_id": "42"}) == "order 42: shipped"
    [trace] = api.get("/api/v1/traces").json()["results"]
    [node] = nodes_by_step(api, trace["trace_id"]).values()
    assert node["step"] == "lookup_order" and node["source_type"] == "tool_result"
    assert node_detail(api, trace["trace_id"], node["product_id"])["content"] == "order 42: shipped"


def test_genai_and_evaluation_attributes_map_to_agent_step_scores_fuses_and_reviews(provider, api):
    tracer = provider.get_tracer("tests.genai")
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("invoke_agent triage", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage_agent"}) as root:
        trace_id = format(root.get_span_context().trace_id, "032x")
        documents = SpanAttributes.RETRIEVAL_DOCUMENTS
        with tracer.start_as_current_span("search", attributes={
                kind: OpenInferenceSpanKindValues.RETRIEVER.value,
                f"{documents}.0.{DocumentAttributes.DOCUMENT_SCORE}": 0.35,
                f"{documents}.1.{DocumentAttributes.DOCUMENT_SCORE}": 0.2,
                f"{documents}.0.{DocumentAttributes.DOCUMENT_CONTENT}": "an old policy"}):
            pass
        with tracer.start_as_current_span("chat gpt-4o", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.request.temperature": 0.2,
                "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
                SpanAttributes.INPUT_VALUE: "What is the refund window?",
                SpanAttributes.OUTPUT_VALUE: "14 days.", "denoise.confidence": 0.9}):
            pass
        with tracer.start_as_current_span("execute_tool get_order", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order",
                "denoise.step": "order_lookup"}):
            pass
        with tracer.start_as_current_span("pii check", attributes={kind: "GUARDRAIL"}) as guard:
            guard.set_status(Status(StatusCode.ERROR, "PII found"))
        with tracer.start_as_current_span("judge", attributes={
                kind: OpenInferenceSpanKindValues.EVALUATOR.value, "eval.correctness.label": "incorrect",
                "eval.correctness.score": 0.0, "eval.correctness.explanation": "the policy says 30 days"}):
            pass

    nodes = nodes_by_step(api, trace_id)
    assert nodes["invoke_agent"]["agent_id"] == "triage_agent"
    assert nodes["invoke_agent"]["source_type"] == "agent"

    search = node_detail(api, trace_id, nodes["search"]["product_id"])
    assert search["source_type"] == "retrieval"
    assert search["metrics"]["retrieval_score"] == 0.35
    assert search["confidence"] == 0.35  # no denoise.confidence: the best document's score

    chat = node_detail(api, trace_id, nodes["chat"]["product_id"])
    assert chat["confidence"] == 0.9  # denoise.* wins
    assert (chat["raw_input"], chat["content"]) == ("What is the refund window?", "14 days.")
    assert chat["model"] == "gpt-4o"
    assert chat["usage"] == {"input_tokens": 120, "output_tokens": 30}
    assert chat["metadata"]["gen_ai.request.temperature"] == 0.2

    assert nodes["order_lookup"]["source_type"] == "tool_result"  # denoise.step wins over gen_ai.tool.name

    guard = node_detail(api, trace_id, nodes["pii check"]["product_id"])
    assert guard["fused"] and guard["status"] == "error"
    assert guard["fuses"][0]["decision"] == "block"

    judge = node_detail(api, trace_id, nodes["judge"]["product_id"])
    assert judge["source_type"] == "evaluation" and judge["metrics"]["eval.correctness"] == 0.0
    review = Review.objects.get(trace__trace_id=trace_id)
    assert (review.verdict, review.product_id) == ("incorrect", "")
    assert review.comment == "correctness: the policy says 30 days"

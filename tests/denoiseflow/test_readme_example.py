"""The README's ten-line SDK example runs as printed (with stand-ins for the
agent's own model and index) and produces the trace it promises."""

import denoiseflow as df


class my_llm:  # noqa: N801 - stands in for the agent's own model client
    @staticmethod
    def classify(question, temperature):
        return "refund_status" if temperature < 1 else "billing"

    @staticmethod
    def answer(documents):
        return "Refunds arrive within 14 days."


class my_index:  # noqa: N801
    @staticmethod
    def search(query):
        return [("Refunds are paid within 14 days.", 0.91), ("Gift cards are not refundable.", 0.4)]


def test_the_readme_sdk_example(live_server, project_and_key, api):
    recorder = df.configure(live_server.url, api_key=project_and_key[1])
    try:
        # --- README example, verbatim from here ---
        fuse = df.ConfidenceFuse(by_agent_type={"retrieval": df.Thresholds(accept=0.85, block=0.6)})
        q = df.record("ticket-42", "gateway", "Where is my refund?", source_type="user_input")
        vote = df.run_redundant(lambda temperature: my_llm.classify(q, temperature), n=5)
        intent = df.record("ticket-42", "intent_agent", step="intent", parent_ids=[q], **vote.node_fields())
        docs = [df.record("ticket-42", "retrieval_agent", text, step="retrieval", parent_ids=[intent],
                          confidence=score) for text, score in my_index.search(vote.answer)]
        usable = [d for d in docs if not fuse.gate(d, by_agent_id="reasoning_agent").blocked]
        df.record("ticket-42", "responder", my_llm.answer(usable), source_type="final_answer", parent_ids=usable)
        df.flush()
        # --- end of the README example ---
    finally:
        recorder.close()

    nodes = {n["step"] or n["source_type"]: n for n in api.get("/api/v1/traces/ticket-42").json()["nodes"]}
    # The default diversity hook cycles temperatures 0.2, 0.7, 1.0: one of five samples disagrees.
    assert nodes["intent"]["confidence"] == 0.8
    fused = [n for n in api.get("/api/v1/traces/ticket-42").json()["nodes"] if n["fused"]]
    assert [n["agent_id"] for n in fused] == ["retrieval_agent"]
    assert nodes["final_answer"]["parent_ids"] == [docs[0].product_id]

"""demo_traffic keeps tickets flowing into a running dashboard through the SDK."""

import io

from django.core.management import call_command


def test_live_tickets_arrive_at_a_running_dashboard(live_server, project_and_key, api):
    out = io.StringIO()
    call_command("demo_traffic", minutes=0.03, rate=300, url=live_server.url, api_key=project_and_key[1], stdout=out)

    assert "Done:" in out.getvalue()
    traces = api.get("/api/v1/traces").json()["results"]
    assert traces and all(t["trace_id"].startswith("live-") for t in traces)
    nodes = api.get(f"/api/v1/traces/{traces[0]['trace_id']}").json()["nodes"]
    assert {n["step"] for n in nodes} >= {"user_input", "intent", "retrieval", "reasoning", "final_answer"}

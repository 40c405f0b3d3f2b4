"""Schema-driven fuzzing: schemathesis runs every check against /api/v1/schema
on a live server with a real key. Deterministic (the same cases every run) and
bounded (a fixed number of examples per operation)."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES_PER_OPERATION = 8


@pytest.fixture
def seeded(ingest, api):
    """Something to find at the schema's example ids: trace `t-1` with a fused
    fragment, a fuse decision, a review and an escalation of its answer; a
    health report; an alert rule; a truth set with a run."""
    ingest(node_event("frag-1", "t-1", confidence=0.3, fuse={"decision": "block", "reason": "low"}),
           node_event("final", "t-1", parents=["frag-1"], seconds=1, source_type="final_answer"),
           fuse_event("final", "downweight", "t-1", reason_code="below_accept", policy_version=1),
           review_event("t-1", "incorrect", "final"),
           {"id": "esc-1", "type": "escalation", "timestamp": BASE_TIME.isoformat(),
            "body": {"trace_id": "t-1", "product_id": "final", "reason": "unsure"}})
    call_command("check_dag_health")
    rule = {"name": "fuse rate", "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}]}
    assert api.post("/api/v1/alert-rules", rule, format="json").status_code == 201
    assert api.post("/api/v1/datasets", {"name": "ticket-stats"}, format="json").status_code == 201
    items = {"items": [{"id": "q-1", "input": "refund total?", "expected": 100}]}
    assert api.post("/api/v1/datasets/ticket-stats/items", items, format="json").status_code == 200
    run = api.post("/api/v1/runs", {"dataset": "ticket-stats", "name": "v1"}, format="json").json()
    results = {"results": [{"item_id": "q-1", "actual": 101, "trace_id": "t-1"}]}
    assert api.post(f"/api/v1/runs/{run['id']}/results", results, format="json").status_code == 207


def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_schema(live_server, project_and_key, seeded,
                                                                            tmp_path, settings):
    # Schemathesis sends thousands of requests, many without a key on purpose
    # (it checks that they get 401): the guessing and rate limits would answer
    # 429 instead, which is their job but not what is tested here.
    settings.API_KEY_FAILURES_PER_ADDRESS = 10**9
    settings.API_RATE_LIMIT = 0
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(CONFIG), "run",
        f"{live_server.url}/api/v1/schema",
        "--header", f"Authorization: Bearer {project_and_key[1]}",
        "--checks", "all",
        "--max-examples", str(EXAMPLES_PER_OPERATION),
        "--generation-deterministic",
        "--workers", "1",
        "--request-timeout", "30",
        "--no-color",
        "--report", "junit", "--report-dir", str(tmp_path),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary
    assert "passed" in summary and "failed" not in summary.split("SUMMARY")[-1], summary

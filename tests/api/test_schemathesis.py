"""Schema-driven fuzzing: schemathesis runs every check against /api/v1/schema
on a live server with a real key. Deterministic (the same cases every run) and
bounded (a fixed number of examples per operation). A second pass sends every
write's body chunked to the production server (`manage.py serve`): the test
server is WSGI and answers a chunked body 411."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from tests.support.events import BASE_TIME, fuse_event, node_event, review_event
from tests.support.serving import REPO, Serve, database_url

CONFIG = Path(__file__).with_name("schemathesis.toml")
HOOKS = "tests.api.schemathesis_chunked_hooks"
EXAMPLES_PER_OPERATION = 8
CHUNKED_EXAMPLES_PER_OPERATION = 3


@pytest.fixture
def seeded(ingest, api, project):
    """Something to find at the schema's example ids: trace `t-1` with a fused
    fragment, a fuse decision, a review and an escalation of its answer; a
    health report; an alert rule; a truth set with a run; a key to revoke and
    rotate (its id is the answer: the run aims those at it, not at its own key)."""
    victim, _ = project.issue_api_key("schemathesis-victim")
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
    return victim.pk


# The key the run authenticates with must outlive it: revoking and rotating
# (the stateful phase would aim them at the ids GET /api/v1/keys lists) aim at
# a key of their own, named as an integer (a string would be a wrong type).
VICTIM_KEY = """
[[operations]]
include-path-regex = "^/api/v1/keys/\\\\{{key_id\\\\}}"
parameters = {{ "path.key_id" = {} }}
"""


def schemathesis(url: str, key: str, victim_key_id: int, examples: int, tmp_path: Path, *options: str,
                 env: dict | None = None):
    """Run every check against `url`'s schema; fail with the run's summary."""
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.read_text() + VICTIM_KEY.format(int(victim_key_id)))
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config), "run",
        f"{url}/api/v1/schema",
        "--header", f"Authorization: Bearer {key}",
        "--checks", "all",
        "--max-examples", str(examples),
        "--generation-deterministic",
        "--workers", "1",
        "--request-timeout", "30",
        "--no-color",
        "--report", "junit", "--report-dir", str(tmp_path),
        *options,
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env={**os.environ, **(env or {})})
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary
    assert "passed" in summary and "failed" not in summary.split("SUMMARY")[-1], summary


def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_schema(live_server, project_and_key, seeded,
                                                                            tmp_path, settings):
    # Schemathesis sends thousands of requests, many without a key on purpose
    # (it checks that they get 401): the guessing and rate limits would answer
    # 429 instead, which is their job but not what is tested here.
    settings.API_KEY_FAILURES_PER_ADDRESS = 10**9
    settings.API_RATE_LIMIT = 0
    schemathesis(live_server.url, project_and_key[1], seeded, EXAMPLES_PER_OPERATION, tmp_path)


@pytest.mark.django_db(transaction=True)
def test_chunked_bodies_find_no_server_error_and_no_answer_outside_the_schema(project_and_key, seeded, tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    sent = tmp_path / "chunked-requests.log"
    with Serve(tmp_path, DATABASE_URL=database_url(connection.settings_dict),
               API_KEY_FAILURES_PER_ADDRESS=str(10**9), API_RATE_LIMIT="0") as server:
        schemathesis(server.url, project_and_key[1], seeded, CHUNKED_EXAMPLES_PER_OPERATION, tmp_path,
                     "--include-method", "POST", "--include-method", "PUT", "--include-method", "PATCH",
                     env={"CHUNKED_BODIES_LOG": str(sent), "SCHEMATHESIS_HOOKS": HOOKS,
                          "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])})
        log = server.log_text()
    # (method, status) of every request that went out chunked; the checks
    # also resend a case's body under other methods (unsupported_method).
    chunked = [(line.split()[0], line.split()[-1]) for line in sent.read_text().splitlines()]
    read = {method for method, status in chunked if status.startswith("2")}
    assert {"POST", "PUT", "PATCH"} <= read, chunked  # bodies read whole, not just refused
    assert not [request for request in chunked if request[1] == "411"], chunked
    assert "Traceback" not in log, log

"""Schema-driven fuzzing: schemathesis runs every check against /api/v1/schema
on a live server with a real key. Deterministic (the same cases every run) and
bounded (a fixed number of examples per operation)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import node_event

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES_PER_OPERATION = 8


@pytest.fixture
def seeded(ingest, api):
    """Something to find: a trace with a fused fragment, and an alert rule."""
    ingest(node_event("frag-1", "t-1", confidence=0.3, fuse={"decision": "block", "reason": "low"}),
           node_event("final", "t-1", parents=["frag-1"], seconds=1, source_type="final_answer"))
    rule = {"name": "fuse rate", "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}]}
    assert api.post("/api/v1/alert-rules", rule, format="json").status_code == 201


def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_schema(live_server, project_and_key, seeded, tmp_path):
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

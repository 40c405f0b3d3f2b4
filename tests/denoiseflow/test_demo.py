"""`python -m denoiseflow.demo` tells its story with a fake model, and records
it to a dashboard when DENOISE_URL and DENOISE_API_KEY are set."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import denoiseflow

SDK_ROOT = str(Path(denoiseflow.__file__).resolve().parents[1])


def run_demo(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DENOISE_")}
    clean["PYTHONPATH"] = SDK_ROOT
    return subprocess.run([sys.executable, "-m", "denoiseflow.demo"], env={**clean, **env}, capture_output=True,
                          text=True, timeout=120)


def test_the_demo_prints_a_vote_a_reflection_loop_and_a_guarded_retry():
    done = run_demo()
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "1. Redundant vote" in out and "vote_ratio 0.86" in out and "answer:        refund_status" in out
    assert "2. Reflection loop" in out and "stopped: converged after 3 drafts" in out
    assert "3. Guarded retry" in out and "outcome: accepted after 2 attempts" in out
    assert "[below_block]" in out  # the retry was told why the first fragment was fused
    assert "kept in memory" in out


def test_the_demo_records_to_a_dashboard(live_server, project_and_key, api):
    done = run_demo(DENOISE_URL=live_server.url, DENOISE_API_KEY=project_and_key[1])
    assert done.returncode == 0, done.stdout + done.stderr
    traces = re.findall(r"sdk-demo-\w+-[0-9a-f]{6}", done.stdout.splitlines()[-1])
    assert len(traces) == 3
    vote, loop, retry = (api.get(f"/api/v1/traces/{t}").json() for t in traces)
    intent = next(n for n in vote["nodes"] if n["step"] == "intent")
    assert intent["confidence"] == pytest.approx(6 / 7)
    assert [n["round"] for n in loop["nodes"] if n["source_type"] == "reasoning"] == [1, 2, 3]
    fetched = [n for n in retry["nodes"] if n["agent_id"] == "retrieval_agent"]
    assert len(fetched) == 2 and [n["fused"] for n in fetched] == [True, False]
    second = api.get(f"/api/v1/traces/{traces[2]}/nodes/{fetched[1]['product_id']}").json()
    assert (second["retry_of"], second["attempt"]) == (fetched[0]["product_id"], 2)

"""`denoiseflow.evaluate` and `python -m denoiseflow.eval` against a live dashboard:
every case in its own trace, results linked to it, the run judged by the server."""

import subprocess
import sys
from pathlib import Path

import pytest

import denoiseflow
from tests.denoiseflow.dashboard import nodes_of
from tests.denoiseflow.eval_tasks import lookup

REPO = Path(__file__).resolve().parents[2]
ITEMS = [{"id": f"q-{n}", "input": {"n": n}, "expected": n * 10, "tags": ["t"]} for n in range(1, 5)]


@pytest.fixture
def truth_set(api):
    assert api.post("/api/v1/datasets", {"name": "ticket-stats"}, format="json").status_code == 201
    assert api.post("/api/v1/datasets/ticket-stats/items", {"items": ITEMS}, format="json").status_code == 200


def test_evaluate_records_each_case_in_its_trace_and_returns_the_summary(truth_set, live_recorder, api):
    summary = denoiseflow.evaluate("ticket-stats", lookup, name="table-v1", concurrency=2, recorder=live_recorder)

    assert summary["status"] == "finished" and summary["name"] == "table-v1"
    # q-1 exact, q-2 within 0.5, q-3 off by one, q-4 raised.
    assert (summary["total"], summary["judged"], summary["passed"], summary["failed"]) == (4, 4, 2, 2)
    assert summary["accuracy"] == 0.5
    assert summary["intervention_rate"] == 0.25
    assert summary["mean_latency_ms"] is not None
    results = {r["item_id"]: r for r in summary["results"]}
    run_id = summary["id"]
    assert results["q-1"]["trace_id"] == f"eval-{run_id}-q-1"
    assert results["q-1"]["product_id"] == f"eval-{run_id}-q-1:final"
    assert results["q-4"]["error"].startswith("LookupError") and results["q-4"]["passed"] is False

    # The traces arrived before the run finished: each case's DAG is there.
    nodes = nodes_of(api, f"eval-{run_id}-q-1")
    assert nodes[f"eval-{run_id}-q-1:final"]["parent_ids"] == [f"eval-{run_id}-q-1:input"]
    failed = nodes_of(api, f"eval-{run_id}-q-4")
    assert failed[f"eval-{run_id}-q-4:answer"]["status"] == "error"


def test_a_case_may_say_what_it_took(truth_set, live_recorder):
    """A simulation records its steps' durations without spending them: the case reports their sum."""
    def simulated(question):
        return denoiseflow.Answer(question["n"] * 10, latency_ms=1000.0 * question["n"])

    summary = denoiseflow.evaluate("ticket-stats", simulated, name="simulated", recorder=live_recorder)
    assert sorted(r["latency_ms"] for r in summary["results"]) == [1000.0, 2000.0, 3000.0, 4000.0]
    assert summary["mean_latency_ms"] == 2500.0 and summary["p95_latency_ms"] == 4000.0


def test_only_runs_the_named_cases(truth_set, live_recorder):
    summary = denoiseflow.evaluate("ticket-stats", lookup, only=["q-2"], recorder=live_recorder)
    assert (summary["judged"], summary["passed"], summary["missing"]) == (1, 1, 3)
    assert summary["metadata"] == {"only": ["q-2"]}
    with pytest.raises(denoiseflow.EvaluationError, match="q-9"):
        denoiseflow.evaluate("ticket-stats", lookup, only=["q-9"], recorder=live_recorder)


def test_an_unknown_dataset_is_an_error_that_says_so(live_recorder, db):
    with pytest.raises(denoiseflow.EvaluationError, match="404"):
        denoiseflow.evaluate("nope", lookup, recorder=live_recorder)


def cli(live_server, key, *args):
    return subprocess.run(
        [sys.executable, "-m", "denoiseflow.eval", "--url", live_server.url, "--api-key", key, *args],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )


def test_the_command_fails_below_min_accuracy_or_below_the_previous_run(truth_set, live_server, project_and_key):
    key = project_and_key[1]
    first = cli(live_server, key, "--dataset", "ticket-stats", "--task", "tests.denoiseflow.eval_tasks:perfect")
    assert first.returncode == 0, first.stderr
    assert "accuracy 100.0%" in first.stdout

    worse = cli(live_server, key, "--dataset", "ticket-stats", "--task", "tests.denoiseflow.eval_tasks:lookup")
    assert worse.returncode == 1
    assert "below the previous run" in worse.stderr

    strict = cli(live_server, key, "--dataset", "ticket-stats", "--task", "tests.denoiseflow.eval_tasks:perfect",
                 "--min-accuracy", "0.9")
    assert strict.returncode == 0, strict.stderr
    low = cli(live_server, key, "--dataset", "ticket-stats", "--task", "tests.denoiseflow.eval_tasks:plain",
              "--min-accuracy", "0.9")
    assert low.returncode == 1 and "below --min-accuracy" in low.stderr

    broken = cli(live_server, key, "--dataset", "ticket-stats", "--task", "tests.denoiseflow.eval_tasks:missing")
    assert broken.returncode == 2 and "error:" in broken.stderr


def test_the_command_fails_when_the_cost_per_passed_case_rose_more_than_allowed(truth_set, live_server,
                                                                                project_and_key, api):
    api.patch("/api/v1/project", {"prices": {"fake-small": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}},
              format="json")
    key = project_and_key[1]
    task = "tests.denoiseflow.eval_tasks:"
    first = cli(live_server, key, "--dataset", "ticket-stats", "--task", task + "priced_answer")
    assert first.returncode == 0, first.stderr
    same = cli(live_server, key, "--dataset", "ticket-stats", "--task", task + "priced_answer",
               "--max-cost-increase", "0.2")
    assert same.returncode == 0, same.stderr
    pricier = cli(live_server, key, "--dataset", "ticket-stats", "--task", task + "pricier_answer",
                  "--max-cost-increase", "0.2")
    assert pricier.returncode == 1
    assert "cost per passed case" in pricier.stderr and "more than --max-cost-increase 20%" in pricier.stderr
    # Without the flag, the same rise is reported but does not fail the run.
    again = cli(live_server, key, "--dataset", "ticket-stats", "--task", task + "pricier_answer")
    assert again.returncode == 0, again.stderr
    assert "cost per passed case" in again.stdout

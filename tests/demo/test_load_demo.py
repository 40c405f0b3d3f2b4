"""load_demo: users, project, key and a history recorded through the SDK over
HTTP, including the `demo-bad-answer` trace whose root cause is a fused
retrieval fragment. Running it again changes nothing that is already there.

The demo is loaded once for the module (twice, to see the second run change
nothing) and committed, as the command's own in-process server must see it;
each test then reads it inside its own rolled-back transaction.
"""

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings
from rest_framework.test import APIClient

from demo import planted_faults
from provenance.models import Node, Review, Trace
from tenancy.membership import role_of
from tenancy.models import Project
from tests.denoiseflow.servers import closed_port


@dataclass
class Loaded:
    outputs: list[str]
    var_dir: Path
    counts: list[tuple[int, int]]  # (traces, nodes) after each run
    keys: list[str]

    def api(self) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.keys[-1]}")
        return client


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker, tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("var")  # the developer's own demo credentials stay out of it
    result = Loaded([], var_dir, [], [])
    with django_db_blocker.unblock(), override_settings(VAR_DIR=var_dir):
        try:
            for _ in range(2):
                out = io.StringIO()
                call_command("load_demo", scale=0.1, port=closed_port(), stdout=out)
                result.outputs.append(out.getvalue())
                result.counts.append((Trace.objects.count(), Node.objects.count()))
                result.keys.append(json.loads((var_dir / "demo-credentials.json").read_text())["api_key"])
            yield result
        finally:
            call_command("flush", interactive=False, verbosity=0)


def test_the_bad_answer_trace_leads_to_the_fused_fragment(loaded, db):
    api = loaded.api()

    nodes = {n["product_id"]: n for n in api.get("/api/v1/traces/demo-bad-answer").json()["nodes"]}
    fragment = nodes["demo-bad-answer:fragment2:r1"]
    assert fragment["fused"] is True and fragment["source_type"] == "retrieval"
    assert fragment["product_id"] in nodes["demo-bad-answer:reasoning:r1"]["parent_ids"]

    final = api.get("/api/v1/traces/demo-bad-answer/nodes/demo-bad-answer:final").json()
    assert final["source_type"] == "final_answer"
    assert [r["verdict"] for r in final["reviews"]] == ["incorrect"]
    cause = api.get("/api/v1/traces/demo-bad-answer/nodes/demo-bad-answer:final/root-cause").json()
    assert cause["root_causes"] == [{"product_id": "demo-bad-answer:fragment2:r1", "reason": "fused",
                                     "confidence": 0.31, "trace_id": "demo-bad-answer"}]
    assert cause["path"][0] == "demo-bad-answer:fragment2:r1" and cause["path"][-1] == "demo-bad-answer:final"


def test_a_second_run_reuses_everything_and_stores_nothing_twice(loaded, db):
    assert loaded.keys[0] == loaded.keys[1]
    assert all(loaded.keys[0] in output for output in loaded.outputs)
    (traces, nodes), (traces_after, nodes_after) = loaded.counts
    # Only tickets whose start time has come since the first run may be added.
    assert traces_after - traces <= 2 and nodes_after - nodes < 40
    assert Node.objects.filter(trace__trace_id="demo-bad-answer").count() == 10
    assert get_user_model().objects.filter(username__in=["demo", "admin"]).count() == 2
    assert Project.objects.filter(slug="demo").count() == 1


def test_the_demo_users_can_log_in_and_see_the_demo_project(loaded, db):
    assert "demo / demo" in loaded.outputs[-1] and "http://127.0.0.1:8000/" in loaded.outputs[-1]

    demo = get_user_model().objects.get(username="demo")
    assert not demo.is_staff and not demo.is_superuser
    assert role_of(demo, Project.objects.get(slug="demo")) == "admin"
    assert role_of(get_user_model().objects.get(username="viewer"), Project.objects.get(slug="demo")) == "viewer"
    assert get_user_model().objects.get(username="admin").is_superuser
    assert Client().login(username="demo", password="demo")


def test_the_history_spans_three_days_with_reviews_fuses_and_two_rounds(loaded, db):
    project = Project.objects.get(slug="demo")
    stamps = Node.objects.filter(project=project).order_by("timestamp").values_list("timestamp", flat=True)
    assert (stamps.last() - stamps.first()).total_seconds() > 2.9 * 86400
    assert Trace.objects.filter(project=project).count() > 100
    assert Node.objects.filter(project=project, round=2).exists()
    assert Node.objects.filter(project=project, fuse_state=3).exists()
    assert Node.objects.filter(project=project, is_error=True).exists()
    assert set(Review.objects.filter(project=project).values_list("verdict", flat=True)) == {"correct", "incorrect"}
    assert set(Node.objects.filter(project=project).values_list("step", flat=True)) >= {
        "user_input", "intent", "entity_extraction", "retrieval", "reasoning", "verification", "summary",
        "final_answer"}


def test_the_demo_alert_rules_fire_on_the_degradation_under_way(loaded, db):
    events = loaded.api().get("/api/v1/alerts").json()
    events = events["results"] if isinstance(events, dict) else events
    assert len({e["rule_id"] for e in events if e["state"] == "firing"}) == 3


def test_health_on_the_demo_reports_exactly_the_planted_faults(loaded, db):
    found = {(f["kind"], f["trace_id"], f["product_id"])
             for f in loaded.api().get("/api/v1/health/latest").json()["findings"]}
    planted = planted_faults.expected_findings(with_large_run=False)  # scale 0.1 leaves the long run out
    hits = len(found & planted)
    precision, recall = hits / len(found), hits / len(planted)
    print(f"demo health (scale 0.1): {len(found)} findings, {len(planted)} planted, "
          f"precision {precision:.3f}, recall {recall:.3f}")
    assert found == planted


def test_the_demo_health_page_lists_the_planted_broken_link(loaded, db):
    page = Client()
    assert page.login(username="demo", password="demo")
    response = page.get("/p/demo/health/")
    assert response.status_code == 200
    broken = response.content.decode().split('id="kind-broken_link"')[1].split("</section>")[0]
    assert "demo-faulty-run:fragment" in broken and "demo-faulty-run:kb-fragment-404" in broken

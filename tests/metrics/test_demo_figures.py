"""Every figure Overview, Fuse rates and Uncertainty show for the demo, over
the windows the pages open on (and 24 h and 7 d), recomputed here in Python
from the raw node rows: the headline figures and their series, the per-agent
and per-round fuse decisions, and each distribution's count, mean, std and bars.
With the rollups built, and with nodes arriving after them."""

import io
import math
from collections import defaultdict
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import override_settings

from metrics.dashboards import distributions, fuses, overview
from metrics.filter_options import data_extent
from metrics.params import ChartParams, ChartParamsSerializer
from metrics.rollups.refresh import refresh_rollups
from metrics.rollups.schema import bin_of
from provenance.ingest.write import ingest_events
from provenance.models import FuseDecision, Node
from tenancy.models import Project
from tests.denoiseflow.servers import closed_port

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock(), override_settings(VAR_DIR=tmp_path_factory.mktemp("var")):
        try:
            call_command("load_demo", scale=0.1, port=closed_port(), stdout=io.StringIO())
            refresh_rollups()
            yield Project.objects.get(slug="demo")
        finally:
            call_command("flush", interactive=False, verbosity=0)


def page_windows(project) -> list:
    found = []
    for query in ({}, {"range": "24h"}, {"range": "7d"}):
        serializer = ChartParamsSerializer(data=query, context={"fit_to": lambda: data_extent(project)})
        serializer.is_valid(raise_exception=True)
        found.append(serializer.validated_data)
    return found


def production_nodes(project, params) -> list[dict]:
    nodes = Node.objects.filter(project=project, timestamp__gte=params.start, timestamp__lt=params.end,
                                trace__environment="production")
    return list(nodes.order_by("timestamp", "id").values(
        "trace_id", "agent_id", "step", "round", "confidence", "fuse_state", "is_error", "metrics", "timestamp"))


def headline(nodes: list[dict], threshold: float) -> dict:
    confidences = [n["confidence"] for n in nodes if n["confidence"] is not None]
    traces = {n["trace_id"] for n in nodes}
    low = {n["trace_id"] for n in nodes if n["confidence"] is not None and n["confidence"] < threshold}
    fused = [n for n in nodes if n["fuse_state"] == FuseDecision.BLOCK]
    runs = defaultdict(lambda: [0, 0])
    for n in nodes:
        run = runs[n["agent_id"]]
        run[0] = run[0] + 1 if n["fuse_state"] == FuseDecision.BLOCK else 0
        run[1] = max(run[1], run[0])
    total = len(nodes)
    return {
        "node_count": total, "trace_count": len(traces),
        "mean_confidence": sum(confidences) / len(confidences) if confidences else None,
        "high_uncertainty_ratio": len(low) / len(traces) if traces else 0.0,
        "fuse_rate": len(fused) / total if total else 0.0,
        "failure_rate": sum(1 for n in nodes if n["fuse_state"] == FuseDecision.BLOCK or n["is_error"]) / total
        if total else 0.0,
        "downweight_rate": sum(1 for n in nodes if n["fuse_state"] == FuseDecision.DOWNWEIGHT) / total if total else 0.0,
        "consecutive_fuses": max((best for _, best in runs.values()), default=0),
    }


def assert_close(found: dict, expected: dict, where) -> None:
    for name, value in expected.items():
        if value is None or found[name] is None:
            assert found[name] == value, (where, name)
        else:
            assert found[name] == pytest.approx(value, rel=1e-9, abs=1e-12), (where, name)


def check_overview(project, params) -> None:
    body = overview.build(project, params)
    nodes = production_nodes(project, params)
    assert_close(body["headline"]["current"], headline(nodes, project.high_uncertainty_threshold), "current")
    before = ChartParams(params.start - params.span, params.start)
    assert_close(body["headline"]["previous"], headline(production_nodes(project, before),
                                                         project.high_uncertainty_threshold), "previous")
    per_bucket = defaultdict(list)
    starts = [b[:19] for b in body["buckets"]]
    for n in nodes:
        key = max(b for b in starts if b <= n["timestamp"].strftime("%Y-%m-%dT%H:%M:%S"))
        per_bucket[key].append(n)
    for index, start in enumerate(starts):
        figures = headline(per_bucket[start], project.high_uncertainty_threshold)
        assert body["node_count"][index] == figures["node_count"], start
        assert body["trace_count"][index] == figures["trace_count"], start
        assert body["fuse_rate"][index] == pytest.approx(figures["fuse_rate"]), start


def check_fuses(project, params) -> None:
    body = fuses.build(project, params)
    nodes = production_nodes(project, params)
    by_agent = defaultdict(list)
    for n in nodes:
        by_agent[n["agent_id"]].append(n)
    assert {row["value"] for row in body["by_agent"]} == set(by_agent)
    for row in body["by_agent"]:
        figures = headline(by_agent[row["value"]], project.high_uncertainty_threshold)
        assert_close(row, {k: figures[k] for k in ("node_count", "fuse_rate", "consecutive_fuses")}, row["value"])
        assert row["fused"] == sum(1 for n in by_agent[row["value"]] if n["fuse_state"] == FuseDecision.BLOCK)
    by_round = defaultdict(list)
    for n in nodes:
        by_round["(none)" if n["round"] is None else str(n["round"]) if n["round"] <= 10 else "> 10"].append(n)
    assert {row["value"] for row in body["by_round"]} == set(by_round)
    for row in body["by_round"]:
        assert row["node_count"] == len(by_round[row["value"]]), row["value"]
        assert row["fused"] == sum(1 for n in by_round[row["value"]] if n["fuse_state"] == FuseDecision.BLOCK)


def check_distributions(project, params) -> None:
    body = distributions.build(project, params)
    values = defaultdict(list)
    for n in production_nodes(project, params):
        if n["confidence"] is not None:
            values[""].append(n["confidence"])
        for name, x in (n["metrics"] or {}).items():
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                values[name].append(x)
    assert {m["metric"] for m in body["metrics"]} == set(values)
    for metric in body["metrics"]:
        xs = values[metric["metric"]]
        shape = metric["overall"]["shape"]
        mean = sum(xs) / len(xs)
        assert shape["count"] == len(xs)
        assert shape["mean"] == pytest.approx(mean, rel=1e-9, abs=1e-12), metric["metric"]
        assert shape["std"] == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs)), rel=1e-6,
                                             abs=1e-9), metric["metric"]
        if all(float(x).is_integer() for x in xs):
            assert not shape["bimodal"], metric["metric"]
        bars = metric["overall"]["bars"]
        factor = round(bars["width"] / 0.05)
        # The 0.05 grid, a confidence of exactly 1 in the last bar, `factor` bins a bar.
        grid = [min(bin_of(x), 19) if metric["metric"] == "" else bin_of(x) for x in xs]
        for start, count in zip(bars["from"], bars["count"]):
            first = round(start / 0.05)
            assert count == sum(1 for b in grid if first <= b < first + factor), (metric["metric"], start)
        assert sum(bars["count"]) == len(xs)


def test_every_figure_of_the_demo_pages_is_the_raw_rows(demo):
    for params in page_windows(demo):
        check_overview(demo, params)
        check_fuses(demo, params)
        check_distributions(demo, params)


def test_and_still_after_new_nodes_arrive(demo):
    last = Node.objects.filter(project=demo).order_by("-timestamp").first()
    ingest_events(demo, [
        {"id": f"late-{i}", "type": "node", "timestamp": (last.timestamp - timedelta(minutes=i)).isoformat(),
         "body": {"trace_id": f"late-{i % 3}", "product_id": f"late-{i}", "agent_id": "late_agent",
                  "confidence": 0.1 * (i % 10), "metrics": {"samples": 5}, "round": 12,
                  **({"fuse": {"decision": "block", "reason": "late"}} if i % 2 else {})}} for i in range(30)])
    for params in page_windows(demo):
        check_overview(demo, params)
        check_fuses(demo, params)
        check_distributions(demo, params)

"""Evaluation runs: open one against a dataset version, judge results as they
arrive, finish it, and summarize it.

Results are judged once, on arrival, by `evals.judge`; a replacement for the
same item is judged again and takes its place. A batch is three statements
whatever its size: the run (locked, so a result never lands after finish), the
items it names, one multi-row upsert.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone

from evals.datasets import items_at
from evals.judge import judge
from evals.models import DatasetVersion, Result, Run, RunStatus
from evals.validation import Invalid
from evals.validation import result as parse_result

RESULT_WRITE_FIELDS = ("actual", "passed", "detail", "error", "trace_id", "product_id", "latency_ms", "escalated",
                       "received_at")


class RunFinished(Exception):
    pass


@dataclass(frozen=True)
class Judged:
    item_id: str
    status: int
    passed: bool | None = None
    message: str = ""

    def as_json(self) -> dict:
        entry = {"item_id": self.item_id, "status": self.status, "passed": bool(self.passed)}
        if self.message:
            entry["message"] = self.message
        return entry


def open_run(project, dataset, version: int | None, name: str = "", metadata: dict | None = None) -> Run:
    if version is None:
        version = dataset.version
    elif not 0 <= version <= dataset.version:
        raise Invalid("dataset_version", f"no version {version}: versions run from 0 to {dataset.version}")
    return Run.objects.create(project=project, dataset=dataset, dataset_version=version, name=name,
                              metadata=metadata or {})


def post_results(run: Run, values: list) -> list[Judged]:
    """Judges and stores a batch; one answer per entry, in the order given."""
    with transaction.atomic():
        status = Run.objects.select_for_update().filter(pk=run.pk).values_list("status", flat=True).get()
        if status == RunStatus.FINISHED:
            raise RunFinished(run.pk)
        parsed: list[dict | Judged] = []
        for index, value in enumerate(values):
            try:
                parsed.append(parse_result(value, f"results[{index}]"))
            except Invalid as error:
                item_id = value.get("item_id") if isinstance(value, dict) else None
                parsed.append(Judged(item_id if isinstance(item_id, str) else "", 400, message=str(error)))
        wanted = {p["item_id"] for p in parsed if isinstance(p, dict)}
        items = {
            row["item_id"]: row
            for row in items_at(run.dataset, run.dataset_version).filter(item_id__in=wanted)
            .values("item_id", "kind", "expected", "tolerance")
        }
        seen = set(run.results.filter(item_id__in=list(items)).values_list("item_id", flat=True))
        answers, rows, now = [], {}, timezone.now()
        for entry in parsed:
            if isinstance(entry, Judged):
                answers.append(entry)
                continue
            item = items.get(entry["item_id"])
            if item is None:
                answers.append(Judged(entry["item_id"], 404, message=(
                    f"item_id: no item {entry['item_id']!r} in version {run.dataset_version} of {run.dataset.name}")))
                continue
            verdict = judge(item["kind"], item["expected"], entry["actual"], item["tolerance"], entry["error"])
            replaced = entry["item_id"] in seen
            seen.add(entry["item_id"])
            answers.append(Judged(entry["item_id"], 200 if replaced else 201, verdict.passed))
            rows[entry["item_id"]] = Result(run=run, passed=verdict.passed, detail=verdict.detail, received_at=now,
                                            **entry)
        if rows:
            Result.objects.bulk_create(list(rows.values()), update_conflicts=True, unique_fields=["run", "item_id"],
                                       update_fields=list(RESULT_WRITE_FIELDS))
    return answers


def finish(run: Run) -> Run:
    """Closes the run; finishing a finished run changes nothing."""
    Run.objects.filter(pk=run.pk, status=RunStatus.OPEN).update(status=RunStatus.FINISHED, finished_at=timezone.now())
    run.refresh_from_db(fields=["status", "finished_at"])
    return run


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def run_json(run: Run, totals: dict | None = None) -> dict:
    """A run's identity and, given its totals, its headline figures."""
    data = {"id": run.pk, "dataset": run.dataset.name, "dataset_version": run.dataset_version, "name": run.name,
            "status": run.status, "metadata": run.metadata, "created_at": run.created_at,
            "finished_at": run.finished_at}
    if totals is not None:
        data.update(totals)
    return data


def totals(run: Run, total: int) -> dict:
    """The run's counts and rates, aggregated in the database."""
    found = run.results.aggregate(
        judged=Count("pk"), passed=Count("pk", filter=Q(passed=True)),
        escalated=Count("pk", filter=Q(escalated=True)), mean_latency_ms=Avg("latency_ms"),
    )
    return _figures(total, found["judged"], found["passed"], found["escalated"], found["mean_latency_ms"])


def _figures(total: int, judged: int, passed: int, escalated: int, mean_latency) -> dict:
    return {
        "total": total, "judged": judged, "passed": passed, "failed": judged - passed, "missing": total - judged,
        "accuracy": ratio(passed, total), "intervention_rate": ratio(escalated, judged), "escalated": escalated,
        "mean_latency_ms": mean_latency,
    }


RESULT_COLUMNS = ("item_id", "actual", "passed", "detail", "error", "trace_id", "product_id", "latency_ms",
                  "escalated")


def summary(run: Run) -> dict:
    """`GET /api/v1/runs/{id}`: figures, per-tag accuracy, every result with
    its expected value and trace, the missing and the drifted items."""
    items = list(items_at(run.dataset, run.dataset_version).values_list("item_id", "expected", "kind", "tags",
                                                                          "origin", "drifted"))
    results = list(run.results.order_by("item_id").values_list(*RESULT_COLUMNS))
    by_item = {row[0]: row for row in items}
    passed_ids = {row[0] for row in results if row[2]}
    latencies = [row[7] for row in results if row[7] is not None]
    figures = _figures(len(items), len(results), len(passed_ids), sum(1 for row in results if row[8]),
                       sum(latencies) / len(latencies) if latencies else None)
    by_tag: dict[str, dict] = {}
    for item_id, _, _, tags, _, _ in items:
        for tag in tags:
            entry = by_tag.setdefault(tag, {"total": 0, "passed": 0})
            entry["total"] += 1
            entry["passed"] += item_id in passed_ids
    for entry in by_tag.values():
        entry["accuracy"] = ratio(entry["passed"], entry["total"])
    judged_ids = set()
    listed = []
    for item_id, actual, passed, detail, error, trace_id, product_id, latency, escalated in results:
        judged_ids.add(item_id)
        _, expected, kind, tags, origin, drifted = by_item[item_id]
        listed.append({"item_id": item_id, "expected": expected, "actual": actual, "passed": passed,
                       "detail": detail, "trace_id": trace_id, "product_id": product_id, "latency_ms": latency,
                       "escalated": escalated, "error": error, "kind": kind, "tags": tags, "origin": origin,
                       "drifted": drifted})
    return {
        **run_json(run, figures),
        "by_tag": dict(sorted(by_tag.items())),
        "results": listed,
        "missing_items": sorted(set(by_item) - judged_ids),
        "drifted": sorted(item_id for item_id, *_, drifted in items if drifted),
    }


def runs_of(dataset):
    return Run.objects.filter(dataset=dataset).select_related("dataset").order_by("-created_at", "-pk")


def previous_finished(run: Run) -> Run | None:
    return (Run.objects.filter(dataset_id=run.dataset_id, status=RunStatus.FINISHED)
            .filter(Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk))
            .order_by("-created_at", "-pk").first())


def listing(runs: list[Run]) -> list[dict]:
    """Runs with their figures: two queries for a page of runs, whatever its length."""
    found = {
        row["run"]: row
        for row in Result.objects.filter(run__in=runs).values("run").annotate(
            judged=Count("pk"), passed=Count("pk", filter=Q(passed=True)),
            escalated=Count("pk", filter=Q(escalated=True)), mean_latency_ms=Avg("latency_ms"),
        )
    }
    sizes = {
        (dataset_id, number): count
        for dataset_id, number, count in DatasetVersion.objects.filter(
            dataset__in={r.dataset_id for r in runs}, number__in={r.dataset_version for r in runs}
        ).values_list("dataset_id", "number", "item_count")
    }
    listed = []
    for run in runs:
        row = found.get(run.pk, {"judged": 0, "passed": 0, "escalated": 0, "mean_latency_ms": None})
        figures = _figures(sizes.get((run.dataset_id, run.dataset_version), 0), row["judged"], row["passed"],
                           row["escalated"], row["mean_latency_ms"])
        listed.append(run_json(run, figures))
    return listed

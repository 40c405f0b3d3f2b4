"""Evaluation runs: open one against a dataset version, judge results as they
arrive, finish it, and summarize it.

Results are judged once, on arrival, by `evals.judge`; a replacement for the
same item is judged again and takes its place. A batch is three statements
whatever its size: the run (locked, so a result never lands after finish), the
items it names, one multi-row upsert.
"""

import json
from dataclasses import dataclass

import orjson
from django.db import connection, transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone

from core.bulk import bound_cursor, in_list, insert_many
from core.errors import ApiError
from evals import costs
from evals.datasets import in_version_sql
from evals.judge import judge
from evals.models import DatasetVersion, Item, Result, Run, RunStatus
from evals.validation import Invalid
from evals.validation import result as parse_result
from tenancy.colocation import same_project


class RunFinished(ApiError):
    status = 409

    def __init__(self, run_pk: int):
        super().__init__(f"run {run_pk} is finished: it takes no more results")


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
        status = (Run.objects.select_for_update().filter(project_id=run.project_id, id=run.pk)
                  .values_list("status", flat=True).get())
        if status == RunStatus.FINISHED:
            raise RunFinished(run.pk)
        parsed: list[dict | Judged] = []
        for index, value in enumerate(values):
            try:
                parsed.append(parse_result(value, f"results[{index}]"))
            except Invalid as error:
                item_id = value.get("item_id") if isinstance(value, dict) else None
                parsed.append(Judged(item_id if isinstance(item_id, str) else "", 400, message=str(error)))
        wanted = list({p["item_id"] for p in parsed if isinstance(p, dict)})
        items, seen = _items_and_seen(run, wanted)
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
            rows[entry["item_id"]] = (
                run.project_id, run.pk, entry["item_id"], _json_text(entry["actual"]), verdict.passed, verdict.detail, entry["error"],
                entry["trace_id"], entry["product_id"], entry["latency_ms"], entry["escalated"],
                connection.ops.adapt_datetimefield_value(now),
            )
        _upsert(list(rows.values()))
    return answers


def _items_and_seen(run: Run, item_ids: list[str]) -> tuple[dict, set]:
    """The batch's items in the run's version (kind, expected, tolerance) and
    the ids that already have a result: two statements, the id list bound once."""
    if not item_ids:
        return {}, set()
    membership, params = in_list(item_ids)
    with bound_cursor() as cursor:
        cursor.execute(
            "SELECT item_id, kind, CAST(expected AS TEXT), CAST(tolerance AS TEXT) FROM evals_item i"
            f" WHERE {in_version_sql('i')} AND i.item_id " + membership,
            [run.project_id, run.dataset_id, run.dataset_version, run.dataset_version, *params],
        )
        items = {
            # json, not orjson: an integer beyond 64 bits must stay exact for the judge.
            item_id: {"kind": kind, "expected": None if expected is None else json.loads(expected),
                      "tolerance": None if tolerance is None else json.loads(tolerance)}
            for item_id, kind, expected, tolerance in cursor.fetchall()
        }
        membership, params = in_list(list(items))
        seen = set()
        if items:
            cursor.execute("SELECT item_id FROM evals_result WHERE project_id = %s AND run_id = %s AND item_id "
                           + membership, [run.project_id, run.pk, *params])
            seen = {row[0] for row in cursor.fetchall()}
    return items, seen


RESULT_COLUMNS = ["project_id", "run_id", "item_id", "actual", "passed", "detail", "error", "trace_id", "product_id",
                  "latency_ms", "escalated", "received_at"]
RESULT_TYPES = ["bigint", "bigint", "varchar", "jsonb", "boolean", "text", "text", "varchar", "varchar", "float8", "boolean",
                "timestamptz"]
UPSERT = "ON CONFLICT (run_id, item_id, project_id) DO UPDATE SET " + ", ".join(
    f"{column} = EXCLUDED.{column}" for column in RESULT_COLUMNS[3:])


def _upsert(rows: list[tuple]) -> None:
    """One multi-row insert-or-replace (COPY and one INSERT … SELECT on PostgreSQL)."""
    insert_many("evals_result", RESULT_COLUMNS, RESULT_TYPES, rows, on_conflict=UPSERT)


def _json_text(value) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits: orjson refuses what json writes
        return json.dumps(value)


def finish(run: Run) -> Run:
    """Closes the run; finishing a finished run changes nothing."""
    Run.objects.filter(project_id=run.project_id, id=run.pk, status=RunStatus.OPEN).update(
        status=RunStatus.FINISHED, finished_at=timezone.now())
    run.refresh_from_db(fields=["status", "finished_at"])
    return run


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def totals(run: Run, total: int) -> dict:
    """The run's counts and rates, aggregated in the database."""
    found = Result.objects.filter(project_id=run.project_id, run=run).aggregate(
        judged=Count("pk"), passed=Count("pk", filter=Q(passed=True)),
        escalated=Count("pk", filter=Q(escalated=True)), mean_latency_ms=Avg("latency_ms"),
    )
    return _figures(total, found["judged"], found["passed"], found["escalated"], found["mean_latency_ms"])


def trade_off_figures(run: Run, total: int) -> dict:
    """The run's side of a comparison's trade-off table: accuracy, escalations,
    fuse rate, p95 latency and what it cost (evals.costs)."""
    figures = totals(run, total)
    latencies = list(Result.objects.filter(project_id=run.project_id, run=run).exclude(latency_ms=None).values_list("latency_ms", flat=True))
    return {**figures, **costs.trade_off(costs.trace_costs(run), figures["passed"], latencies)}


def _figures(total: int, judged: int, passed: int, escalated: int, mean_latency) -> dict:
    return {
        "total": total, "judged": judged, "passed": passed, "failed": judged - passed, "missing": total - judged,
        "accuracy": ratio(passed, total), "intervention_rate": ratio(escalated, judged), "escalated": escalated,
        "mean_latency_ms": mean_latency,
    }


# One pass over the version's items with their results, JSON read as text:
# decoding 20,000 JSON values through Django's JSONField and building model
# rows costs more than the query itself (PostgreSQL and SQLite alike).
SUMMARY_SQL = f"""
SELECT i.item_id, CAST(i.expected AS TEXT), i.kind, CAST(i.tags AS TEXT), i.origin, i.drifted,
       r.id, CAST(r.actual AS TEXT), r.passed, r.detail, r.error, r.trace_id, r.product_id, r.latency_ms,
       r.escalated
FROM evals_item i
LEFT JOIN evals_result r ON r.project_id = i.project_id AND r.run_id = %s AND r.item_id = i.item_id
WHERE {in_version_sql("i")}
"""


def summary(run: Run, *, raw: bool = False) -> dict:
    """What `GET /api/v1/runs/{id}` shows beside the run (evals.api_json):
    `figures`, per-tag accuracy, every result with its expected value and
    trace, the missing and the drifted items. With
    `raw`, expected and actual values stay JSON text (orjson fragments) for an
    answer written straight out with orjson."""
    decode = orjson.Fragment if raw else orjson.loads
    with connection.cursor() as cursor:
        cursor.execute(SUMMARY_SQL, [run.pk, run.project_id, run.dataset_id, run.dataset_version, run.dataset_version])
        rows = cursor.fetchall()
    rows.sort()  # by item id; in Python, where it costs a fraction of a collated ORDER BY
    by_tag: dict[str, list[int]] = {}
    listed, missing, drifted_ids = [], [], []
    passed = escalated = 0
    latencies = []
    for (item_id, expected, kind, tags, origin, drifted, result_id, actual, ok, detail, error, trace_id, product_id,
         latency, was_escalated) in rows:
        tags = orjson.loads(tags)
        ok = bool(ok)
        if drifted:
            drifted_ids.append(item_id)
        for tag in tags:
            counts = by_tag.setdefault(tag, [0, 0])
            counts[0] += 1
            counts[1] += ok
        if result_id is None:
            missing.append(item_id)
            continue
        passed += ok
        escalated += bool(was_escalated)
        if latency is not None:
            latencies.append(latency)
        listed.append({"item_id": item_id, "expected": None if expected is None else decode(expected),
                       "actual": None if actual is None else decode(actual), "passed": ok, "detail": detail,
                       "trace_id": trace_id, "product_id": product_id, "latency_ms": latency,
                       "escalated": bool(was_escalated), "error": error, "kind": kind, "tags": tags,
                       "origin": origin, "drifted": bool(drifted)})
    figures = _figures(len(rows), len(listed), passed, escalated, sum(latencies) / len(latencies) if latencies else None)
    traces = costs.trace_costs(run)
    for result in listed:
        found = traces.get(result["trace_id"])
        result["cost_usd"] = found.cost_usd if found else None
    figures.update(costs.trade_off(traces, passed, latencies))
    return {
        "figures": figures,
        "by_tag": {tag: {"total": total, "passed": ok, "accuracy": ratio(ok, total)}
                   for tag, (total, ok) in sorted(by_tag.items())},
        "results": listed,
        "missing_items": missing,
        "drifted": drifted_ids,
    }


def runs_of(dataset):
    return (Run.objects.filter(same_project("dataset"), project_id=dataset.project_id, dataset=dataset)
            .select_related("dataset").order_by("-created_at", "-pk"))


def previous_finished(run: Run) -> Run | None:
    return (Run.objects.filter(project_id=run.project_id, dataset_id=run.dataset_id, status=RunStatus.FINISHED)
            .filter(Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk))
            .order_by("-created_at", "-pk").first())


def figures_of(runs: list[Run]) -> dict[int, dict]:
    """Run pk -> its figures: two queries for a page of runs, whatever its length."""
    found = {
        row["run"]: row
        for row in Result.objects.filter(project_id__in={r.project_id for r in runs}, run__in=runs).values("run").annotate(
            judged=Count("pk"), passed=Count("pk", filter=Q(passed=True)),
            escalated=Count("pk", filter=Q(escalated=True)), mean_latency_ms=Avg("latency_ms"),
        )
    }
    sizes = {
        (dataset_id, number): count
        for dataset_id, number, count in DatasetVersion.objects.filter(
            project_id__in={r.project_id for r in runs}, dataset__in={r.dataset_id for r in runs}, number__in={r.dataset_version for r in runs}
        ).values_list("dataset_id", "number", "item_count")
    }
    figures = {}
    for run in runs:
        row = found.get(run.pk, {"judged": 0, "passed": 0, "escalated": 0, "mean_latency_ms": None})
        figures[run.pk] = _figures(sizes.get((run.dataset_id, run.dataset_version), 0), row["judged"],
                                   row["passed"], row["escalated"], row["mean_latency_ms"])
    return figures


def finished_accuracies(project, dataset_name: str, as_of=None, count: int = 2) -> list[float | None]:
    """Accuracy of the newest finished runs of a dataset (finished by `as_of`),
    newest first: what the `eval_accuracy` alert metric reads."""
    found = Run.objects.filter(same_project("dataset"), project=project, dataset__name=dataset_name,
                               status=RunStatus.FINISHED)
    if as_of is not None:
        found = found.filter(finished_at__lte=as_of)
    newest = list(found.select_related("dataset").order_by("-finished_at", "-pk")[:count])
    figures = figures_of(newest)
    return [figures[run.pk]["accuracy"] for run in newest]


def case_of_trace(project, trace_id: str) -> dict | None:
    """The evaluation case a trace recorded (the newest result naming it): its
    run, the verdict, the expected and the actual answer; None for any other trace."""
    result = (Result.objects.filter(same_project("run", "run__dataset"), project=project, trace_id=trace_id).select_related("run", "run__dataset")
              .order_by("-received_at", "-pk").first())
    if result is None:
        return None
    run = result.run
    item = (Item.objects.filter(project_id=run.project_id, dataset_id=run.dataset_id, item_id=result.item_id, since__lte=run.dataset_version)
            .filter(Q(until__isnull=True) | Q(until__gt=run.dataset_version)).order_by("-since").first())
    return {"run": run, "item_id": result.item_id, "passed": result.passed, "escalated": result.escalated,
            "expected": item.expected if item else None, "actual": result.actual, "detail": result.detail,
            "error": result.error}

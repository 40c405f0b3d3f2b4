"""What the evals API (and the pages, which show the same) answers for a
dataset, its items and a run, as plain data (their JSON Schemas are in
evals.api_shapes); the figures come from evals.datasets and evals.runs."""

from evals import datasets, runs
from evals.models import Dataset, Item, Run


def item_json(row: Item) -> dict:
    return {"id": row.item_id, "input": row.input, "expected": row.expected, "kind": row.kind, "tags": row.tags,
            "origin": row.origin, "tolerance": row.tolerance, "drifted": row.drifted}


def dataset_json(dataset: Dataset, item_count: int | None = None) -> dict:
    data = {"name": dataset.name, "description": dataset.description, "version": dataset.version,
            "created_at": dataset.created_at, "updated_at": dataset.updated_at}
    if item_count is not None:
        data["item_count"] = item_count
    return data


def datasets_json(page: list[Dataset]) -> list[dict]:
    """Datasets with their newest version's item count and drifted count."""
    counts = datasets.newest_counts(page)
    return [{**dataset_json(d, counts[d.pk][0]), "drifted_count": counts[d.pk][1]} for d in page]


def run_json(run: Run, totals: dict | None = None) -> dict:
    """A run's identity and, given its totals, its headline figures."""
    data = {"id": run.pk, "dataset": run.dataset.name, "dataset_version": run.dataset_version, "name": run.name,
            "status": run.status, "metadata": run.metadata, "created_at": run.created_at,
            "finished_at": run.finished_at}
    if totals is not None:
        data.update(totals)
    return data


def runs_json(page: list[Run]) -> list[dict]:
    """Runs with their figures."""
    figures = runs.figures_of(page)
    return [run_json(run, figures[run.pk]) for run in page]


def summary_json(run: Run, *, raw: bool = False) -> dict:
    """`GET /api/v1/runs/{id}`: the run with its figures, per-tag accuracy and
    results (evals.runs.summary; `raw` as there)."""
    found = runs.summary(run, raw=raw)
    return {**run_json(run, found.pop("figures")), **found}

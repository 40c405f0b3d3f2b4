"""Comparing two runs of a dataset: the regression check before a release.

A missing result counts as failing, as it does in a run's accuracy.
"""

from django.db import connection

from evals.datasets import in_version_sql
from evals.models import Run
from evals.runs import ratio

OUTCOMES_SQL = f"""
SELECT i.item_id, r.passed
FROM evals_item i
LEFT JOIN evals_result r ON r.run_id = %s AND r.item_id = i.item_id
WHERE {in_version_sql("i")}
"""


def outcomes(run: Run) -> dict[str, bool]:
    """Every item of the run's version: whether its result passed (no result: False)."""
    with connection.cursor() as cursor:
        cursor.execute(OUTCOMES_SQL, [run.pk, run.dataset_id, run.dataset_version, run.dataset_version])
        return {item_id: bool(passed) for item_id, passed in cursor.fetchall()}


def compare(run: Run, other: Run) -> dict:
    """`GET /api/v1/runs/{id}/compare?to={other}`: what got fixed and broken
    from `other` to `run`, over the items both versions hold."""
    here, there = outcomes(run), outcomes(other)
    shared = here.keys() & there.keys()
    accuracy_here = ratio(sum(here.values()), len(here))
    accuracy_there = ratio(sum(there.values()), len(there))
    delta = None if accuracy_here is None or accuracy_there is None else accuracy_here - accuracy_there
    return {
        "run": run.pk, "to": other.pk,
        "accuracy": accuracy_here, "accuracy_there": accuracy_there, "accuracy_delta": delta,
        "fixed": sorted(i for i in shared if here[i] and not there[i]),
        "broken": sorted(i for i in shared if there[i] and not here[i]),
        "still_failing": sorted(i for i in shared if not here[i] and not there[i]),
        "still_passing": sum(1 for i in shared if here[i] and there[i]),
        "only_here": sorted(here.keys() - there.keys()),
        "only_there": sorted(there.keys() - here.keys()),
    }

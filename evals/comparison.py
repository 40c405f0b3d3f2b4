"""Comparing two runs of a dataset: the regression check before a release.

A missing result counts as failing, as it does in a run's accuracy.
"""

from evals.datasets import items_at
from evals.models import Run
from evals.runs import ratio


def compare(run: Run, other: Run) -> dict:
    """`GET /api/v1/runs/{id}/compare?to={other}`: what got fixed and broken
    from `other` to `run`, over the items both versions hold."""
    here_items = set(items_at(run.dataset, run.dataset_version).values_list("item_id", flat=True))
    there_items = (here_items if other.dataset_version == run.dataset_version
                   else set(items_at(other.dataset, other.dataset_version).values_list("item_id", flat=True)))
    here = set(run.results.filter(passed=True).values_list("item_id", flat=True))
    there = set(other.results.filter(passed=True).values_list("item_id", flat=True))
    shared = here_items & there_items
    accuracy_here, accuracy_there = ratio(len(here), len(here_items)), ratio(len(there), len(there_items))
    delta = None if accuracy_here is None or accuracy_there is None else accuracy_here - accuracy_there
    return {
        "run": run.pk, "to": other.pk,
        "accuracy": accuracy_here, "accuracy_there": accuracy_there, "accuracy_delta": delta,
        "fixed": sorted(i for i in shared if i in here and i not in there),
        "broken": sorted(i for i in shared if i in there and i not in here),
        "still_failing": sorted(i for i in shared if i not in here and i not in there),
        "still_passing": len([i for i in shared if i in here and i in there]),
        "only_here": sorted(here_items - there_items),
        "only_there": sorted(there_items - here_items),
    }

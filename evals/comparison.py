"""Comparing two runs of a dataset: the regression check before a release.

A missing result counts as failing, as it does in a run's accuracy.
"""

from core.replica import reading_connection
from evals.datasets import in_version_sql
from evals.models import Run
from evals.runs import ratio, trade_off_figures

# The trade-off table's rows: what certainty bought and what it cost, with
# how each is shown (share, count, ms, usd) and whether more is better.
TRADE_OFF_ROWS = (
    ("accuracy", "Accuracy", "share", True),
    ("fuse_rate", "Fuse rate", "share", None),
    ("escalated", "Escalations (people's work)", "count", False),
    ("p95_latency_ms", "p95 latency", "ms", False),
    ("cost_per_trace", "Cost per trace", "usd", False),
    ("cost_per_passed", "Cost per correct answer", "usd", False),
    ("cost_usd", "Cost", "usd", False),
)
TRADE_OFF = tuple(name for name, *_ in TRADE_OFF_ROWS) + ("intervention_rate",)

OUTCOMES_SQL = f"""
SELECT i.item_id, r.passed
FROM evals_item i
LEFT JOIN evals_result r ON r.project_id = i.project_id AND r.run_id = %s AND r.item_id = i.item_id
WHERE {in_version_sql("i")}
"""


def outcomes(run: Run) -> dict[str, bool]:
    """Every item of the run's version: whether its result passed (no result: False)."""
    with reading_connection().cursor() as cursor:
        cursor.execute(OUTCOMES_SQL, [run.pk, run.project_id, run.dataset_id, run.dataset_version, run.dataset_version])
        return {item_id: bool(passed) for item_id, passed in cursor.fetchall()}


def compare(run: Run, other: Run) -> dict:
    """`GET /api/v1/runs/{id}/compare?to={other}`: what got fixed and broken
    from `other` to `run`, over the items both versions hold."""
    here, there = outcomes(run), outcomes(other)
    shared = here.keys() & there.keys()
    accuracy_here = ratio(sum(here.values()), len(here))
    accuracy_there = ratio(sum(there.values()), len(there))
    delta = None if accuracy_here is None or accuracy_there is None else accuracy_here - accuracy_there
    table = {"here": trade_off_figures(run, len(here)), "there": trade_off_figures(other, len(there))}
    return {
        "trade_off": {side: {name: figures[name] for name in TRADE_OFF} for side, figures in table.items()},
        **{f"{name}_delta": difference(table["here"][name], table["there"][name])
           for name in ("cost_usd", "cost_per_passed", "cost_per_trace", "p95_latency_ms", "fuse_rate")},
        "run": run.pk, "to": other.pk,
        "accuracy": accuracy_here, "accuracy_there": accuracy_there, "accuracy_delta": delta,
        "fixed": sorted(i for i in shared if here[i] and not there[i]),
        "broken": sorted(i for i in shared if there[i] and not here[i]),
        "still_failing": sorted(i for i in shared if not here[i] and not there[i]),
        "still_passing": sum(1 for i in shared if here[i] and there[i]),
        "only_here": sorted(here.keys() - there.keys()),
        "only_there": sorted(there.keys() - here.keys()),
    }


def difference(here, there):
    return None if here is None or there is None else here - there


def trade_off_rows(table: dict) -> list[dict]:
    """The comparison page's trade-off table, one row per figure: before
    (`there`), after (`here`), the change, and whether it is better."""
    rows = []
    for name, label, shown_as, more_is_better in TRADE_OFF_ROWS:
        here, there = table["here"][name], table["there"][name]
        change = difference(here, there)
        better = None if change in (None, 0) or more_is_better is None else (change > 0) == more_is_better
        rows.append({"name": name, "label": label, "shown_as": shown_as, "here": here, "there": there,
                     "change": change, "better": better})
    return rows

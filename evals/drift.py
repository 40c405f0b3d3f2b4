"""Truth drift: an expected value the source of truth no longer agrees with.

`POST /api/v1/datasets/{name}/recheck` sends the current true values; an item
whose current value would not pass against its expected one (by the same
judge and tolerance as a run's result) is marked drifted until it is updated,
which makes a new row without the mark.
"""

from django.db import transaction
from django.utils import timezone

from evals.datasets import items_at
from evals.judge import judge
from evals.models import Dataset, Item
from evals.validation import Invalid


def recheck(dataset: Dataset, values: list[tuple[str, object]]) -> list[str]:
    """Marks the newest version's items whose current true value would not pass
    against their expected one as drifted (and clears the mark of those that
    pass again); returns the drifted ids in the order given. Changes no version."""
    with transaction.atomic():
        locked = Dataset.objects.select_for_update().get(project_id=dataset.project_id, pk=dataset.pk)
        rows = {row.item_id: row for row in items_at(locked).filter(item_id__in=[item_id for item_id, _ in values])}
        for index, (item_id, _) in enumerate(values):
            if item_id not in rows:
                raise Invalid(f"values[{index}].item_id", f"no item {item_id!r} in version {locked.version}")
        now = timezone.now()
        drifted, changed = [], {}
        for item_id, current in values:
            row = rows[item_id]
            passes = judge(row.kind, row.expected, current, row.tolerance).passed
            if not passes:
                drifted.append(item_id)
            if passes != (not row.drifted) or (not passes and row.drift_current != current):
                row.drifted, row.drift_current = not passes, None if passes else current
                row.drifted_at = None if passes else now
                changed[row.pk] = row
        if changed:
            Item.objects.bulk_update(list(changed.values()), ["drifted", "drift_current", "drifted_at"], batch_size=500)
    return list(dict.fromkeys(drifted))

"""Truth sets with versions: every change is a new version, every version reads
as it was, a rollback is a new version equal to an old one.

An item's forms are rows with a validity span `[since, until)`: a change closes
the current row (`until` = the new version) and adds the new form, so a change
of n items is two statements (one UPDATE, one multi-row INSERT) and a version
is read with one range query. A call that changes nothing makes no version.
"""

import json
from dataclasses import asdict, dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from core.errors import ApiError
from evals.models import Dataset, DatasetVersion, Item
from evals.validation import Invalid
from tenancy import audit

CONTENT_FIELDS = ("input", "expected", "kind", "tags", "origin", "tolerance")


class NameTaken(ApiError):
    status = 409

    def __init__(self, name: str):
        super().__init__(f"a dataset named {name!r} already exists in this project", fields={"name": "already taken"})


class NoSuchItem(ApiError):
    status = 404

    def __init__(self, dataset_name: str, item_id: str):
        super().__init__(f"item {item_id!r} in {dataset_name!r} not found")


@dataclass(frozen=True)
class Change:
    version: int
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0

    def as_json(self) -> dict:
        return asdict(self)


# How each kind of new version reads in the audit log.
AUDIT_ACTIONS = {"delete": "dataset.item_delete", "rollback": "dataset.rollback", "import": "dataset.import"}


def _object(dataset: Dataset) -> tuple:
    return ("dataset", dataset.pk, f"dataset {dataset.name}")


def create_dataset(project, name: str, description: str = "", actor=None) -> Dataset:
    try:
        with transaction.atomic():
            dataset = Dataset.objects.create(project=project, name=name, description=description)
            DatasetVersion.objects.create(project=project, dataset=dataset, number=0, action="created", note="created empty")
            audit.record(project, actor, "dataset.create", _object(dataset), before={},
                         after={"name": name, "description": description, "version": 0})
    except IntegrityError:
        raise NameTaken(name) from None
    return dataset


def items_at(dataset: Dataset, version: int | None = None):
    """The item rows of `version` (default: the newest)."""
    rows = Item.objects.filter(project_id=dataset.project_id, dataset=dataset)
    if version is None or version == dataset.version:
        return rows.filter(until__isnull=True)
    return rows.filter(since__lte=version).filter(Q(until__isnull=True) | Q(until__gt=version))


def in_version_sql(alias: str) -> str:
    """`items_at`'s filter for raw SQL over `evals_item` as `alias`; its
    parameters are (project id, dataset id, version, version)."""
    return f"{alias}.project_id = %s AND {alias}.dataset_id = %s AND {alias}.since <= %s AND ({alias}.until IS NULL OR {alias}.until > %s)"


def _content(values: dict) -> str:
    return json.dumps([values[f] for f in CONTENT_FIELDS], sort_keys=True, separators=(",", ":"))


def _row_content(row: Item) -> str:
    return _content({f: getattr(row, f) for f in CONTENT_FIELDS})


def apply_items(dataset: Dataset, items: list[dict], *, remove_others: bool = False, action: str = "items",
                note: str = "", actor=None) -> Change:
    """Adds or replaces `items` (validated, see evals.validation.items); with
    `remove_others` the newest version holds exactly these items."""
    with transaction.atomic():
        locked = Dataset.objects.select_for_update().get(project_id=dataset.project_id, id=dataset.pk)
        current_rows = items_at(locked)
        if not remove_others:
            current_rows = current_rows.filter(item_id__in=[item["id"] for item in items])
        current = {row.item_id: row for row in current_rows}
        version = locked.version + 1
        closed, added = [], []
        created = updated = unchanged = 0
        for item in items:
            row = current.get(item["id"])
            if row is not None and _row_content(row) == _content(item):
                unchanged += 1
                continue
            if row is None:
                created += 1
            else:
                updated += 1
                closed.append(row.pk)
            added.append(Item(project_id=locked.project_id, dataset=locked, item_id=item["id"], since=version,
                              **{f: item[f] for f in CONTENT_FIELDS}))
        wanted = {item["id"] for item in items}
        removed = [row.pk for item_id, row in current.items() if item_id not in wanted] if remove_others else []
        closed += removed
        if not closed and not added:
            return Change(locked.version, unchanged=unchanged)
        return _commit(locked, version, closed, added, Change(version, created, updated, unchanged, len(removed)),
                       action, note, actor)


def delete_item(dataset: Dataset, item_id: str, actor=None) -> Change:
    with transaction.atomic():
        locked = Dataset.objects.select_for_update().get(project_id=dataset.project_id, id=dataset.pk)
        row = items_at(locked).filter(item_id=item_id).first()
        if row is None:
            raise NoSuchItem(dataset.name, item_id)
        version = locked.version + 1
        return _commit(locked, version, [row.pk], [], Change(version, deleted=1), "delete", f"removed {item_id}",
                       actor)


def rollback(dataset: Dataset, version: int, actor=None) -> Change:
    if not 0 <= version <= dataset.version:
        raise Invalid("version", f"no version {version}: versions run from 0 to {dataset.version}")
    target = [{"id": row.item_id, **{f: getattr(row, f) for f in CONTENT_FIELDS}}
              for row in items_at(dataset, version)]
    return apply_items(dataset, target, remove_others=True, action="rollback", note=f"rollback to version {version}",
                       actor=actor)


def _commit(dataset: Dataset, version: int, closed: list[int], added: list[Item], change: Change, action: str,
            note: str, actor=None) -> Change:
    if closed:
        Item.objects.filter(project_id=dataset.project_id, pk__in=closed).update(until=version)
    Item.objects.bulk_create(added, batch_size=500)
    previous = DatasetVersion.objects.filter(project_id=dataset.project_id, dataset=dataset, number=dataset.version).values_list(
        "item_count", flat=True).first() or 0
    now = timezone.now()
    count = previous + change.created - change.deleted
    DatasetVersion.objects.create(
        project_id=dataset.project_id, dataset=dataset, number=version, action=action, note=note[:300], created=change.created,
        updated=change.updated, deleted=change.deleted, item_count=count, created_at=now,
    )
    Dataset.objects.filter(project_id=dataset.project_id, id=dataset.pk).update(version=version, updated_at=now)
    audit.record(dataset.project_id, actor, AUDIT_ACTIONS.get(action, "dataset.update"), _object(dataset),
                 before={"version": dataset.version, "item_count": previous},
                 after={"version": version, "item_count": count},
                 extra={"note": note[:300], "created": change.created, "updated": change.updated,
                        "deleted": change.deleted})
    dataset.version, dataset.updated_at = version, now
    return change


def item_count(dataset: Dataset, version: int | None = None) -> int:
    number = dataset.version if version is None else version
    found = DatasetVersion.objects.filter(project_id=dataset.project_id, dataset=dataset, number=number).values_list("item_count", flat=True).first()
    return found if found is not None else items_at(dataset, version).count()


def version_changes(dataset: Dataset, limit: int = 100) -> list[DatasetVersion]:
    return list(DatasetVersion.objects.filter(project_id=dataset.project_id, dataset=dataset).order_by("-number")[:limit])


def newest_counts(datasets: list[Dataset]) -> dict[int, tuple[int, int]]:
    """Dataset pk -> (its newest version's item count, drifted count): two queries for a page."""
    counts = {
        (dataset_id, number): count
        for dataset_id, number, count in DatasetVersion.objects.filter(
            project_id__in={d.project_id for d in datasets}, dataset__in=datasets, number__in={d.version for d in datasets}
        ).values_list("dataset_id", "number", "item_count")
    }
    drifted = dict(
        Item.objects.filter(project_id__in={d.project_id for d in datasets}, dataset__in=datasets, until__isnull=True, drifted=True)
        .values("dataset").annotate(n=Count("pk")).values_list("dataset", "n")
    )
    return {d.pk: (counts.get((d.pk, d.version), 0), drifted.get(d.pk, 0)) for d in datasets}

"""How far the rollups have read, and whether a project's hour rollups are
usable (built, at the project's current high-uncertainty threshold)."""

from dataclasses import dataclass

from core.replica import reading_connection
from metrics.models import RolledProject, Watermark


@dataclass(frozen=True)
class Marks:
    """Every node with id <= node, fuse with id <= fuse, review with id <=
    review and escalation with id <= escalation is in the rollups; `rolled_threshold` is the threshold the
    project's hour rollups were built with (None: not built)."""

    node: int = 0
    fuse: int = 0
    review: int = 0
    escalation: int = 0
    rolled_threshold: float | None = None


def read_marks(project=None) -> Marks:
    # Without a project the marks alone: a join on no project would still be
    # sent to every shard under Citus.
    rolled = (f"(SELECT r.threshold FROM {RolledProject._meta.db_table} r WHERE r.project_id = %s)"
              if project is not None else "NULL")
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT w.node_id, w.fuse_id, w.review_id, w.escalation_id, {rolled} FROM {Watermark._meta.db_table} w "
            "WHERE w.id = 1",
            [project.pk] if project is not None else [],
        )
        row = cursor.fetchone()
    return Marks(*row) if row else Marks()

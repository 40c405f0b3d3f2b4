"""Citus co-location (docs/scaling.md): every project table is distributed by
project_id, so a join between two of them stays on one shard only when it
equates their project_id. A foreign key joins on the id alone; these filters
add the project to the join."""

from django.db.models import F, OuterRef, Q


def same_project(*relations: str) -> Q:
    """Joins each relation (a path of foreign keys from the queried model, e.g.
    "trace" or "rule__project") on the row's own project_id."""
    return Q(**{f"{relation}__project_id": F("project_id") for relation in relations})


def in_outer_project(**lookups) -> Q:
    """The filter of a correlated subquery: the outer row's project, and the
    lookups (whose OuterRef joins the two)."""
    return Q(project_id=OuterRef("project_id"), **lookups)

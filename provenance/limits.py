"""Limits the health check judges by but does not own: the fuse policy's
round limit lives in the `policy` app, which provenance never imports. That
app registers a source here when it loads (PolicyConfig.ready); without one,
no round limit is checked."""

from collections.abc import Callable

_round_limit: Callable[[int], int | None] | None = None


def set_round_limit_source(source: Callable[[int], int | None] | None) -> None:
    """`source(project_pk)` answers the project's max_rounds (or None: no limit)."""
    global _round_limit
    _round_limit = source


def round_limit(project_pk: int) -> int | None:
    return _round_limit(project_pk) if _round_limit is not None else None

"""The round limit the health check judges by but does not own: the fuse
policy's round limit lives in the `policy` app, which provenance never imports. That
app registers a source here when it loads (PolicyConfig.ready); without one,
the default policy's round limit applies, the one metrics counts breaches
against when not given another (metrics.windows.fuse_loop)."""

from collections.abc import Callable

from provenance.vocabulary import DEFAULT_ROUND_LIMIT

_round_limit: Callable[[int], int] | None = None


def set_round_limit_source(source: Callable[[int], int] | None) -> None:
    """`source(project_pk)` answers the project's max_rounds (None: back to the default)."""
    global _round_limit
    _round_limit = source


def round_limit(project_pk: int) -> int:
    return _round_limit(project_pk) if _round_limit is not None else DEFAULT_ROUND_LIMIT

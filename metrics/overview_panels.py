"""Panels of the Overview page that other apps fill: `metrics` never imports
the apps that read it (alerts, policy, evals), so they register what they
show here from their AppConfig.ready(), as healthchecks' integrations do.

A provider takes the project and returns a list of rows, each a dict with
`title`, `state`, `at` (a datetime) and `url`; an absent provider shows
the panel's empty state."""

from collections.abc import Callable

_providers: dict[str, Callable] = {}


def register(panel: str, provider: Callable) -> None:
    _providers[panel] = provider


def rows(panel: str, project) -> list[dict] | None:
    """The panel's rows, or None when no app provides it."""
    provider = _providers.get(panel)
    return None if provider is None else provider(project)

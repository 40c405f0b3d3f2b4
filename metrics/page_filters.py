"""The metrics pages' text filters (agent, step, source type, model) as typed
resolved against the values the project's data holds (core.filter_values): a
prefix becomes the values it starts, read from the rollups with IN. The API
takes exact values only, as the contract says; it never comes here."""

from dataclasses import replace

from core import filter_values
from metrics.params import ChartParams

TEXT_FILTERS = ("agent_id", "step", "source_type", "model")


def resolve(params: ChartParams, options: dict) -> tuple[ChartParams, dict[str, filter_values.Resolved]]:
    """`params` filtering by what each typed value resolves to, and the resolutions (for the widgets)."""
    resolved = {name: filter_values.resolve(getattr(params.filters, name), options.get(name, ()))
                for name in TEXT_FILTERS}
    filters = replace(params.filters, **{name: found.filter_value for name, found in resolved.items()})
    return replace(params, filters=filters), resolved

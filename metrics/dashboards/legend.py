"""Which series a chart names in its legend: the LEGEND_SERIES groups with
the most volume, and one series for the rest taken together. Each chart
pools its own figure the way the figure adds up (counts and sums add, a rate
is the rate of the added counts, a percentile is ranked over the pooled
values), never by adding up the groups' figures: sixteen agents read as nine
lines that still tell the truth."""

from metrics.dashboards.series import display_order

LEGEND_SERIES = 8

PLURALS = {"agent_id": "agents", "step": "steps", "model": "models", "source_type": "source types", "round": "rounds"}


def split(volumes: dict) -> tuple[list, list]:
    """(the groups drawn on their own, the groups pooled), each in display
    order, from {group value: volume}. Nothing is pooled when at most one
    group would be: an "others" of one is that group under a vaguer name."""
    if len(volumes) <= LEGEND_SERIES + 1:
        return sorted(volumes, key=display_order), []
    ranked = sorted(volumes, key=lambda value: (-volumes[value], display_order(value)))
    return sorted(ranked[:LEGEND_SERIES], key=display_order), sorted(ranked[LEGEND_SERIES:], key=display_order)


def others_name(pooled: list, by: str) -> str:
    return f"{len(pooled)} other {PLURALS.get(by, 'groups')}"

"""The one confidence color scale of the product: red 0 → amber 0.5 → green 1.

Charts get the stops as a Plotly colorscale; tables get the interpolated color
of a value, so a 0.42 is the same color in a chip as on the graph.
"""

SCALE = ((0.0, (0xD7, 0x30, 0x27)), (0.5, (0xF4, 0xA6, 0x2A)), (1.0, (0x1A, 0x98, 0x50)))
UNKNOWN = "#9aa0a6"


def plotly_colorscale() -> list[list]:
    return [[stop, "#%02x%02x%02x" % rgb] for stop, rgb in SCALE]


def confidence_color(value: float | None) -> str:
    if value is None:
        return UNKNOWN
    value = min(1.0, max(0.0, float(value)))
    for (low, low_rgb), (high, high_rgb) in zip(SCALE, SCALE[1:]):
        if value <= high:
            share = (value - low) / (high - low)
            return "#%02x%02x%02x" % tuple(round(a + (b - a) * share) for a, b in zip(low_rgb, high_rgb))
    return "#%02x%02x%02x" % SCALE[-1][1]

"""Clicking a point of the DAG as a person does, at the point's place on screen.

The place comes from Plotly's own axes, so it is right only while no draw or
resize is in flight: the trace page sets `#dag[data-settled="1"]` when none is.
A layout change (the node panel filling, a scrollbar appearing) reaches the
plot through a ResizeObserver, which runs before the next frame is painted, so
the check waits two frames first: by then any resize the last change caused
has started and marked the plot unsettled."""

SCREEN_POSITION = """([x, y]) => {
  const gd = document.getElementById("dag");
  const box = gd.getBoundingClientRect();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  return [box.left + xa._offset + xa.d2p(x), box.top + ya._offset + ya.d2p(y)];
}"""

SETTLED = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(
  () => resolve(document.getElementById("dag").dataset.settled === "1"))))"""


def wait_until_settled(page) -> None:
    page.wait_for_function(SETTLED)


def click_point(page, x: float, y: float) -> None:
    """Clicks the plot at data coordinates (x, y) once the plot is settled."""
    wait_until_settled(page)
    page.mouse.click(*page.evaluate(SCREEN_POSITION, [x, y]))

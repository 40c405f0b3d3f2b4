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


# Plotly's click reports the points its last hover found (gd._hoverdata), and
# hovers are throttled to one per 50 ms: a click within 50 ms of the previous
# hover elsewhere reports the previous point. A person's pointer rests on a
# point before clicking; a test's moves and clicks at once.
HOVERING = """([x, y]) => {
  const found = document.getElementById("dag")._hoverdata;
  return Boolean(found) && found.some((point) => point.x === x && point.y === y);
}"""


def click_point(page, x: float, y: float) -> None:
    """Clicks the plot at data coordinates (x, y) once the plot is settled and
    Plotly's hover is on the point there."""
    wait_until_settled(page)
    screen = page.evaluate(SCREEN_POSITION, [x, y])
    page.mouse.move(*screen)
    page.wait_for_function(HOVERING, arg=[x, y])
    page.mouse.click(*screen)

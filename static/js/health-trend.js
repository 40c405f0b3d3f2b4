// The health page's trend: findings per night, stacked by kind.
(function () {
  "use strict";
  const source = document.getElementById("health-trend-data");
  const target = document.getElementById("health-trend");
  if (!source || !target || !window.Plotly) return;
  const nights = JSON.parse(source.textContent);
  // Every kind the server knows, so the legend is never missing one.
  const kinds = JSON.parse(document.getElementById("health-kinds").textContent);
  const colors = ["#d73027", "#f4a62a", "#7b3294", "#3a5bd9", "#1b9e77", "#666666"];
  const x = nights.map(function (n) { return n.night; });
  const traces = kinds.map(function (kind, index) {
    return {
      type: "bar", name: kind.label.charAt(0).toUpperCase() + kind.label.slice(1), x: x,
      marker: { color: colors[index % colors.length] },
      y: nights.map(function (n) { return n[kind.kind] || 0; }),
      hovertemplate: "%{x}: %{y} " + kind.label + "<extra></extra>",
    };
  });
  Plotly.newPlot(target, Denoise.chartSafe(traces), Denoise.chartLayout({
    barmode: "stack", height: 280,
    xaxis: { type: "category" },
    yaxis: { title: { text: "findings" }, rangemode: "tozero" },
  }, traces), { displaylogo: false, responsive: true });
  target.dataset.rendered = "true";
})();

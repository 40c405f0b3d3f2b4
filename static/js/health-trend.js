// The health page's trend: findings per night, stacked by kind.
(function () {
  "use strict";
  const source = document.getElementById("health-trend-data");
  const target = document.getElementById("health-trend");
  if (!source || !target || !window.Plotly) return;
  const nights = JSON.parse(source.textContent);
  const kinds = [
    ["broken_link", "Broken links", "#d73027"],
    ["orphan", "Orphans", "#f4a62a"],
    ["cycle", "Cycles", "#7b3294"],
    ["fused_indirect_use", "Fused indirect use", "#3a5bd9"],
  ];
  const x = nights.map(function (n) { return n.night; });
  const traces = kinds.map(function (kind) {
    return {
      type: "bar", name: kind[1], x: x, marker: { color: kind[2] },
      y: nights.map(function (n) { return n[kind[0]] || 0; }),
      hovertemplate: "%{x}: %{y} " + kind[1].toLowerCase() + "<extra></extra>",
    };
  });
  Plotly.newPlot(target, Denoise.chartSafe(traces), Denoise.chartLayout({
    barmode: "stack", height: 280,
    xaxis: { type: "category" },
    yaxis: { title: { text: "findings" }, rangemode: "tozero" },
  }, traces.length), { displaylogo: false, responsive: true });
  target.dataset.rendered = "true";
})();

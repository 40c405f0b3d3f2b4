// The runs page's chart: accuracy and intervention rate per run, oldest first.
// Run names are agent-side text: Plotly gets them as data (text), never as HTML.
(function () {
  "use strict";
  const source = document.getElementById("runs-chart-data");
  const target = document.getElementById("runs-chart");
  if (!source || !target || !window.Plotly) return;
  const runs = JSON.parse(source.textContent);
  const x = runs.map(function (r) { return "#" + r.id; });
  // Plotly reads labels as a small HTML dialect: escaped, agent text stays literal.
  function label(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  const names = runs.map(function (r) { return label(r.name); });
  function line(key, label, color) {
    return {
      type: "scatter", mode: "lines+markers", name: label, x: x, customdata: names,
      y: runs.map(function (r) { return r[key] === null ? null : r[key] * 100; }),
      line: { color: color }, marker: { size: 8 },
      hovertemplate: "%{x} %{customdata}<br>" + label + ": %{y:.1f}%<extra></extra>",
    };
  }
  const traces = [line("accuracy", "accuracy", "#1a9850"), line("intervention_rate", "intervention rate", "#3b5bdb")];
  Plotly.newPlot(target, Denoise.chartSafe(traces), Denoise.chartLayout({
    height: 300,
    xaxis: { type: "category", title: { text: "run" } },
    yaxis: { title: { text: "%" }, range: [0, 105] },
  }, traces), { displaylogo: false, responsive: true });
  target.on("plotly_click", function (event) {
    const point = event.points && event.points[0];
    if (point && runs[point.pointIndex]) window.location.assign(runs[point.pointIndex].url);
  });
  target.dataset.rendered = "true";
})();

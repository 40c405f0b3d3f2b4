// "Why answers go wrong": each cause's share of the answers, per bucket.
(function () {
  "use strict";
  const source = document.getElementById("why-trend-data");
  const target = document.getElementById("why-trend");
  if (!source || !target || !window.Plotly) return;
  const chart = JSON.parse(source.textContent);
  const traces = chart.series.map(function (series, i) {
    return {
      type: "scatter", mode: "lines+markers", name: series.name, x: chart.buckets, y: series.shares,
      line: { color: Denoise.seriesColor(i) }, connectgaps: false,
      hovertemplate: "%{y:.0%} of the answers<extra>%{fullData.name}</extra>",
    };
  });
  traces.push({
    type: "bar", name: "answers", x: chart.buckets, y: chart.answers, yaxis: "y2", opacity: 0.25,
    marker: { color: "#98a2b3" }, hovertemplate: "%{y} answers<extra></extra>",
  });
  Plotly.newPlot(target, Denoise.chartSafe(traces), Denoise.chartLayout({
    height: 300,
    yaxis: { title: { text: "share of answers" }, tickformat: ".0%", rangemode: "tozero" },
    yaxis2: { title: { text: "answers" }, overlaying: "y", side: "right", rangemode: "tozero", showgrid: false },
  }, traces), { displaylogo: false, responsive: true }).then(function () {
    target.dataset.drawn = "1";
  });
})();

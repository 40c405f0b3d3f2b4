// Shared by the metrics pages: fetch the page's JSON, draw with Plotly, build
// DOM safely (text only, never HTML from data).
(function () {
  "use strict";
  const root = document.getElementById("metrics-root");

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function ([key, value]) { node.setAttribute(key, value); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function pct(value) {
    return value === null || value === undefined ? "–" : (value * 100).toFixed(1) + "%";
  }

  function num(value, digits) {
    if (value === null || value === undefined) return "–";
    return Number.isInteger(value) ? value.toLocaleString() : value.toFixed(digits === undefined ? 3 : digits);
  }

  // The product's one confidence scale: red 0 → amber 0.5 → green 1.
  const CONFIDENCE_SCALE = [[0, "#d73027"], [0.5, "#f4a62a"], [1, "#1a9850"]];

  function confidenceColor(x) {
    const t = Math.max(0, Math.min(1, x));
    const [a, b, f] = t < 0.5 ? [[215, 48, 39], [244, 166, 42], t / 0.5] : [[244, 166, 42], [26, 152, 80], (t - 0.5) / 0.5];
    const mix = a.map(function (v, i) { return Math.round(v + (b[i] - v) * f); });
    return "rgb(" + mix.join(",") + ")";
  }

  // The series that pools the groups past the legend's top ones (named by the
  // server, e.g. "8 other agents"): grey, so it reads as the rest, not as one more group.
  const OTHERS_COLOR = "#98a2b3";

  function othersLine(name, x, y) {
    return { type: "scatter", mode: "lines+markers", name: name, x: x, y: y, connectgaps: false,
             line: { color: OTHERS_COLOR, dash: "dot" }, marker: { color: OTHERS_COLOR } };
  }

  function plot(id, traces, layout) {
    const target = document.getElementById(id);
    if (!target) return;
    window.Plotly.newPlot(target, window.Denoise.chartSafe(traces), window.Denoise.chartLayout(layout, traces),
      { responsive: true, displaylogo: false });
  }

  function fillTable(id, rows) {
    const body = document.querySelector("#" + id + " tbody");
    if (!body) return;
    body.replaceChildren();
    rows.forEach(function (cells) {
      const tr = el("tr");
      cells.forEach(function (cell) { tr.appendChild(el("td", {}, cell)); });
      body.appendChild(tr);
    });
  }

  function showError(message) {
    const box = document.getElementById("metrics-error");
    box.textContent = message;
    box.hidden = false;
    root.dataset.state = "error";
  }

  function load(draw) {
    if (!root || !root.dataset.source) return;
    // The request metrics-fetch.js started early, once; a later load asks again.
    const early = window.DenoiseMetricsEarly;
    window.DenoiseMetricsEarly = null;
    (early || window.DenoiseMetricsRequest())
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (result) {
        if (!result.ok) {
          const fields = result.body.fields || {};
          const detail = Object.keys(fields).map(function (k) { return k + ": " + fields[k]; }).join("; ");
          showError((result.body.error || "could not load the charts") + (detail ? " — " + detail : ""));
          return;
        }
        draw(result.body);
        root.dataset.state = "ready";
      })
      .catch(function (error) { showError("could not load the charts: " + error); });
  }

  // A preset range replaces explicit From/To (which would otherwise win).
  const rangeSelect = document.querySelector(".metrics-filters select[name=range]");
  if (rangeSelect) {
    rangeSelect.addEventListener("change", function () {
      if (!rangeSelect.value) return;
      document.querySelectorAll(".metrics-filters input[name=start], .metrics-filters input[name=end]")
        .forEach(function (input) { input.value = ""; });
    });
  }

  window.DenoiseMetrics = { el: el, pct: pct, num: num, plot: plot, fillTable: fillTable, load: load,
                            othersLine: othersLine, OTHERS_COLOR: OTHERS_COLOR,
                            confidenceColor: confidenceColor, CONFIDENCE_SCALE: CONFIDENCE_SCALE };
})();

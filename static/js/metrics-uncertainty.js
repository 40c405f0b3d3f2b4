// Uncertainty distributions: one histogram per metric, one trace per group,
// with each group's shape and a bimodality flag.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;

  function mids(bars) { return bars.from.map(function (x) { return x + bars.width / 2; }); }

  function flag(shape) {
    return M.el("span", { class: "flag " + (shape.bimodal ? "bimodal" : "ok") }, shape.bimodal ? "bimodal" : "unimodal");
  }

  // The heading's flag sums up the rows under it, from their own flags: a
  // split that is bimodal in one group is not called unimodal above it.
  function summary(rows, by) {
    const flagged = rows.filter(function (row) { return row.shape.bimodal; });
    const box = M.el("span", { class: "flag-summary" });
    box.appendChild(flag({ bimodal: flagged.length > 0 }));
    const groups = flagged.filter(function (row) { return !row.overall; }).length;
    if (groups) box.appendChild(M.el("span", { class: "muted flag-detail" }, "in " + groups + " of " + (rows.length - 1) + " groups by " + by));
    return box;
  }

  M.load(function (data) {
    const box = document.getElementById("distributions");
    box.replaceChildren();
    if (!data.metrics.length) {
      box.appendChild(M.el("p", { class: "empty" }, "No confidence or metric values in this range."));
    }
    data.metrics.forEach(function (metric, index) {
      const section = M.el("section", { class: "distribution", "data-metric": metric.label });
      const rows = [{ value: "all", shape: metric.overall.shape, overall: true }].concat(metric.groups);
      const title = M.el("h2", {}, metric.label);
      title.appendChild(summary(rows, data.by));
      section.appendChild(title);
      const chartId = "chart-distribution-" + index;
      section.appendChild(M.el("div", { id: chartId, class: "chart", "data-chart": "histogram" }));
      const table = M.el("table", { class: "data shapes" });
      const head = M.el("tr");
      [data.by, "values", "mean", "std", "bimodality coefficient", "peaks", ""].forEach(function (h) {
        head.appendChild(M.el("th", {}, h));
      });
      table.appendChild(M.el("thead")).appendChild(head);
      const body = table.appendChild(M.el("tbody"));
      rows.forEach(function (group) {
        const tr = M.el("tr");
        const s = group.shape;
        [group.value, M.num(s.count), M.num(s.mean), M.num(s.std), M.num(s.bimodality_coefficient), s.peaks]
          .forEach(function (cell) { tr.appendChild(M.el("td", {}, cell)); });
        tr.appendChild(M.el("td")).appendChild(flag(s));
        body.appendChild(tr);
      });
      section.appendChild(M.el("div", { class: "card table-card" })).appendChild(table);
      box.appendChild(section);
      const isConfidence = metric.metric === "";
      // The biggest groups each, the rest as one grey histogram (the server picks and pools them).
      const traces = metric.groups.filter(function (group) { return group.charted; }).map(function (group) {
        return { type: "bar", name: group.value, x: mids(group.bars), y: group.bars.count, width: group.bars.width,
                 opacity: 0.6 };
      });
      if (metric.others) {
        traces.push({ type: "bar", name: metric.others.value, x: mids(metric.others.bars), y: metric.others.bars.count,
                      width: metric.others.bars.width, opacity: 0.6, marker: { color: M.OTHERS_COLOR } });
      }
      if (metric.groups.length <= 1) {
        traces.splice(0, traces.length, { type: "bar", name: "all", x: mids(metric.overall.bars),
          y: metric.overall.bars.count, width: metric.overall.bars.width,
          marker: { color: isConfidence ? mids(metric.overall.bars).map(M.confidenceColor) : "#3a5bd9" } });
      }
      M.plot(chartId, traces, { barmode: "overlay", xaxis: { title: metric.label }, yaxis: { title: "nodes" } });
    });
  });
})();

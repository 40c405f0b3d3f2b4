// Drift: PSI and KS per bucket against the baseline, baseline vs latest
// distribution, and a heatmap of the distribution per bucket.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;

  M.load(function (data) {
    document.getElementById("baseline-window").textContent =
      data.baseline.start + " – " + data.baseline.end + " (" + data.baseline.count + " values)";
    document.getElementById("psi-threshold").textContent = data.threshold;
    M.plot("chart-psi", [
      { type: "scatter", mode: "lines+markers", name: "PSI", x: data.buckets, y: data.psi, line: { color: "#3a5bd9" } },
      { type: "scatter", mode: "lines", name: "KS statistic", x: data.buckets, y: data.ks, yaxis: "y2",
        line: { color: "#6b6b76", dash: "dot" } },
      { type: "scatter", mode: "lines", name: "drift threshold", x: [data.buckets[0], data.buckets[data.buckets.length - 1]],
        y: [data.threshold, data.threshold], line: { color: "#d73027", dash: "dash" } },
    ], { yaxis: { title: "PSI", rangemode: "tozero" },
         yaxis2: { title: "KS", overlaying: "y", side: "right", range: [0, 1], showgrid: false } });
    const mids = data.grid.from.map(function (x) { return x + data.grid.width / 2; });
    let latest = data.shares.length - 1;
    while (latest >= 0 && !data.shares[latest]) latest -= 1;
    const compare = [{ type: "bar", name: "baseline", x: mids, y: data.baseline.shares || [], opacity: 0.6,
                       width: data.grid.width, marker: { color: "#6b6b76" } }];
    if (latest >= 0) {
      compare.push({ type: "bar", name: "latest (" + data.buckets[latest] + ")", x: mids, y: data.shares[latest],
                     opacity: 0.6, width: data.grid.width, marker: { color: "#3a5bd9" } });
    }
    M.plot("chart-compare", compare, { barmode: "overlay", xaxis: { title: data.label },
                                       yaxis: { title: "share", tickformat: ".0%" } });
    M.plot("chart-heatmap", [{ type: "heatmap", x: data.buckets, y: mids,
      z: mids.map(function (_, bin) { return data.shares.map(function (row) { return row ? row[bin] : null; }); }),
      colorscale: "Blues", reversescale: true, colorbar: { title: "share", tickformat: ".0%" } }],
      { yaxis: { title: data.label }, margin: { l: 60, r: 20, t: 10, b: 40 } });
    const flags = document.getElementById("drift-flags");
    flags.replaceChildren();
    flags.appendChild(M.el("span", { class: "flag " + (data.drifted.length ? "drifted" : "ok") },
      data.drifted.length ? "drift in " + data.drifted.length + " bucket(s)" : "no drift flagged"));
    if (data.drifted.length) flags.appendChild(M.el("span", {}, " " + data.drifted.join(", ")));
  });
})();

// Drift: the baseline and the verdict (messages from the template), PSI and
// KS per bucket against the baseline, baseline vs latest distribution, and a
// heatmap of the distribution per bucket.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;
  const COLORS = { drift: "#d73027", watch: "#f4a62a", noise: "#3a5bd9", stable: "#3a5bd9" };

  function when(iso) { return iso.slice(0, 16).replace("T", " "); }

  function duration(seconds) {
    const hours = seconds / 3600;
    if (hours < 24) return hours === 1 ? "1 hour" : hours + " hours";
    return hours === 24 ? "1 day" : hours / 24 + " days";
  }

  // "2026-12-01 03:00–06:00" (the end's date only when it differs).
  function span(start, end) {
    const from = when(start), to = when(end);
    return from + "–" + (to.slice(0, 10) === from.slice(0, 10) ? to.slice(11) : to);
  }

  function spans(data, starts) {
    return starts.map(function (start) {
      const i = data.buckets.indexOf(start);
      return span(start, i + 1 < data.buckets.length ? data.buckets[i + 1] : data.query.end);
    }).join(", ");
  }

  function fill(name, value) {
    document.querySelectorAll("#drift-summary [data-fill='" + name + "']")
      .forEach(function (node) { node.textContent = value; });
  }

  function show(attribute, value) {
    document.querySelectorAll("#drift-summary [" + attribute + "]").forEach(function (node) {
      node.hidden = node.getAttribute(attribute) !== value;
    });
  }

  function summarize(data) {
    const judged = data.status.filter(function (s) { return s !== "few" && s !== "baseline"; }).length;
    fill("baseline-window", span(data.baseline.start, data.baseline.end) + " UTC");
    fill("baseline-count", M.num(data.baseline.count));
    fill("min-values", M.num(data.rule.min_values));
    fill("watch", data.rule.watch);
    fill("drift", data.rule.drift);
    fill("width", duration(data.bucket_seconds));
    document.getElementById("window-width").textContent = duration(data.bucket_seconds);
    fill("judged", judged);
    fill("bucket-count", data.buckets.length);
    fill("few-count", data.status.filter(function (s) { return s === "few"; }).length);
    fill("drift-count", data.drifted.length);
    fill("drift-list", spans(data, data.drifted));
    fill("watch-count", data.watch.length);
    fill("watch-list", spans(data, data.watch));
    show("data-baseline", data.baseline.source);
    show("data-verdict", data.verdict);
    if (data.watch.length) document.querySelector("#drift-summary [data-verdict=watch]").hidden = false;
    document.getElementById("drift-summary").dataset.verdict = data.verdict;
  }

  M.load(function (data) {
    summarize(data);
    const ends = [data.buckets[0], data.buckets[data.buckets.length - 1]];
    M.plot("chart-psi", [
      { type: "scatter", mode: "lines+markers", name: "PSI", x: data.buckets, y: data.psi, line: { color: "#3a5bd9" },
        marker: { size: 8, color: data.status.map(function (s) { return COLORS[s] || "#b0b0b8"; }) },
        text: data.status, hovertemplate: "%{x}<br>PSI %{y:.3f} (%{text})<extra></extra>" },
      { type: "scatter", mode: "lines", name: "KS statistic", x: data.buckets, y: data.ks, yaxis: "y2",
        line: { color: "#6b6b76", dash: "dot" } },
      { type: "scatter", mode: "lines", name: "watch (" + data.rule.watch + ")", x: ends,
        y: [data.rule.watch, data.rule.watch], line: { color: "#f4a62a", dash: "dash" } },
      { type: "scatter", mode: "lines", name: "drift (" + data.rule.drift + ")", x: ends,
        y: [data.rule.drift, data.rule.drift], line: { color: "#d73027", dash: "dash" } },
    ], { yaxis: { title: "PSI", rangemode: "tozero" },
         yaxis2: { title: "KS", overlaying: "y", side: "right", range: [0, 1], showgrid: false } });
    const mids = data.grid.from.map(function (x) { return x + data.grid.width / 2; });
    let latest = data.shares.length - 1;
    while (latest >= 0 && !data.shares[latest]) latest -= 1;
    const compare = [{ type: "bar", name: "baseline", x: mids, y: data.baseline.shares || [], opacity: 0.6,
                       width: data.grid.width, marker: { color: "#6b6b76" } }];
    if (latest >= 0) {
      compare.push({ type: "bar", name: "latest (" + when(data.buckets[latest]) + ")", x: mids, y: data.shares[latest],
                     opacity: 0.6, width: data.grid.width, marker: { color: "#3a5bd9" } });
    }
    M.plot("chart-compare", compare, { barmode: "overlay", xaxis: { title: data.label },
                                       yaxis: { title: "share", tickformat: ".0%" } });
    M.plot("chart-heatmap", [{ type: "heatmap", x: data.buckets, y: mids,
      z: mids.map(function (_, bin) { return data.shares.map(function (row) { return row ? row[bin] : null; }); }),
      colorscale: "Blues", reversescale: true, colorbar: { title: "share", tickformat: ".0%" } }],
      { yaxis: { title: data.label }, margin: { l: 60, r: 20, t: 10, b: 40 } });
  });
})();

// Overview: headline figures now vs the previous period, fuse rate per agent
// and high-uncertainty ratio over time, latest DAG health findings.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;
  const CARDS = [
    ["node_count", "Nodes", "count", false], ["trace_count", "Traces", "count", false],
    ["mean_confidence", "Mean confidence", "number", false],
    ["high_uncertainty_ratio", "High-uncertainty traces", "ratio", true],
    ["fuse_rate", "Fuse rate", "ratio", true], ["failure_rate", "Failure rate", "ratio", true],
    ["downweight_rate", "Downweight rate", "ratio", true], ["consecutive_fuses", "Most consecutive fuses", "count", true],
  ];

  function show(kind, value) { return kind === "ratio" ? M.pct(value) : M.num(value); }

  function headline(data) {
    const box = document.getElementById("headline");
    box.replaceChildren();
    CARDS.forEach(function ([key, title, kind, worseWhenUp]) {
      const now = data.headline.current[key];
      const before = data.headline.previous[key];
      const card = M.el("div", { class: "metric-card", "data-metric": key });
      card.appendChild(M.el("div", { class: "name" }, title));
      card.appendChild(M.el("div", { class: "value" }, show(kind, now)));
      let delta = "previous: " + show(kind, before);
      let direction = "";
      if (now !== null && before !== null && now !== before) {
        direction = (now > before) === worseWhenUp ? "up" : "down";
      }
      card.appendChild(M.el("div", { class: "delta " + direction }, delta));
      box.appendChild(card);
    });
  }

  function health(data) {
    const box = document.getElementById("health");
    if (!data.health || !data.health.checked_at) return;
    box.replaceChildren();
    const n = data.health.findings;
    const when = data.health.checked_at.slice(0, 16).replace("T", " ") + " UTC";
    box.appendChild(M.el("p", {}, M.num(n) + (n === 1 ? " finding" : " findings") + " in the check of " + when));
    const list = M.el("ul");
    Object.entries(data.health.by_kind || {}).forEach(function ([kind, n]) {
      list.appendChild(M.el("li", {}, kind + ": " + n));
    });
    box.appendChild(list);
  }

  M.load(function (data) {
    headline(data);
    const agents = Object.keys(data.fuse_rate_by_agent);
    M.plot("chart-fuse-rate", agents.map(function (agent) {
      return { type: "scatter", mode: "lines+markers", name: agent, x: data.buckets,
               y: data.fuse_rate_by_agent[agent], connectgaps: false };
    }), { yaxis: { title: "fuse rate", tickformat: ".0%", rangemode: "tozero" } });
    M.plot("chart-uncertainty", [
      { type: "bar", name: "traces", x: data.buckets, y: data.trace_count, yaxis: "y2", marker: { color: "#d7dbe8" } },
      { type: "scatter", mode: "lines+markers", name: "high-uncertainty ratio", x: data.buckets,
        y: data.high_uncertainty_ratio, line: { color: "#d73027" } },
    ], { yaxis: { title: "share of traces", tickformat: ".0%", rangemode: "tozero" },
         yaxis2: { title: "traces", overlaying: "y", side: "right", showgrid: false } });
    health(data);
  });
})();

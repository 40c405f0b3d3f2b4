// Overview: headline figures now vs the previous period, fuse rate per agent
// and high-uncertainty ratio over time, latest DAG health findings.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;
  // The last field says whether a rise is worse (true), better (false) or
  // neither (null: volumes are coloured by nothing, a change is never green by default).
  const CARDS = [
    ["node_count", "Nodes", "count", null], ["trace_count", "Traces", "count", null],
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
      if (now !== null && before !== null && now !== before && worseWhenUp !== null) {
        direction = (now > before) === worseWhenUp ? "up" : "down";
      }
      card.appendChild(M.el("div", { class: "delta " + direction }, delta));
      box.appendChild(card);
    });
  }

  // Trace-weighted figures beside the node-weighted headline: each trace counts once.
  const TRACE_CARDS = [
    ["traces_with_fuse_share", "Traces with a fuse", "ratio"], ["mean_trace_fuse_rate", "Mean per-trace fuse rate", "ratio"],
    ["mean_trace_confidence", "Mean per-trace confidence", "number"],
  ];

  function traceWeighted(data) {
    const box = document.getElementById("trace-weighted");
    box.replaceChildren();
    TRACE_CARDS.forEach(function ([key, title, kind]) {
      const card = M.el("div", { class: "metric-card", "data-metric": key });
      card.appendChild(M.el("div", { class: "name" }, title));
      card.appendChild(M.el("div", { class: "value" }, show(kind, data.trace_weighted[key])));
      card.appendChild(M.el("div", { class: "delta" }, "over " + M.num(data.trace_weighted.traces) + " traces"));
      box.appendChild(card);
    });
  }

  // A trace that holds a large share of the window's nodes is named, with the
  // node-weighted figures again without it.
  function dominant(data) {
    const box = document.getElementById("dominant");
    const found = data.dominant_trace;
    box.replaceChildren();
    box.hidden = !found;
    if (!found) return;
    const head = M.el("p");
    head.appendChild(M.el("strong", {}, "One trace dominates this window: "));
    head.appendChild(M.el("a", { href: found.url, id: "dominant-trace" }, found.trace_id));
    head.appendChild(document.createTextNode(" holds " + M.pct(found.share) + " of its nodes (" + M.num(found.nodes) +
      " of " + M.num(data.headline.current.node_count) + "), so the node-weighted figures above mostly describe it."));
    box.appendChild(head);
    const w = found.without;
    box.appendChild(M.el("p", { id: "dominant-without" }, "Without it: " + M.num(w.node_count) + " nodes in " +
      M.num(w.trace_count) + " traces, fuse rate " + M.pct(w.fuse_rate) + ", failure rate " + M.pct(w.failure_rate) +
      ", mean confidence " + M.num(w.mean_confidence) + "."));
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
    traceWeighted(data);
    dominant(data);
    const agents = Object.keys(data.fuse_rate_by_agent);
    const rates = agents.map(function (agent) {
      return { type: "scatter", mode: "lines+markers", name: agent, x: data.buckets,
               y: data.fuse_rate_by_agent[agent], connectgaps: false };
    });
    const others = data.fuse_rate_others;
    if (others) rates.push(M.othersLine(others.name, data.buckets, others.fuse_rate));
    M.plot("chart-fuse-rate", rates, { yaxis: { title: "fuse rate", tickformat: ".0%", rangemode: "tozero" } });
    M.plot("chart-uncertainty", [
      { type: "bar", name: "traces", x: data.buckets, y: data.trace_count, yaxis: "y2", marker: { color: "#d7dbe8" } },
      { type: "scatter", mode: "lines+markers", name: "high-uncertainty ratio", x: data.buckets,
        y: data.high_uncertainty_ratio, line: { color: "#d73027" } },
    ], { yaxis: { title: "share of traces", tickformat: ".0%", rangemode: "tozero" },
         yaxis2: { title: "traces", overlaying: "y", side: "right", showgrid: false } });
    health(data);
  });
})();

// Fuse-rate dashboard: stacked accept/downweight/block per agent and per
// round, top fuse reasons, agents with the most consecutive fuses.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;
  const PARTS = [["accepted", "accept", "#1a9850"], ["downweighted", "downweight", "#f4a62a"],
                 ["fused", "block", "#d73027"]];

  function stacked(id, rows, axisTitle) {
    M.plot(id, PARTS.map(function ([key, name, color]) {
      return { type: "bar", name: name, x: rows.map(function (r) { return r.value; }),
               y: rows.map(function (r) { return r[key]; }), marker: { color: color },
               customdata: rows.map(function (r) { return r.fuse_rate; }),
               hovertemplate: "%{x}: %{y} " + name + " (fuse rate %{customdata:.1%})<extra></extra>" };
    }), { barmode: "stack", xaxis: { title: axisTitle, type: "category" }, yaxis: { title: "nodes" } });
  }

  function usd(value) { return value === null || value === undefined ? "–" : "$" + value.toFixed(4); }

  // What certainty costs reads raw rows: fetched after the charts are drawn.
  function certainty() {
    const table = document.getElementById("certainty");
    const source = document.getElementById("metrics-root").dataset.source.replace("/fuses.json", "/certainty.json");
    fetch(source, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (body) {
        M.fillTable("certainty", body.by_policy_version.map(function (r) {
          return [r.policy_version === null ? "(none given)" : "v" + r.policy_version, M.num(r.traces),
                  M.pct(r.expensive_cost_share), M.pct(r.expensive_latency_share), M.pct(r.accuracy),
                  M.pct(r.fuse_rate), M.num(r.escalation_rate), M.num(r.p95_latency_ms, 1), usd(r.cost_per_trace),
                  usd(r.cost_per_correct)];
        }));
        table.dataset.state = "ready";
      });
  }

  M.load(function (data) {
    stacked("chart-by-agent", data.by_agent, "agent");
    stacked("chart-by-round", data.by_round, "round");
    const traces = [["block", "#d73027"], ["downweight", "#f4a62a"]].map(function ([decision, color]) {
      const rows = (data.top_reasons[decision] || []).slice().reverse();
      return { type: "bar", orientation: "h", name: decision, marker: { color: color },
               y: rows.map(function (r) { return decision + ": " + r.reason; }), x: rows.map(function (r) { return r.count; }) };
    });
    M.plot("chart-reasons", traces, { xaxis: { title: "decisions" } });
    M.fillTable("consecutive", data.consecutive_fuses.map(function (r) { return [r.agent_id, r.consecutive_fuses]; }));
    const outcomes = document.getElementById("fuse-outcomes");
    outcomes.replaceChildren();
    [["Retry success rate", M.pct(data.outcomes.retry_success_rate)],
     ["Escalations per trace", M.num(data.outcomes.escalation_rate)]].forEach(function ([title, value]) {
      const card = M.el("div", { class: "metric-card" });
      card.appendChild(M.el("div", { class: "name" }, title));
      card.appendChild(M.el("div", { class: "value" }, value));
      outcomes.appendChild(card);
    });
    certainty();
    M.fillTable("policy-versions", data.by_policy_version.map(function (r) {
      return [r.policy_version === null ? "(none given)" : "v" + r.policy_version, r.decisions, r.nodes,
              M.pct(r.fuse_rate), r.reviewed, M.pct(r.incorrect_rate), M.num(r.escalation_rate)];
    }));
  });
})();

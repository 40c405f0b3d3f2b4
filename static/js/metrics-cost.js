// Cost & latency: latency percentiles over time, p95 latency, tokens and cost
// over time per agent, step or model, the slowest and most expensive steps,
// and the models without a price.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;
  const BY = { agent_id: "agent", step: "step", model: "model" };

  function usd(value) { return value === null || value === undefined ? "–" : "$" + value.toFixed(4); }

  function lines(id, data, key, title) {
    const traces = data.groups.map(function (group) {
      return { type: "scatter", mode: "lines+markers", name: group.value, x: data.buckets, y: group[key],
               connectgaps: false };
    });
    if (data.others) traces.push(M.othersLine(data.others.value, data.buckets, data.others[key]));
    M.plot(id, traces, { yaxis: { title: title, rangemode: "tozero" } });
  }

  M.load(function (data) {
    document.querySelectorAll(".cost-by").forEach(function (span) { span.textContent = BY[data.by] || data.by; });
    const totals = document.getElementById("cost-totals");
    totals.replaceChildren();
    [["Nodes timed", M.num(data.totals.nodes_timed)], ["Mean latency", M.num(data.totals.mean_latency_ms, 1) + " ms"],
     ["p95 latency", M.num(data.totals.p95_latency_ms, 1) + " ms"], ["Tokens", M.num(data.totals.tokens)],
     ["Cost", usd(data.totals.cost_usd)]].forEach(function ([title, value]) {
      const card = M.el("div", { class: "metric-card" });
      card.appendChild(M.el("div", { class: "name" }, title));
      card.appendChild(M.el("div", { class: "value" }, value));
      totals.appendChild(card);
    });
    M.plot("chart-latency", ["p50", "p95", "p99"].map(function (p) {
      return { type: "scatter", mode: "lines+markers", name: p, x: data.buckets, y: data.latency[p], connectgaps: false };
    }), { yaxis: { title: "ms", rangemode: "tozero" } });
    lines("chart-latency-by", data, "p95_latency_ms", "p95 ms");
    lines("chart-tokens", data, "tokens", "tokens");
    lines("chart-cost", data, "cost_usd", "USD");
    M.fillTable("slowest-steps", data.slowest_steps.map(function (r) {
      return [r.step, M.num(r.count), M.num(r.mean, 1), M.num(r.p95, 1)];
    }));
    M.fillTable("expensive-steps", data.expensive_steps.map(function (r) {
      return [r.step, M.num(r.count), usd(r.total), usd(r.mean)];
    }));
    M.fillTable("unpriced-models", data.unpriced_models.map(function (r) { return [r.model, M.num(r.nodes)]; }));
  });
})();

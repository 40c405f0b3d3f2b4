// Calibration: reliability diagram with counts, ECE and Brier score, ROC with
// the suggested threshold, correlation of uncertainty with incorrect verdicts.
(function () {
  "use strict";
  const M = window.DenoiseMetrics;

  function card(box, title, value) {
    const c = M.el("div", { class: "metric-card" });
    c.appendChild(M.el("div", { class: "name" }, title));
    c.appendChild(M.el("div", { class: "value" }, value));
    box.appendChild(c);
  }

  M.load(function (data) {
    const cards = document.getElementById("calibration-cards");
    cards.replaceChildren();
    card(cards, "Reviewed answers", M.num(data.count));
    card(cards, "Judged incorrect", M.num(data.incorrect));
    card(cards, "Expected calibration error", M.num(data.ece));
    card(cards, "Brier score", M.num(data.brier));
    const best = data.roc.best;
    card(cards, "Suggested threshold (Youden's J)", best ? M.num(best.threshold) : "–");
    card(cards, "At that threshold: catches / review load", best ? M.pct(best.tpr) + " / " + M.pct(best.review_load) : "–");
    if (data.unscored_reviews) card(cards, "Reviews without a confidence", M.num(data.unscored_reviews));

    const bins = data.reliability;
    const centers = bins.map(function (b) { return (b.from + b.to) / 2; });
    M.plot("chart-reliability", [
      { type: "bar", name: "reviews", x: centers, y: bins.map(function (b) { return b.count; }), yaxis: "y2",
        width: 0.09, marker: { color: "#d7dbe8" } },
      { type: "scatter", mode: "lines", name: "perfect calibration", x: [0, 1], y: [0, 1], line: { dash: "dash", color: "#6b6b76" } },
      { type: "scatter", mode: "lines+markers+text", name: "observed accuracy",
        x: bins.map(function (b) { return b.mean_confidence; }), y: bins.map(function (b) { return b.accuracy; }),
        text: bins.map(function (b) { return b.count ? "n=" + b.count : ""; }), textposition: "top center",
        line: { color: "#3a5bd9" } },
    // Headroom above 1 for the counts written over the points.
    ], { xaxis: { title: "stated confidence", range: [0, 1] }, yaxis: { title: "share correct", range: [0, 1.12] },
         yaxis2: { title: "reviews", overlaying: "y", side: "right", showgrid: false } });

    const points = data.roc.points;
    const roc = [
      { type: "scatter", mode: "lines", name: "chance", x: [0, 1], y: [0, 1], line: { dash: "dash", color: "#6b6b76" } },
      { type: "scatter", mode: "lines", name: "ROC (AUC " + M.num(data.roc.auc) + ")",
        x: points.map(function (p) { return p.fpr; }), y: points.map(function (p) { return p.tpr; }),
        customdata: points.map(function (p) { return [p.threshold, p.review_load]; }),
        hovertemplate: "t=%{customdata[0]:.3f}: catches %{y:.1%}, false alarms %{x:.1%}, review load %{customdata[1]:.1%}<extra></extra>" },
    ];
    // The other signals the reviewed answers report, on the same axes.
    (data.signals || []).slice(1).forEach(function (signal, k) {
      roc.push({ type: "scatter", mode: "lines", name: signal.signal + ": area " + M.num(signal.auc) + ", n=" + signal.count,
                 x: signal.points.map(function (p) { return p.fpr; }), y: signal.points.map(function (p) { return p.tpr; }),
                 line: { dash: k ? "dot" : "dashdot" },
                 hovertemplate: "catches %{y:.1%}, false alarms %{x:.1%}<extra></extra>" });
    });
    if (best) {
      roc.push({ type: "scatter", mode: "markers+text", name: "suggested threshold", x: [best.fpr], y: [best.tpr],
                 text: ["t=" + M.num(best.threshold)], textposition: "bottom right", marker: { size: 12, color: "#d73027" } });
    }
    M.plot("chart-roc", roc, { xaxis: { title: "false positive rate (correct answers flagged)", range: [0, 1] },
                               yaxis: { title: "true positive rate (errors caught)", range: [0, 1] } });
    M.fillTable("calibration-by-agent", data.by_agent.map(function (a) {
      return [a.agent_id || "(no agent)", a.count, a.incorrect, M.num(a.mean_confidence), M.pct(a.accuracy),
              M.num(a.overconfidence), M.num(a.ece),
              M.num(a.auc), a.badly_calibrated ? "badly calibrated" : (a.enough_reviews ? "ok" : "too few reviews")];
    }));
    document.querySelectorAll("#calibration-by-agent tbody tr").forEach(function (row, k) {
      if (data.by_agent[k].badly_calibrated) row.classList.add("badly-calibrated");
    });
    M.fillTable("correlations", data.correlations.map(function (c) { return [c.name, c.count, M.num(c.correlation)]; }));
  });
})();

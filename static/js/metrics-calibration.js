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
    // Plotly draws an overlaying axis's traces over its base axis's: the
    // counts, light bars, sit on the base axis (right) behind the accuracy
    // line and its n= labels on the overlaying one (left), so bars never cover them.
    M.plot("chart-reliability", [
      { type: "bar", name: "reviews", x: centers, y: bins.map(function (b) { return b.count; }),
        width: 0.09, marker: { color: "#e6e9f0" }, hovertemplate: "%{y} reviews<extra></extra>" },
      { type: "scatter", mode: "lines", name: "perfect calibration", x: [0, 1], y: [0, 1], yaxis: "y2",
        line: { dash: "dash", color: "#6b6b76" }, hoverinfo: "skip" },
      { type: "scatter", mode: "lines+markers+text", name: "observed accuracy", yaxis: "y2",
        x: bins.map(function (b) { return b.mean_confidence; }), y: bins.map(function (b) { return b.accuracy; }),
        text: bins.map(function (b) { return b.count ? "n=" + b.count : ""; }), textposition: "top center",
        textfont: { color: "#1f2a5a" }, cliponaxis: false, line: { color: "#3a5bd9" }, marker: { size: 8 },
        customdata: bins.map(function (b) { return b.count; }),
        hovertemplate: "stated %{x:.2f}: %{y:.1%} correct of %{customdata} reviews<extra></extra>" },
    // Headroom above 1 for the counts written over the points.
    ], { xaxis: { title: "stated confidence", range: [0, 1] },
         yaxis: { title: "reviews", side: "right", showgrid: false, rangemode: "tozero" },
         yaxis2: { title: "share correct", overlaying: "y", side: "left", range: [0, 1.12], showgrid: true } });

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

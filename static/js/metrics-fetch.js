// Loaded before Plotly: the page's JSON is asked for while the chart library
// is still being fetched and compiled, so the server's work and the browser's
// overlap instead of following one another. metrics-common.js takes the answer.
(function () {
  "use strict";
  const root = document.getElementById("metrics-root");
  if (!root || !root.dataset.source) return;
  window.DenoiseMetricsRequest = function () {
    return fetch(root.dataset.source, { credentials: "same-origin", headers: { Accept: "application/json" } });
  };
  window.DenoiseMetricsEarly = window.DenoiseMetricsRequest();
})();

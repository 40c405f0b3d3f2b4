// The trace list: shows the custom time fields only when asked for, and keeps
// the list live. On the unfiltered first page new and changed traces move to
// the top as they arrive; elsewhere a notice offers a refresh.
//
// Rows are built with DOM APIs: agent-supplied ids only ever become text.
(function () {
  "use strict";
  const range = document.getElementById("id_range");
  if (range) {
    const toggleCustom = function () {
      document.querySelectorAll(".custom-range").forEach(function (field) {
        field.hidden = range.value !== "custom" && !field.querySelector("input").value;
      });
    };
    range.addEventListener("change", toggleCustom);
    toggleCustom();
  }

  const live = document.getElementById("live-status");
  const table = document.getElementById("trace-table");
  if (!live || !table) return;
  const body = table.tBodies[0];
  const insert = live.dataset.insert === "1";
  const maxRows = Math.max(body.rows.length, 50);
  let changed = 0;

  const el = Denoise.el;

  function confidence(value, color) {
    const chip = el("span", value === null ? "conf none" : "conf");
    const dot = el("span", "dot");
    dot.style.background = color;
    chip.appendChild(dot);
    chip.appendChild(document.createTextNode(value === null ? "unknown" : Number(value).toFixed(2)));
    return chip;
  }

  function count(value, badgeClass, prefix) {
    return value ? el("span", "badge " + badgeClass, (prefix || "") + value) : el("span", "none", "0");
  }

  function verdict(value) {
    if (value === "incorrect") return el("span", "badge bad", "incorrect");
    if (value === "correct") return el("span", "badge good", "correct");
    return el("span", "none", "not reviewed");
  }

  function cell(className, content) {
    const td = el("td", className);
    (Array.isArray(content) ? content : [content]).forEach(function (part) {
      if (part) td.appendChild(part);
    });
    return td;
  }

  function rowFor(trace) {
    const tr = el("tr", "fresh");
    tr.dataset.traceId = trace.trace_id;
    const link = el("a", null, trace.trace_id);
    link.href = trace.url;
    tr.appendChild(cell("id mono", link));
    tr.appendChild(el("td", "time", trace.ended_at ? trace.ended_at.replace("T", " ").slice(0, 19) : ""));
    tr.appendChild(el("td", "num", trace.node_count));
    tr.appendChild(cell("", confidence(trace.min_confidence, trace.min_color)));
    tr.appendChild(cell("num", count(trace.fused_count, "fused", "✕ ")));
    tr.appendChild(cell("num", count(trace.error_count, "bad")));
    const final = trace.final_confidence === null && !trace.verdict && !trace.final_fused
      ? el("span", "none", "—") : confidence(trace.final_confidence, trace.final_color);
    tr.appendChild(cell("", [final, trace.final_fused ? el("span", "badge fused", "fused") : null]));
    tr.appendChild(cell("", verdict(trace.verdict)));
    return tr;
  }

  function existingRow(traceId) {
    for (const row of body.rows) if (row.dataset.traceId === traceId) return row;
    return null;
  }

  function apply(traces) {
    table.hidden = false;
    const empty = document.getElementById("empty-state");
    if (empty) empty.hidden = true;
    // Newest last, so that inserting each at the top leaves the newest first.
    traces.slice().reverse().forEach(function (trace) {
      const old = existingRow(trace.trace_id);
      if (old) old.remove();
      body.insertBefore(rowFor(trace), body.firstChild);
    });
    while (body.rows.length > maxRows) body.deleteRow(body.rows.length - 1);
  }

  function notify(traces) {
    changed += traces.length;
    document.getElementById("live-notice-text").textContent =
      changed + " trace" + (changed === 1 ? " has" : "s have") + " new activity since this page loaded.";
    document.getElementById("live-notice").hidden = false;
  }

  Denoise.liveSocket(live.dataset.ws, live, function (message) {
    if (message.type !== "traces.changed") return;
    if (insert) apply(message.traces); else notify(message.traces);
  });
})();

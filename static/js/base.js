// Shared by every page: the project switcher, and two small helpers the page
// scripts use (window.Denoise): building elements from text, and a live socket.
(function () {
  "use strict";
  const switcher = document.getElementById("project-switcher");
  if (switcher) {
    // Each option's value is the same kind of page in that project.
    switcher.addEventListener("change", function () {
      if (switcher.value.startsWith("/")) window.location.assign(switcher.value);
    });
  }

  // An element whose content is text: agent-supplied strings never become markup.
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // A websocket to `path` that shows its state in `badge`, hands each JSON
  // message to `onMessage`, and reconnects with backoff when it drops.
  function liveSocket(path, badge, onMessage) {
    function connect(delay) {
      const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      const socket = new WebSocket(scheme + window.location.host + path);
      socket.addEventListener("open", function () {
        delay = 1000;
        badge.textContent = "Live";
        badge.classList.add("on");
      });
      socket.addEventListener("message", function (event) { onMessage(JSON.parse(event.data)); });
      socket.addEventListener("close", function () {
        badge.textContent = "Offline — retrying";
        badge.classList.remove("on");
        setTimeout(function () { connect(Math.min(delay * 2, 30000)); }, delay);
      });
    }
    connect(1000);
  }

  // Plotly reads every label (trace names, category values, text, hover
  // text) as a small HTML dialect: `<a href>` becomes a link, `<b>` bold.
  // Escaped, agent text stays literal. Every chart on every page goes
  // through chartSafe (or chartText for labels it builds itself).
  function chartText(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  const TEXT_KEYS = ["name", "text", "hovertext", "labels", "x", "y", "customdata"];

  function escapeValues(value) {
    if (typeof value === "string") return chartText(value);
    if (Array.isArray(value)) return value.map(escapeValues);
    return value;
  }

  // A copy of the traces with every string they would show escaped; numbers,
  // dates as numbers and styling are left alone. Hover templates are ours,
  // not data, and stay as written.
  function chartSafe(traces) {
    return traces.map(function (trace) {
      const safe = Object.assign({}, trace);
      TEXT_KEYS.forEach(function (key) { if (key in safe) safe[key] = escapeValues(safe[key]); });
      return safe;
    });
  }

  // Series colours: ten well-separated ones, then hues a golden angle apart
  // at alternating lightness, so no two of any number of series (agents,
  // steps) share a colour.
  const FIRST_COLORS = ["#3b5bdb", "#f08c00", "#2f9e44", "#e03131", "#7048e8", "#8d6e63", "#d6336c", "#495057",
                        "#99a81a", "#1098ad"];

  function seriesColor(index) {
    if (index < FIRST_COLORS.length) return FIRST_COLORS[index];
    const k = index - FIRST_COLORS.length;
    const hue = Math.round((k * 137.508 + 20) % 360);
    return "hsl(" + hue + ", " + [70, 55, 80][k % 3] + "%, " + [38, 55, 30][k % 3] + "%)";
  }

  // The layout every chart starts from: axes make room for their own labels
  // and titles (long category names, a right-hand axis), every numeric axis
  // has nice ticks (chart-ticks.js, from the values `traces` put on it), the
  // legend sits above the plot where it cannot cover tick labels, and there
  // is a colour for every series. `layout` overrides; axis titles may be
  // given as text.
  function safeTitle(title) {
    if (typeof title === "string") return {text: chartText(title)};
    if (title && typeof title.text === "string") return Object.assign({}, title, {text: chartText(title.text)});
    return title;
  }

  function chartLayout(layout, traces) {
    // A count instead of the traces (an older caller) still gets colours and Plotly's own nice ticks.
    const seriesCount = Array.isArray(traces) ? traces.length : (traces || 0);
    traces = Array.isArray(traces) ? traces : [];
    const merged = Object.assign({
      margin: {l: 50, r: 20, t: 10, b: 40},
      legend: {orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom"},
      paper_bgcolor: "#fff", plot_bgcolor: "#fff", hovermode: "closest",
      colorway: Array.from({length: Math.max(seriesCount || 0, FIRST_COLORS.length)}, function (_, i) { return seriesColor(i); }),
    }, layout || {});
    // Titles and tick labels are read as the same HTML dialect as the data: a
    // metric named `<a href>` in an axis title would be a link.
    Object.keys(merged).forEach(function (key) {
      if (!/^[xy]axis\d*$/.test(key)) return;
      // A gap under the x tick labels keeps the first of them off the lowest y tick label at the corner.
      const axis = Object.assign({automargin: true}, key.charAt(0) === "x" ? {ticklabelstandoff: 8} : {}, merged[key]);
      axis.title = safeTitle(axis.title);
      if (Array.isArray(axis.ticktext)) axis.ticktext = escapeValues(axis.ticktext);
      merged[key] = axis;
    });
    if (merged.title !== undefined) merged.title = safeTitle(merged.title);
    if (merged.legend && merged.legend.title !== undefined) {
      merged.legend = Object.assign({}, merged.legend, {title: safeTitle(merged.legend.title)});
    }
    if (Array.isArray(merged.annotations)) {
      merged.annotations = merged.annotations.map(function (note) {
        return typeof note.text === "string" ? Object.assign({}, note, {text: chartText(note.text)}) : note;
      });
    }
    if (!merged.xaxis) merged.xaxis = {automargin: true, ticklabelstandoff: 8};
    if (!merged.yaxis) merged.yaxis = {automargin: true};
    return window.DenoiseTicks.withNiceTicks(merged, traces);
  }

  window.Denoise = {el: el, liveSocket: liveSocket, chartText: chartText, chartSafe: chartSafe,
                    chartLayout: chartLayout, seriesColor: seriesColor};
})();

// The trace page: the provenance DAG drawn with Plotly from the server's layout,
// the node panel, "Why is this wrong?" and "What did this break?" highlights,
// and live updates over a websocket.
//
// Agent-supplied text reaches the document only through textContent and DOM
// APIs, or as entity-escaped Plotly labels; never as markup.
(function () {
  "use strict";
  const root = document.getElementById("trace-explorer");
  if (!root || typeof Plotly === "undefined") return;

  // Beyond this many nodes SVG gets sluggish; WebGL keeps pan and zoom smooth.
  const GL_THRESHOLD = 1500;
  const FRESH_MS = 8000;
  const COLOR = {
    edge: "#c5cad3", retry: "#d9480f", cause: "#7b2cbf", impact: "#1c7ed6", selected: "#161a22",
    fresh: "#3b5bdb", external: "#8a8f98", unknown: "#9aa0a6", error: "#111318",
  };

  const plot = document.getElementById("dag");
  const statusBox = document.getElementById("dag-status");
  const panel = document.getElementById("node-panel");
  const toastBox = document.getElementById("toast");
  const liveBadge = document.getElementById("live-status");
  const clearButton = document.getElementById("clear-highlight");

  const state = {
    graph: null,
    indexOf: new Map(),
    parentsOf: [],
    childrenOf: [],
    selected: root.dataset.selected || "",
    highlight: null, // {kind: "cause" | "impact", nodes: Set, edges: [[parent, child]], causes: Set}
    fresh: new Set(),
    gl: false,
    bound: false,
    // What the reader asked to see: expanded clusters, nodes revealed out of
    // their fold, and focus on one node's ancestry and consumers.
    view: {expanded: new Set(), reveal: new Set(), focus: "", hops: "all"},
    clusterOf: new Map(), // product id of a folded node -> its cluster's index
  };

  // ---- helpers -------------------------------------------------------------

  // Plotly reads labels as a small HTML dialect: escaped, agent text stays literal.
  const plotlyText = Denoise.chartText;

  function formatConfidence(value) {
    return value === null || value === undefined ? "unknown" : Number(value).toFixed(2);
  }

  const el = Denoise.el;

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function show(id, visible) {
    document.getElementById(id).hidden = !visible;
  }

  // The page reads the API with its session, for this page's project: the
  // trace's graph, and under the trace's address `/nodes/<id>[/root-cause|/impact]`.
  function forProject(url, params) {
    const query = new URLSearchParams(params || {});
    query.set("project", root.dataset.project);
    return url + "?" + query.toString();
  }

  function nodeApiUrl(productId, suffix) {
    return forProject(root.dataset.apiUrl + "/nodes/" + encodeURIComponent(productId) + (suffix || ""),
                      {view: "explorer"});
  }

  function fetchJSON(url) {
    return fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}}).then(function (response) {
      if (response.status === 401) throw new Error("Your session has expired: log in again.");
      if (!response.ok) throw new Error("The server answered " + response.status + ".");
      return response.json();
    });
  }

  function toast(message) {
    toastBox.textContent = message;
    toastBox.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { toastBox.hidden = true; }, 3500);
  }

  function webglAvailable() {
    try {
      const canvas = document.createElement("canvas");
      return Boolean(canvas.getContext("webgl") || canvas.getContext("experimental-webgl"));
    } catch (error) {
      return false;
    }
  }

  function confidenceChip(value, color) {
    const chip = el("span", "conf" + (value === null || value === undefined ? " none" : ""));
    const dot = el("span", "dot");
    dot.style.background = color || COLOR.unknown;
    chip.appendChild(dot);
    chip.appendChild(document.createTextNode(formatConfidence(value)));
    return chip;
  }

  function badge(text, kind) {
    return el("span", "badge" + (kind ? " " + kind : ""), text);
  }

  // ---- the graph -----------------------------------------------------------

  function nodeCount() { return state.graph.nodes.id.length; }
  function externalCount() { return state.graph.external.id.length; }
  // Vertices: drawn nodes, then external nodes, then clusters.
  function firstCluster() { return nodeCount() + externalCount(); }
  function isCluster(index) { return index >= firstCluster(); }

  function idAt(index) {
    const n = nodeCount();
    return index < n ? state.graph.nodes.id[index] : state.graph.external.id[index - n];
  }

  function positionOf(index) {
    const g = state.graph, n = nodeCount(), c = firstCluster();
    if (index >= c) return [g.clusters.x[index - c], g.clusters.y[index - c]];
    return index < n ? [g.nodes.x[index], g.nodes.y[index]] : [g.external.x[index - n], g.external.y[index - n]];
  }

  // The vertex a product id is drawn as: itself, or the cluster it is folded into.
  function vertexOf(productId) {
    if (state.indexOf.has(productId)) return state.indexOf.get(productId);
    if (state.clusterOf.has(productId)) return firstCluster() + state.clusterOf.get(productId);
    return undefined;
  }

  function index(graph) {
    state.graph = graph;
    state.indexOf = new Map();
    graph.nodes.id.forEach(function (id, i) { state.indexOf.set(id, i); });
    const n = graph.nodes.id.length;
    graph.external.id.forEach(function (id, j) { state.indexOf.set(id, n + j); });
    state.clusterOf = new Map();
    graph.hidden.id.forEach(function (id, k) { state.clusterOf.set(id, graph.hidden.cluster[k]); });
    const total = n + graph.external.id.length + graph.clusters.id.length;
    state.parentsOf = Array.from({length: total}, function () { return []; });
    state.childrenOf = Array.from({length: total}, function () { return []; });
    for (let k = 0; k < graph.edges.length; k += 2) {
      state.parentsOf[graph.edges[k + 1]].push(graph.edges[k]);
      state.childrenOf[graph.edges[k]].push(graph.edges[k + 1]);
    }
  }

  function markerSize(n) {
    if (n <= 40) return 18;
    if (n <= 200) return 13;
    if (n <= GL_THRESHOLD) return 9;
    return 6;
  }

  function hoverText(i) {
    const g = state.graph.nodes;
    const lines = ["<b>" + plotlyText(g.id[i]) + "</b>", "agent: " + plotlyText(g.agent[i])];
    if (g.step[i]) lines.push("step: " + plotlyText(g.step[i]));
    lines.push("confidence: " + formatConfidence(g.confidence[i]));
    if (g.fused[i]) lines.push("fused (blocked by a consumer)");
    if (g.error[i]) lines.push("status: error");
    return lines.join("<br>");
  }

  function shortLabel(i) {
    const g = state.graph.nodes;
    const text = g.step[i] || g.agent[i];
    return plotlyText(text.length > 18 ? text.slice(0, 17) + "…" : text);
  }

  function lineTrace(name, pairs, color, width, dash) {
    const x = [], y = [];
    pairs.forEach(function (pair) {
      const from = positionOf(pair[0]), to = positionOf(pair[1]);
      x.push(from[0], to[0], null);
      y.push(from[1], to[1], null);
    });
    return {
      name: name, type: state.gl ? "scattergl" : "scatter", mode: "lines", x: x, y: y,
      line: {color: color, width: width, dash: dash || "solid"}, hoverinfo: "skip", showlegend: false,
    };
  }

  function ringTrace(name, indices, color, size, width) {
    const x = [], y = [];
    indices.forEach(function (i) { const p = positionOf(i); x.push(p[0]); y.push(p[1]); });
    return {
      name: name, type: state.gl ? "scattergl" : "scatter", mode: "markers", x: x, y: y, hoverinfo: "skip",
      showlegend: false, marker: {symbol: "circle-open", size: size, color: color, line: {width: width, color: color}},
    };
  }

  function nodeTraces(size) {
    const g = state.graph.nodes, n = nodeCount();
    const dim = state.highlight ? state.highlight.nodes : null;
    // A folded drawing labels its clusters; its nodes tell who they are on hover.
    const labels = !state.gl && n <= 60 && !state.graph.folded;
    const known = {x: [], y: [], color: [], symbol: [], size: [], lineWidth: [], lineColor: [], opacity: [], text: [], label: [], data: []};
    const unknown = {x: [], y: [], color: [], symbol: [], size: [], lineWidth: [], lineColor: [], opacity: [], text: [], label: [], data: []};
    for (let i = 0; i < n; i++) {
      const bucket = g.confidence[i] === null ? unknown : known;
      bucket.x.push(g.x[i]);
      bucket.y.push(g.y[i]);
      bucket.color.push(g.confidence[i] === null ? COLOR.unknown : g.confidence[i]);
      bucket.symbol.push(g.fused[i] ? "x" : "circle");
      bucket.size.push(g.fused[i] ? Math.round(size * 1.3) : size);
      bucket.lineWidth.push(g.error[i] ? 3 : g.fused[i] ? 1.5 : 1);
      bucket.lineColor.push(g.error[i] || g.fused[i] ? COLOR.error : "#ffffff");
      bucket.opacity.push(dim && !dim.has(i) ? 0.25 : 1);
      bucket.text.push(hoverText(i));
      bucket.label.push(labels ? shortLabel(i) : "");
      bucket.data.push(i);
    }
    const type = state.gl ? "scattergl" : "scatter";
    function trace(name, bucket, extra) {
      return Object.assign({
        name: name, type: type, mode: labels ? "markers+text" : "markers", x: bucket.x, y: bucket.y,
        customdata: bucket.data, hovertext: bucket.text, hoverinfo: "text", text: bucket.label,
        textposition: "bottom center", textfont: {size: 10, color: "#667085"}, showlegend: false,
        marker: {
          color: bucket.color, symbol: bucket.symbol, size: bucket.size, opacity: bucket.opacity,
          line: {width: bucket.lineWidth, color: bucket.lineColor},
        },
      }, extra || {});
    }
    const scored = trace("nodes", known);
    Object.assign(scored.marker, {
      colorscale: state.graph.colorscale, cmin: 0, cmax: 1, showscale: true,
      colorbar: {
        title: {text: "confidence", side: "right", font: {size: 11, color: "#667085"}}, thickness: 10, len: 0.55,
        outlinewidth: 0, tickvals: [0, 0.5, 1], tickfont: {size: 10, color: "#667085"}, x: 1.01,
      },
    });
    return [scored, trace("nodes-unknown", unknown)];
  }

  function externalTrace(size) {
    const g = state.graph.external, n = nodeCount();
    const text = g.id.map(function (id, j) {
      return "<b>" + plotlyText(id) + "</b><br>" +
        (g.trace_id[j] === null ? "not arrived yet" : "in trace " + plotlyText(g.trace_id[j]));
    });
    return {
      name: "external", type: state.gl ? "scattergl" : "scatter", mode: "markers", x: g.x, y: g.y,
      customdata: g.id.map(function (id, j) { return n + j; }), hovertext: text, hoverinfo: "text", showlegend: false,
      marker: {symbol: "diamond-open", size: size, color: COLOR.external, line: {width: 2, color: COLOR.external}},
    };
  }

  function clusterText(k) {
    const c = state.graph.clusters;
    const lines = ["<b>" + c.count[k].toLocaleString("en") + " nodes folded</b>",
      c.agent[k] ? "agent: " + plotlyText(c.agent[k]) : "several agents"];
    if (c.round[k]) lines.push("round " + plotlyText(c.round[k]));
    lines.push("worst confidence: " + formatConfidence(c.worst[k]));
    lines.push("from " + plotlyText(c.first[k]) + " to " + plotlyText(c.last[k]));
    lines.push("no anomaly inside: fused, failed and low-confidence nodes are drawn on their own");
    lines.push("<i>click to expand</i>");
    return lines.join("<br>");
  }

  // Folded nodes: one square each, sized by how many it holds, colored by
  // its worst confidence, labelled with its count.
  function clusterTrace(size) {
    const c = state.graph.clusters, first = firstCluster();
    const dim = state.highlight ? state.highlight.nodes : null;
    return {
      name: "clusters", type: state.gl ? "scattergl" : "scatter", mode: state.gl ? "markers" : "markers+text",
      x: c.x, y: c.y, customdata: c.id.map(function (_, k) { return first + k; }),
      hovertext: c.id.map(function (_, k) { return clusterText(k); }), hoverinfo: "text", showlegend: false,
      text: c.count.map(function (count) { return "×" + count.toLocaleString("en"); }),
      textposition: "bottom center", textfont: {size: 10, color: "#475467"},
      marker: {
        symbol: "square", showscale: false, colorscale: state.graph.colorscale, cmin: 0, cmax: 1,
        color: c.worst.map(function (w) { return w === null ? COLOR.unknown : w; }),
        size: c.count.map(function (count) { return Math.round(size + 4 + Math.min(16, 4 * Math.log10(count))); }),
        opacity: c.id.map(function (_, k) { return dim && !dim.has(first + k) ? 0.25 : 0.9; }),
        line: {width: 1.5, color: "#344054"},
      },
    };
  }

  function retryPairs() {
    const pairs = [], retries = state.graph.retries || [];
    for (let k = 0; k < retries.length; k += 2) pairs.push([retries[k], retries[k + 1]]);
    return pairs;
  }

  function edgePairs() {
    const pairs = [], edges = state.graph.edges;
    for (let k = 0; k < edges.length; k += 2) pairs.push([edges[k], edges[k + 1]]);
    return pairs;
  }

  // The graph's own traces, rebuilt only when the graph or the highlight
  // changes: Plotly.react compares arrays by reference, so a new selection on
  // a 5,000-node graph only redraws the small overlay traces.
  let base = {graph: null, highlight: undefined, traces: []};

  function baseTraces(size) {
    if (base.graph !== state.graph || base.highlight !== state.highlight) {
      const h = state.highlight;
      const traces = [lineTrace("edges", edgePairs(), COLOR.edge, 1), lineTrace("retries", retryPairs(), COLOR.retry, 1.5, "dash")];
      if (h) traces.push(lineTrace("highlight-edges", h.edges, h.kind === "cause" ? COLOR.cause : COLOR.impact, 3));
      if (h && h.skips && h.skips.length) traces.push(lineTrace("highlight-skips", h.skips, COLOR.cause, 2, "dot"));
      traces.push(clusterTrace(size));
      traces.push.apply(traces, nodeTraces(size));
      traces.push(externalTrace(size));
      labelSource = new Map();
      traces.forEach(function (trace) {
        if (!/text/.test(trace.mode)) return;
        const counts = trace.name === "clusters" ? state.graph.clusters.count : null;
        labelSource.set(trace.name, {
          text: trace.text.slice(),
          // Bigger clusters first, then nodes in the drawing's order.
          rank: trace.text.map(function (_, i) { return counts ? counts[i] : -trace.customdata[i]; }),
        });
      });
      base = {graph: state.graph, highlight: state.highlight, traces: traces};
    }
    return base.traces.slice();
  }

  function figureData() {
    const size = markerSize(nodeCount() + externalCount() + state.graph.clusters.id.length);
    const data = baseTraces(size);
    const h = state.highlight;
    if (h) {
      const color = h.kind === "cause" ? COLOR.cause : COLOR.impact;
      data.push(ringTrace("highlight-nodes", Array.from(h.nodes), color, size + 8, 2));
      if (h.causes.size) data.push(ringTrace("root-causes", Array.from(h.causes), color, size + 18, 3));
    }
    const fresh = [];
    state.fresh.forEach(function (id) { if (state.indexOf.has(id)) fresh.push(state.indexOf.get(id)); });
    if (fresh.length) data.push(ringTrace("fresh", fresh, COLOR.fresh, size + 12, 2));
    if (state.indexOf.has(state.selected)) {
      data.push(ringTrace("selected", [state.indexOf.get(state.selected)], COLOR.selected, size + 10, 2));
    }
    return data;
  }

  // Column headers only where the columns are few enough to read them, each
  // written where it starts; thousands of layers get no gridline each.
  function figureLayout() {
    const few = state.graph.columns <= 40;
    // Drawn level; fitLabels leaves out those that would touch at this zoom.
    const full = plot._fullLayout;
    const ticks = full && full.xaxis && state.graph === drawnGraph ? fittedHeaders(full) : headerColumns();
    return {
      margin: {l: 24, r: 24, t: 34, b: 16},
      xaxis: {
        tickvals: ticks, ticktext: ticks.map(headerText), side: "top", tickangle: 0,
        showgrid: few, gridcolor: "#f0f1f4", zeroline: false, tickfont: {size: 11, color: "#667085"},
        showticklabels: few,
      },
      yaxis: {visible: false, zeroline: false},
      dragmode: "pan", hovermode: "closest", showlegend: false,
      plot_bgcolor: "#ffffff", paper_bgcolor: "#ffffff",
      hoverlabel: {bgcolor: "#161a22", bordercolor: "#161a22", font: {color: "#ffffff", size: 12}, align: "left"},
      // Keeps the reader's zoom and pan across live redraws.
      uirevision: "dag",
    };
  }

  const plotConfig = {
    responsive: true, scrollZoom: true, displaylogo: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toImage"],
  };

  // Draws and resizes still in flight. `data-settled` is "1" when there are
  // none: the points are then where Plotly's axes say, so a click at a point's
  // position lands on it (a resize moves every point, a draw replaces them).
  let inFlight = 0;
  function settle(work) {
    inFlight += 1;
    plot.dataset.settled = "0";
    return Promise.resolve(work).finally(function () {
      inFlight -= 1;
      if (!inFlight) plot.dataset.settled = "1";
    });
  }

  // ---- labels that never overlap ------------------------------------------

  // Labels are drawn under their marks (SVG only). At a zoom where two would
  // touch, the less telling one (a smaller cluster, a later node) is left
  // blank until the reader zooms in: so no two labels ever overlap. Fitted
  // after every draw and every zoom, pan or resize; `data-labelled` counts
  // the fits, for readers and tests.
  const LABEL_PAD = 1;
  const measure = document.createElement("canvas").getContext("2d");
  let labelFits = 0;

  // Per labelled trace (by name): every label it may show, and the rank
  // that wins a place when two collide.
  let labelSource = new Map();

  function labelBoxes(trace, source, full) {
    const xa = full.xaxis, ya = full.yaxis, font = trace.textfont.size;
    measure.font = font + "px " + full.font.family;
    const sizes = trace.marker.size;
    return source.text.map(function (text, i) {
      if (!text) return null;
      const cx = xa.d2p(trace.x[i]), top = ya.d2p(trace.y[i]) + (Array.isArray(sizes) ? sizes[i] : sizes) / 2;
      const half = measure.measureText(text).width / 2 + LABEL_PAD;
      return [cx - half, top - LABEL_PAD, cx + half, top + font * 1.4 + LABEL_PAD];
    });
  }

  function fitLabels() {
    const full = plot._fullLayout;
    if (!full || !full.xaxis) return Promise.resolve();
    const labelled = [], sources = new Map();
    plot.data.forEach(function (trace, index) {
      const source = labelSource.get(trace.name);
      if (source && /text/.test(trace.mode)) { labelled.push(index); sources.set(index, source); }
    });
    const candidates = [];
    labelled.forEach(function (index) {
      const source = sources.get(index);
      labelBoxes(plot.data[index], source, full).forEach(function (box, i) {
        if (box) candidates.push({index: index, i: i, box: box, rank: source.rank[i]});
      });
    });
    candidates.sort(function (a, b) { return b.rank - a.rank || a.index - b.index || a.i - b.i; });
    const kept = [], texts = new Map();
    labelled.forEach(function (index) { texts.set(index, sources.get(index).text.map(function () { return ""; })); });
    candidates.forEach(function (c) {
      const clear = kept.every(function (k) {
        return c.box[2] <= k[0] || k[2] <= c.box[0] || c.box[3] <= k[1] || k[3] <= c.box[1];
      });
      if (!clear) return;
      kept.push(c.box);
      texts.get(c.index)[c.i] = sources.get(c.index).text[c.i];
    });
    const changed = labelled.filter(function (index) {
      const now = plot.data[index].text, want = texts.get(index);
      return !Array.isArray(now) || now.some(function (text, i) { return text !== want[i]; });
    });
    let done = changed.length
      ? Plotly.restyle(plot, {text: changed.map(function (index) { return texts.get(index); })}, changed)
      : Promise.resolve();
    const headers = fittedHeaders(full);
    if (String(headers) !== String(full.xaxis.tickvals || [])) {
      done = done.then(function () {
        return Plotly.relayout(plot, {"xaxis.tickvals": headers, "xaxis.ticktext": headers.map(headerText)});
      });
    }
    return settle(done.then(function () { labelFits += 1; plot.dataset.labelled = String(labelFits); }));
  }

  // The column headers, level and left to right: one that would touch the
  // header before it waits for a closer zoom.
  function headerColumns() {
    const labels = state.graph.layers;
    if (state.graph.columns > 40) return [];
    return labels.map(function (label, column) { return label ? column : -1; })
      .filter(function (column) { return column >= 0; });
  }

  function headerText(column) { return plotlyText(state.graph.layers[column]); }

  function fittedHeaders(full) {
    const xa = full.xaxis, size = full.xaxis.tickfont.size;
    measure.font = size + "px " + full.xaxis.tickfont.family;
    let right = -Infinity;
    return headerColumns().filter(function (column) {
      const cx = xa.d2p(column), half = measure.measureText(state.graph.layers[column]).width / 2 + 2 * LABEL_PAD;
      if (cx - half < right) return false;
      right = cx + half;
      return true;
    });
  }

  let drawCount = 0;
  let drawnGraph = null; // the graph the axes were last laid out for
  function draw() {
    if (!state.graph) return Promise.resolve();
    return settle(Plotly.react(plot, figureData(), figureLayout(), plotConfig).then(function () {
      if (!state.bound) {
        state.bound = true;
        plot.on("plotly_click", function (event) {
          const point = event.points && event.points[0];
          if (!point || typeof point.customdata !== "number") return;
          if (isCluster(point.customdata)) expand(point.customdata - firstCluster());
          else select(idAt(point.customdata));
        });
        plot.on("plotly_relayout", function () { drawMinimapWindow(); fitLabels(); });
      }
      drawnGraph = state.graph;
      drawMinimap();
      fitLabels();
      // For readers and tests: what is on screen now.
      drawCount += 1;
      plot.dataset.drawn = String(drawCount);
      plot.dataset.markers = String(nodeCount() + externalCount());
      plot.dataset.clusters = String(state.graph.clusters.id.length);
      plot.dataset.folded = state.graph.folded ? "1" : "0";
      plot.dataset.focus = state.graph.focus ? state.graph.focus.product_id : "";
    }));
  }

  function graphUrl() {
    const params = new URLSearchParams();
    state.view.expanded.forEach(function (id) { params.append("expand", id); });
    state.view.reveal.forEach(function (id) { params.append("reveal", id); });
    if (state.selected) params.append("reveal", state.selected);
    if (state.view.focus) {
      params.set("focus", state.view.focus);
      params.set("hops", state.view.hops);
    }
    return forProject(root.dataset.graphUrl, params);
  }

  // The header's figures, from the graph's `summary` or a live message's `trace`
  // row (the same keys): min confidence, final answer, last activity.
  function showSummary(summary) {
    const set = function (id, text) { const node = document.getElementById(id); if (node) node.textContent = text; };
    set("stat-nodes", summary.node_count.toLocaleString("en"));
    const min = document.getElementById("stat-min");
    if (min) { clear(min); min.appendChild(confidenceChip(summary.min_confidence, summary.min_color)); }
    const final = document.getElementById("stat-final");
    if (final) {
      clear(final);
      if (summary.final_id === null) final.appendChild(el("span", "none", "—"));
      else {
        final.appendChild(confidenceChip(summary.final_confidence, summary.final_color));
        if (summary.final_fused) final.appendChild(badge("fused", "fused"));
      }
    }
    const fused = document.getElementById("stat-fused");
    if (fused) {
      clear(fused);
      if (summary.fused_count) fused.appendChild(badge("✕ " + summary.fused_count, "fused"));
      else fused.textContent = "0";
    }
    const errors = document.getElementById("stat-errors");
    if (errors) {
      clear(errors);
      if (summary.error_count) errors.appendChild(badge(String(summary.error_count), "bad"));
      else errors.textContent = "0";
    }
    const verdict = document.getElementById("stat-verdict");
    if (verdict && "verdict" in summary) {
      clear(verdict);
      if (summary.verdict === "incorrect") verdict.appendChild(badge("incorrect", "bad"));
      else if (summary.verdict === "correct") verdict.appendChild(badge("correct", "good"));
      else verdict.appendChild(el("span", "none", "not reviewed"));
    }
    if (summary.ended_at) set("stat-ended", summary.ended_at.replace("T", " ").replace(/\.\d+/, "").replace("Z", ""));
  }

  function showFoldState() {
    const g = state.graph;
    const note = document.getElementById("fold-note");
    const drawn = nodeCount() + externalCount() + g.clusters.id.length;
    note.hidden = !g.folded && !g.focus;
    note.textContent = (g.focus ? "Focus on " + g.focus.product_id + ": " + g.focus.count.toLocaleString("en") + " of " +
      g.total.toLocaleString("en") + " nodes" : g.total.toLocaleString("en") + " nodes") +
      (g.folded ? ", folded into " + drawn.toLocaleString("en") + " marks" : "");
    document.getElementById("unfold-reset").hidden = state.view.expanded.size === 0;
    document.getElementById("focus-exit").hidden = !state.view.focus;
  }

  function loadGraph() {
    return fetchJSON(graphUrl()).then(function (graph) {
      const total = graph.nodes.id.length + graph.external.id.length + graph.clusters.id.length;
      state.gl = total > GL_THRESHOLD && webglAvailable();
      index(graph);
      statusBox.hidden = total > 0;
      if (!total) statusBox.textContent = "This trace has no nodes yet.";
      plot.dataset.renderer = state.gl ? "webgl" : "svg";
      showSummary(graph.summary);
      showFoldState();
      return draw();
    });
  }

  function reload() {
    // Indices move with a new drawing: a highlight would point at the wrong ones.
    state.highlight = null;
    clearButton.hidden = true;
    setActive(null);
    return loadGraph();
  }

  function expand(k) {
    state.view.expanded.add(state.graph.clusters.id[k]);
    reload().then(function () { toast("Expanded " + state.graph.total.toLocaleString("en") + "-node trace: click Fold back to undo."); });
  }

  // ---- the minimap ---------------------------------------------------------

  const minimap = document.getElementById("dag-minimap");

  function drawMinimap() {
    if (!minimap) return;
    const g = state.graph;
    const many = nodeCount() + externalCount() + g.clusters.id.length > 60;
    minimap.hidden = !many;
    if (!many) return;
    const x = g.nodes.x.concat(g.external.x, g.clusters.x), y = g.nodes.y.concat(g.external.y, g.clusters.y);
    const color = g.nodes.confidence.map(function (c) { return c === null ? 0.5 : c; })
      .concat(g.external.x.map(function () { return 0.5; }), g.clusters.worst.map(function (w) { return w === null ? 0.5 : w; }));
    Plotly.react(minimap, [{
      type: state.gl ? "scattergl" : "scatter", mode: "markers", x: x, y: y, hoverinfo: "skip",
      marker: {size: 3, color: color, colorscale: g.colorscale, cmin: 0, cmax: 1},
    }], {
      margin: {l: 2, r: 2, t: 2, b: 2}, xaxis: {visible: false, fixedrange: true}, yaxis: {visible: false, fixedrange: true},
      showlegend: false, plot_bgcolor: "#fbfbfc", paper_bgcolor: "#fbfbfc", dragmode: false, shapes: [],
    }, {displayModeBar: false, staticPlot: false, responsive: true}).then(function () {
      if (!minimap.dataset.bound) {
        minimap.dataset.bound = "1";
        // A click on the overview centres the graph there, keeping the zoom.
        minimap.addEventListener("click", function (event) {
          const full = minimap._fullLayout, box = minimap.getBoundingClientRect();
          if (!full) return;
          const cx = full.xaxis.p2d(event.clientX - box.left - full.xaxis._offset);
          const cy = full.yaxis.p2d(event.clientY - box.top - full.yaxis._offset);
          const xr = plot._fullLayout.xaxis.range, yr = plot._fullLayout.yaxis.range;
          const hw = (xr[1] - xr[0]) / 2, hh = (yr[1] - yr[0]) / 2;
          Plotly.relayout(plot, {"xaxis.range": [cx - hw, cx + hw], "yaxis.range": [cy - hh, cy + hh]});
        });
      }
      drawMinimapWindow();
    });
  }

  function drawMinimapWindow() {
    if (!minimap || minimap.hidden || !plot._fullLayout || !minimap._fullLayout) return;
    const xr = plot._fullLayout.xaxis.range, yr = plot._fullLayout.yaxis.range;
    Plotly.relayout(minimap, {shapes: [{
      type: "rect", xref: "x", yref: "y", x0: xr[0], x1: xr[1], y0: yr[0], y1: yr[1],
      line: {color: "#3b5bdb", width: 1}, fillcolor: "rgba(59,91,219,0.08)",
    }]});
  }

  // ---- selection and the panel ---------------------------------------------

  function select(productId, options) {
    const redraw = state.selected !== productId || state.highlight !== null;
    state.selected = productId;
    state.highlight = null;
    clearButton.hidden = true;
    if (redraw) draw();
    if (!(options && options.keepUrl)) {
      history.replaceState(null, "", "?" + new URLSearchParams({node: productId}).toString());
    }
    if (state.graph && !state.indexOf.has(productId) && state.clusterOf.has(productId)) {
      // Folded away: draw it on its own, then select it.
      state.view.reveal.add(productId);
      reload();
    }
    const i = state.indexOf.get(productId);
    if (i !== undefined && i >= nodeCount()) {
      showExternal(i - nodeCount());
      return;
    }
    fetchJSON(nodeApiUrl(productId)).then(showNode).catch(function (error) {
      showMessage(productId, error.message);
    });
  }

  // A node is named by what made it (agent · step), its id second.
  function openPanel(title, productId) {
    show("panel-empty", false);
    show("panel-body", true);
    document.getElementById("np-title").textContent = title;
    document.getElementById("np-id").textContent = productId || "";
    show("np-cause", false);
    show("np-impact", false);
    setActive(null);
  }

  function showMessage(productId, message) {
    openPanel(productId, "");
    const badges = document.getElementById("np-badges");
    clear(badges);
    badges.appendChild(badge(message, "warn"));
  }

  function showExternal(j) {
    const g = state.graph.external;
    openPanel(g.url[j] ? "in trace " + g.trace_id[j] : "not arrived yet", g.id[j]);
    const badges = document.getElementById("np-badges");
    clear(badges);
    if (g.url[j]) {
      const link = el("a", "btn small", "Open in trace " + g.trace_id[j]);
      link.href = g.url[j];
      badges.appendChild(link);
    } else {
      badges.appendChild(badge("not arrived yet: a parent id that no stored node has", "warn"));
    }
    ["np-facts", "np-content", "np-raw", "np-metrics", "np-fuses", "np-reviews", "np-parents", "np-children", "np-metadata"]
      .forEach(function (id) { clear(document.getElementById(id)); });
  }

  // The same formats as the trace header's (provenance.costs).
  function formatMs(value) {
    if (value === null || value === undefined) return null;
    return value < 1000 ? Math.round(value).toLocaleString("en-US") + " ms"
      : (value / 1000).toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2}) + " s";
  }

  function formatUsd(value) {
    if (value === 0) return "$0";
    if (value >= 1) return "$" + value.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
    if (value >= 0.001) return "$" + Number(value.toPrecision(3)).toString();
    return "$" + value.toFixed(6).replace(/0+$/, "");
  }

  function fact(list, label, value) {
    list.appendChild(el("dt", null, label));
    const dd = el("dd");
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = value === "" || value === null ? "—" : String(value);
    list.appendChild(dd);
  }

  function showNode(node) {
    if (node.product_id !== state.selected) return; // a newer selection won
    openPanel(node.step ? node.agent_id + " · " + node.step : node.agent_id, node.product_id);
    const badges = document.getElementById("np-badges");
    clear(badges);
    badges.appendChild(confidenceChip(node.confidence, node.confidence_color));
    if (node.is_final) badges.appendChild(badge("final answer"));
    if (node.fused) badges.appendChild(badge("✕ fused", "fused"));
    else if (node.fuse_state === "downweight") badges.appendChild(badge("downweighted", "warn"));
    if (node.status === "error") badges.appendChild(badge("error", "bad"));
    if (node.content_tier === "summary") badges.appendChild(badge("summary only", "summary"));

    const facts = document.getElementById("np-facts");
    clear(facts);
    fact(facts, "Agent", node.agent_id);
    fact(facts, "Step", node.step);
    fact(facts, "Source type", node.source_type);
    let confidence = formatConfidence(node.confidence);
    if (node.confidence_scale !== 1 && node.confidence_raw !== null) {
      confidence += " (sent as " + node.confidence_raw + " of " + node.confidence_scale + ")";
    }
    fact(facts, "Confidence", confidence);
    fact(facts, "Status", node.status);
    fact(facts, "Fuse state", node.fuse_state);
    fact(facts, "Round", node.round);
    fact(facts, "Duration", formatMs(node.duration_ms));
    fact(facts, "Model", node.model);
    fact(facts, "Tokens", node.usage ? node.usage.input_tokens + " in · " + node.usage.output_tokens + " out" : null);
    fact(facts, "Cost", node.cost_usd === null ? (node.usage ? "unpriced" : null) : formatUsd(node.cost_usd));
    fact(facts, "Timestamp", node.timestamp);
    fact(facts, "Trace", node.trace_id);

    document.getElementById("np-content").textContent = node.content || "—";
    document.getElementById("np-raw").textContent = node.raw_input || "—";
    const tier = document.getElementById("np-tier");
    tier.hidden = node.content_tier !== "summary";
    tier.textContent = tier.hidden ? "" : "Retention kept a summary of this node: the first 280 characters of its " +
      "content and raw input. SHA-256 of the full content: " + (node.content_sha256 || "—") + ".";
    const metadata = Object.keys(node.metadata || {}).length ? JSON.stringify(node.metadata, null, 2) : "—";
    document.getElementById("np-metadata").textContent = metadata;
    fillMetrics(node.metrics || {});
    fillList("np-fuses", node.fuses, fuseItem);
    fillList("np-reviews", node.reviews, reviewItem);
    fillList("np-parents", node.parents, neighbourItem);
    fillList("np-children", node.children, neighbourItem);
  }

  function fillMetrics(metrics) {
    const table = document.getElementById("np-metrics");
    clear(table);
    const names = Object.keys(metrics);
    names.forEach(function (name) {
      const row = el("tr");
      row.appendChild(el("td", null, name));
      const value = metrics[name];
      row.appendChild(el("td", null, typeof value === "number" ? String(Math.round(value * 1000) / 1000) : JSON.stringify(value)));
      table.appendChild(row);
    });
    show("np-metrics-none", names.length === 0);
  }

  function fillList(id, items, render) {
    const list = document.getElementById(id);
    clear(list);
    (items || []).forEach(function (item) { list.appendChild(render(item)); });
    show(id + "-none", !items || items.length === 0);
  }

  function fuseItem(fuse) {
    const item = el("li");
    const row = el("div", "row");
    row.appendChild(badge(fuse.decision, fuse.decision === "block" ? "fused" : fuse.decision === "downweight" ? "warn" : "good"));
    row.appendChild(el("span", "sub", "by " + (fuse.by_agent_id || "the producing agent") + (fuse.threshold !== null ? " · threshold " + fuse.threshold : "")));
    item.appendChild(row);
    if (fuse.reason) item.appendChild(el("span", "reason", fuse.reason));
    return item;
  }

  function reviewItem(review) {
    const item = el("li");
    const row = el("div", "row");
    row.appendChild(badge(review.verdict, review.verdict === "incorrect" ? "bad" : "good"));
    row.appendChild(el("span", "sub", (review.on_trace ? "on the trace's answer · " : "") + review.timestamp));
    item.appendChild(row);
    if (review.comment) item.appendChild(el("span", "reason", review.comment));
    return item;
  }

  // A link to a node: in this trace it selects the node, elsewhere it opens its trace.
  function nodeLink(productId, traceId, url) {
    const link = el("a", "node-link", productId);
    const here = traceId ? traceId === state.graph.trace_id : (state.indexOf.has(productId) || state.clusterOf.has(productId));
    if (here) {
      link.href = "?" + new URLSearchParams({node: productId}).toString();
      link.addEventListener("click", function (event) {
        event.preventDefault();
        select(productId);
      });
    } else if (url) {
      link.href = url;
    }
    return link;
  }

  function neighbourItem(item) {
    const li = el("li");
    const row = el("div", "row");
    row.appendChild(nodeLink(item.product_id, item.trace_id, item.url));
    if (!item.stored) {
      row.appendChild(badge("not arrived yet", "warn"));
      li.appendChild(row);
      return li;
    }
    row.appendChild(confidenceChip(item.confidence, item.color));
    if (item.fused) row.appendChild(badge("✕ fused", "fused"));
    if (item.error) row.appendChild(badge("error", "bad"));
    li.appendChild(row);
    let sub = item.agent_id + (item.step ? " · " + item.step : "");
    if (item.other_trace) sub += " · in trace " + item.trace_id;
    li.appendChild(el("span", "sub", sub));
    return li;
  }

  // ---- root cause and blast radius -----------------------------------------

  function setActive(kind) {
    document.getElementById("why-wrong").classList.toggle("active", kind === "cause");
    document.getElementById("what-broke").classList.toggle("active", kind === "impact");
  }

  // Shortest parent path from `start` up to `target` in the drawn graph, as indices.
  function pathUp(start, target) {
    const previous = new Map([[start, null]]);
    const queue = [start];
    while (queue.length) {
      const current = queue.shift();
      if (current === target) break;
      state.parentsOf[current].forEach(function (parent) {
        if (!previous.has(parent)) { previous.set(parent, current); queue.push(parent); }
      });
    }
    if (!previous.has(target)) return null;
    const path = [];
    for (let step = target; step !== null; step = previous.get(step)) path.push(step);
    return path; // from the cause down to the node
  }

  // On a folded drawing the path's ordinary stretches run through nearly
  // every cluster: only the vertices holding its anomalous steps are marked,
  // with the answer, joined in the path's order. A join over steps left out
  // is dotted, as the path reads "frag-c → … 378 nodes … → reason-12-15".
  function highlightFoldedPath(answer) {
    const nodes = new Set(), edges = [], skips = [], causes = new Set();
    const steps = answer.path_steps || [];
    let previous, skipped = false;
    steps.forEach(function (step, k) {
      const vertex = step.product_id === undefined ? undefined : vertexOf(step.product_id);
      if (vertex === undefined || !(step.reason || k === steps.length - 1)) { skipped = true; return; }
      nodes.add(vertex);
      if (previous !== undefined && previous !== vertex) (skipped ? skips : edges).push([previous, vertex]);
      previous = vertex;
      skipped = false;
    });
    answer.root_causes.forEach(function (cause) {
      const vertex = vertexOf(cause.product_id);
      if (vertex !== undefined) { causes.add(vertex); nodes.add(vertex); }
    });
    const asked = vertexOf(answer.product_id);
    if (asked !== undefined) nodes.add(asked);
    state.highlight = {kind: "cause", nodes: nodes, edges: edges, skips: skips, causes: causes};
  }

  function highlightCauses(answer) {
    if (state.graph.folded) { highlightFoldedPath(answer); return; }
    const start = state.indexOf.get(answer.product_id);
    const nodes = new Set(), edges = [], causes = new Set();
    function addPath(path) {
      path.forEach(function (i, k) {
        nodes.add(i);
        if (k > 0) edges.push([path[k - 1], i]);
      });
    }
    answer.root_causes.forEach(function (cause) {
      const target = state.indexOf.get(cause.product_id);
      if (target === undefined) return;
      causes.add(target);
      const path = start === undefined ? null : pathUp(start, target);
      if (path) addPath(path); else nodes.add(target);
    });
    // Causes outside this trace: the API's path still shows where they entered.
    const drawn = answer.path.filter(function (id) { return state.indexOf.has(id); }).map(function (id) { return state.indexOf.get(id); });
    if (drawn.length && !causes.size) addPath(drawn);
    if (start !== undefined) nodes.add(start);
    state.highlight = {kind: "cause", nodes: nodes, edges: edges, causes: causes};
  }

  function showCauses(answer) {
    show("np-impact", false);
    show("np-cause", true);
    const list = document.getElementById("np-cause-list");
    clear(list);
    answer.root_causes.forEach(function (cause) {
      const li = el("li");
      const row = el("div", "row");
      row.appendChild(nodeLink(cause.product_id, cause.trace_id, cause.url));
      row.appendChild(confidenceChip(cause.confidence, cause.color));
      li.appendChild(row);
      li.appendChild(el("span", "reason", panel.getAttribute("data-reason-" + cause.reason) || cause.reason));
      if (cause.fuse_reason) li.appendChild(el("span", "sub", "“" + cause.fuse_reason + "”" + (cause.fused_by ? " — " + cause.fused_by : "")));
      if (cause.trace_id !== state.graph.trace_id) li.appendChild(el("span", "sub", "in trace " + cause.trace_id));
      list.appendChild(li);
    });
    show("np-cause-none", answer.root_causes.length === 0);
    document.getElementById("np-cause-path").textContent = answer.path.length ? "path: " + pathText(answer.path_steps) : "";
  }

  // The path as its anomalous steps, the ordinary stretches between them folded.
  function pathText(steps) {
    return steps.map(function (step) {
      return step.skipped ? "… " + step.skipped.toLocaleString("en") + " nodes …" : step.product_id;
    }).join(" → ");
  }

  function highlightImpact(answer) {
    const start = vertexOf(answer.product_id);
    const nodes = new Set();
    if (start !== undefined) nodes.add(start);
    answer.descendants.forEach(function (id) { const v = vertexOf(id); if (v !== undefined) nodes.add(v); });
    const edges = edgePairs().filter(function (pair) { return nodes.has(pair[0]) && nodes.has(pair[1]); });
    state.highlight = {kind: "impact", nodes: nodes, edges: edges, causes: new Set()};
  }

  function showImpact(answer) {
    show("np-cause", false);
    show("np-impact", true);
    const elsewhere = answer.nodes.filter(function (n) { return n.trace_id !== state.graph.trace_id; });
    const total = answer.descendants.length;
    document.getElementById("np-impact-summary").textContent = total === 0
      ? "Nothing consumed it, directly or transitively."
      : total + " node" + (total === 1 ? "" : "s") + " consumed it, directly or transitively" +
        (elsewhere.length ? " (" + elsewhere.length + " in other traces)." : ".");
    const list = document.getElementById("np-impact-list");
    clear(list);
    answer.nodes.slice(0, 100).forEach(function (n) {
      const li = el("li");
      const row = el("div", "row");
      row.appendChild(nodeLink(n.product_id, n.trace_id, n.url));
      if (n.trace_id !== state.graph.trace_id) row.appendChild(el("span", "sub", "in trace " + n.trace_id));
      li.appendChild(row);
      list.appendChild(li);
    });
  }

  function analyse(suffix, kind, highlight, render) {
    if (!state.selected) return;
    const asked = state.selected;
    fetchJSON(nodeApiUrl(asked, suffix)).then(function (answer) {
      if (asked !== state.selected) return;
      highlight(answer);
      render(answer);
      setActive(kind);
      clearButton.hidden = false;
      draw();
      root.dataset.analyzed = kind;
    }).catch(function (error) { toast(error.message); });
  }

  function whyWrong() {
    // The page's address then shows the answer too: a link a person can share.
    history.replaceState(null, "", "?" + new URLSearchParams({analyze: state.selected}).toString());
    analyse("/root-cause", "cause", highlightCauses, showCauses);
  }

  document.getElementById("why-wrong").addEventListener("click", whyWrong);
  document.getElementById("what-broke").addEventListener("click", function () {
    analyse("/impact", "impact", highlightImpact, showImpact);
  });
  clearButton.addEventListener("click", function () {
    state.highlight = null;
    clearButton.hidden = true;
    setActive(null);
    draw();
  });
  document.getElementById("fit-graph").addEventListener("click", function () {
    Plotly.relayout(plot, {"xaxis.autorange": true, "yaxis.autorange": true});
  });

  // ---- live updates --------------------------------------------------------

  let refreshTimer = null;
  function scheduleRefresh() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(reload, 300);
  }

  // ---- focus and folding ---------------------------------------------------

  const hopsSelect = document.getElementById("focus-hops");
  document.getElementById("focus-on").addEventListener("click", function () {
    if (!state.selected) { toast("Select a node first."); return; }
    state.view.focus = state.selected;
    state.view.hops = hopsSelect.value;
    reload();
  });
  hopsSelect.addEventListener("change", function () {
    if (!state.view.focus) return;
    state.view.hops = hopsSelect.value;
    reload();
  });
  document.getElementById("focus-exit").addEventListener("click", function () {
    state.view.focus = "";
    reload();
  });
  document.getElementById("unfold-reset").addEventListener("click", function () {
    state.view.expanded.clear();
    state.view.reveal.clear();
    reload();
  });

  Denoise.liveSocket(root.dataset.ws, liveBadge, function (message) {
    if (message.type !== "nodes.added" && message.type !== "trace.changed") return;
    if (message.trace) showSummary(message.trace);
    if (message.type === "trace.changed") {
      // A review or a fuse about nodes already drawn: their colours and the open panel change.
      scheduleRefresh();
      if (state.selected) select(state.selected, {keepUrl: true});
      return;
    }
    message.nodes.forEach(function (id) { state.fresh.add(id); });
    toast(message.nodes.length + " new node" + (message.nodes.length === 1 ? "" : "s") + " arrived");
    setTimeout(function () {
      message.nodes.forEach(function (id) { state.fresh.delete(id); });
      draw();
    }, FRESH_MS);
    scheduleRefresh();
  });

  // The toolbar and the panel change the graph's room; Plotly only follows the window by itself.
  if (window.ResizeObserver) {
    new ResizeObserver(function () { if (state.graph) settle(Plotly.Plots.resize(plot)); }).observe(plot);
  }

  loadGraph().then(function () {
    if (state.selected) select(state.selected, {keepUrl: true});
    // Opened from an aggregate (`?analyze=`): the answer's root cause, shown at once.
    if (root.dataset.analyze && state.selected === root.dataset.analyze) {
      analyse("/root-cause", "cause", highlightCauses, showCauses);
    }
  }).catch(function (error) {
    statusBox.hidden = false;
    statusBox.textContent = "The graph could not be loaded. " + error.message;
  });
})();

// Nice ticks for every numeric axis of every chart: a step of 1, 2 or 5 ×
// 10^k, ticks on its multiples. Left to itself Plotly syncs an overlaying
// (right-hand) axis to the gridlines of the axis it overlays, which reads as
// 24.8, 49.6, 74.4; it also halves a count axis down to 0.5 and rounds a
// 0.5% step of a ".0%" axis into "0%, 1%, 1%". Denoise.chartLayout applies
// this to every axis from the values the traces put on it.
(function () {
  "use strict";

  // Ticks wanted along an axis: a step is the nice number nearest (on a log
  // scale) to the span over this many, so an axis gets about 3 to 8 ticks.
  const TICKS = { x: 6, y: 5 };

  function niceStep(rough) {
    const base = Math.pow(10, Math.floor(Math.log10(rough)));
    let best = base;
    [1, 2, 5, 10].forEach(function (m) {
      if (Math.abs(Math.log(m * base / rough)) < Math.abs(Math.log(best / rough))) best = m * base;
    });
    return best;
  }

  // The digits after the point a value written in steps of `step` needs.
  function decimals(step) {
    return Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  }

  function axisName(trace, letter) {
    const id = trace[letter + "axis"] || letter;
    return letter + "axis" + id.slice(1);
  }

  function numbers(values) {
    if (!Array.isArray(values)) return [];
    return values.filter(function (v) { return typeof v === "number" && isFinite(v); });
  }

  // What each axis holds: {axis name: {values: [...], bars: bool, strings: bool}}.
  function extents(traces, barmode) {
    const found = {};
    function note(name, values, bars) {
      const axis = found[name] || (found[name] = { values: [], bars: false, strings: false, barPlaces: 0 });
      if (Array.isArray(values) && values.some(function (v) { return typeof v === "string"; })) axis.strings = true;
      numbers(values).forEach(function (v) { axis.values.push(v); });
      axis.bars = axis.bars || bars;
    }
    const stacks = {};
    (traces || []).forEach(function (trace) {
      const across = trace.orientation === "h" ? "y" : "x";
      const along = across === "x" ? "y" : "x";
      if (trace.type === "heatmap") {
        note(axisName(trace, "x"), trace.x, false);
        note(axisName(trace, "y"), trace.y, false);
        return;
      }
      const bar = trace.type === "bar";
      note(axisName(trace, across), trace[across], false);
      if (bar) found[axisName(trace, across)].barPlaces += numbers(trace[across]).length;
      if (bar && trace.width && Array.isArray(trace[across])) {
        note(axisName(trace, across), numbers(trace[across]).map(function (v) { return v + trace.width / 2; }), false);
        note(axisName(trace, across), numbers(trace[across]).map(function (v) { return v - trace.width / 2; }), false);
      }
      if (bar && barmode === "stack") {
        // Stacked bars reach the sum of the bars at each place.
        const name = axisName(trace, along);
        const sums = stacks[name] || (stacks[name] = {});
        (trace[along] || []).forEach(function (v, i) {
          if (typeof v !== "number") return;
          const at = String((trace[across] || [])[i]);
          sums[at] = (sums[at] || 0) + v;
        });
        note(name, [], true);
      } else {
        note(axisName(trace, along), trace[along], bar);
      }
    });
    Object.keys(stacks).forEach(function (name) {
      Object.values(stacks[name]).forEach(function (v) { found[name].values.push(v); });
    });
    return found;
  }

  // The tick settings for one axis: `axis` as the page gave it, `held` what
  // the traces put on it. Category, date and log axes, and axes whose ticks
  // the page placed itself, keep Plotly's own.
  function ticksFor(name, axis, held) {
    if (axis.tickvals || axis.dtick || ["category", "multicategory", "date", "log"].indexOf(axis.type) >= 0) return {};
    if (held && held.strings) return {};
    // One bar: a linear step over its width alone puts labels at its edges; Plotly centres one under it.
    if (held && held.barPlaces === 1) return {};
    let low, high;
    const values = held ? held.values : [];
    if (Array.isArray(axis.range) && axis.autorange !== true) {
      [low, high] = axis.range;
    } else if (values.length) {
      low = Math.min.apply(null, values);
      high = Math.max.apply(null, values);
      if (held.bars || axis.rangemode === "tozero") {
        low = Math.min(low, 0);
        high = Math.max(high, 0);
      }
    }
    // Nothing to go by: Plotly's own automatic ticks are 1, 2, 5 × 10^k steps too.
    if (low === undefined || !(high > low)) return { tickmode: "auto" };
    let step = niceStep((high - low) / TICKS[name.charAt(0)]);
    // Counts step by whole numbers: no "1.5 reviews".
    if (values.length && values.every(Number.isInteger)) step = Math.max(step, 1);
    const set = { tickmode: "linear", tick0: 0, dtick: step };
    if (typeof axis.tickformat === "string" && axis.tickformat.endsWith("%")) {
      set.tickformat = "." + decimals(step * 100) + "%";
      if (axis.hoverformat === undefined) set.hoverformat = ".1%";
    }
    return set;
  }

  // A copy of `layout` with nice ticks on every numeric axis it has or the traces use.
  function withNiceTicks(layout, traces) {
    const held = extents(traces, layout.barmode);
    const result = Object.assign({}, layout);
    const names = new Set(Object.keys(result).filter(function (k) { return /^[xy]axis\d*$/.test(k); }));
    Object.keys(held).forEach(function (name) { names.add(name); });
    names.forEach(function (name) {
      const axis = result[name] || {};
      result[name] = Object.assign({}, axis, ticksFor(name, axis, held[name]));
    });
    return result;
  }

  window.DenoiseTicks = { niceStep: niceStep, withNiceTicks: withNiceTicks };
})();

// Rule builder: add and remove condition / destination rows by cloning the
// server-rendered <template> rows (no HTML is built from strings).
(function () {
  const form = document.getElementById("rule-form");
  if (!form) return;

  function addRow(kind) {
    const template = document.getElementById(kind + "-row-template");
    const body = form.querySelector('tbody[data-rows="' + kind + '"]');
    if (!template || !body) return;
    const row = template.content.firstElementChild.cloneNode(true);
    body.appendChild(row);
    const first = row.querySelector("input, select");
    if (first) first.focus();
  }

  form.addEventListener("click", function (event) {
    const add = event.target.closest("[data-add-row]");
    if (add) {
      event.preventDefault();
      addRow(add.dataset.addRow);
      return;
    }
    const remove = event.target.closest("[data-remove-row]");
    if (remove) {
      event.preventDefault();
      const row = remove.closest("tr");
      const body = row.parentElement;
      // A rule needs at least one condition: the last one is cleared, not removed.
      if (body.dataset.rows === "condition" && body.children.length === 1) {
        row.querySelectorAll("input").forEach(function (input) { input.value = ""; });
        return;
      }
      row.remove();
    }
  });
})();

// Rates are typed as percentages: each condition row says what its threshold
// means as it is typed, and asks when a share (0.2) was probably meant as 20%.
(function () {
  const form = document.getElementById("rule-form");
  const rates = document.getElementById("rate-metrics");
  if (!form || !rates) return;
  const rateMetrics = new Set(JSON.parse(rates.textContent));

  function describe(row) {
    const metric = row.querySelector('[name="condition_metric"]').value;
    const change = row.querySelector('[name="condition_change"]').value;
    const op = row.querySelector('[name="condition_op"]').value;
    const input = row.querySelector('[name="condition_threshold"]');
    const unit = row.querySelector("[data-unit]");
    const hint = row.querySelector("[data-threshold-hint]");
    const percent = rateMetrics.has(metric) && !change;
    unit.textContent = percent ? "%" : "";
    const typed = input.value.trim().replace(/%$/, "");
    const value = Number(typed);
    // Rebuilt only when what it says changes: a click on its button must find the button still there.
    const state = [percent, typed, op, metric].join("|");
    if (hint.dataset.state === state) return;
    hint.dataset.state = state;
    hint.replaceChildren();
    hint.className = "threshold-hint";
    if (!percent || typed === "" || !Number.isFinite(value)) return;
    if (value < 0 || value > 100) {
      hint.textContent = metric + " is a percentage: give 0-100.";
      hint.className = "threshold-hint bad";
      return;
    }
    const share = value / 100;
    if (value > 0 && value < 1) {
      const meant = Math.round(value * 100 * 1e6) / 1e6;
      hint.append("That is " + value + "% (a share of " + share + "). Did you mean " + meant + "%? ");
      const fix = document.createElement("button");
      fix.type = "button";
      fix.className = "link";
      fix.dataset.usePercent = String(meant);
      fix.textContent = "Use " + meant + "%";
      hint.append(fix);
      return;
    }
    hint.textContent = "Fires when " + metric + " " + op + " " + value + "% (a share of " + share + ").";
  }

  function refresh() {
    form.querySelectorAll("tr.condition-row").forEach(describe);
  }
  form.addEventListener("input", refresh);
  form.addEventListener("change", refresh);
  form.addEventListener("click", function (event) {
    const fix = event.target.closest("[data-use-percent]");
    if (!fix) {
      // a row added by the builder above gets its unit too
      window.setTimeout(refresh, 0);
      return;
    }
    event.preventDefault();
    const row = fix.closest("tr");
    row.querySelector('[name="condition_threshold"]').value = fix.dataset.usePercent;
    describe(row);
  });
  refresh();
})();

// The destination address input says what it wants for the chosen type.
(function () {
  const form = document.getElementById("rule-form");
  if (!form) return;
  const placeholders = {
    webhook: "https://example.org/hook", slack: "https://hooks.slack.com/services/…",
    email: "oncall@example.org, lead@example.org", pagerduty: "routing key (Events API v2)", inbox: "",
  };
  function update(row) {
    const type = row.querySelector('[name="destination_type"]').value;
    const address = row.querySelector('[name="destination_address"]');
    const secret = row.querySelector('[name="destination_secret"]');
    const shared = type.indexOf("shared:") === 0;
    address.placeholder = shared ? "set on the destinations page" : (placeholders[type] || "");
    // readOnly, not disabled: a disabled input is not posted, and the rows are read by position.
    address.readOnly = shared || type === "inbox";
    secret.readOnly = !(type === "webhook" || type === "inbox");
  }
  function refresh() {
    form.querySelectorAll("tr.destination-row").forEach(update);
  }
  form.addEventListener("change", refresh);
  form.addEventListener("click", function () { window.setTimeout(refresh, 0); });
  refresh();
})();

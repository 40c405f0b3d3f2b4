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

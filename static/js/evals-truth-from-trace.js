// The trace page's "Add to truth set" form: the new-name field shows when
// "New truth set…" is chosen.
(function () {
  "use strict";
  const select = document.getElementById("truth-dataset");
  const field = document.getElementById("truth-new-field");
  const input = document.getElementById("truth-new-dataset");
  if (!select || !field || !input) return;
  function sync() {
    const creating = select.value === "";
    field.hidden = !creating;
    input.required = creating;
  }
  select.addEventListener("change", sync);
  sync();
})();

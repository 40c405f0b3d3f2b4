// The API keys page: a Copy button copies the text of the element its
// data-copy-from names (the secret shown once, or the SDK snippet).
(function () {
  "use strict";
  function copied(button, words) {
    const before = button.textContent;
    button.textContent = words;
    window.setTimeout(function () { button.textContent = before; }, 2000);
  }

  // Without the clipboard API (plain HTTP to a remote host): select the text
  // and use the older copy command.
  function copyBySelection(source) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return document.execCommand("copy");
  }

  document.querySelectorAll("[data-copy-from]").forEach(function (button) {
    button.addEventListener("click", function () {
      const source = document.getElementById(button.dataset.copyFrom);
      if (!source) return;
      const text = source.textContent;
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { copied(button, "Copied"); },
          function () { copied(button, copyBySelection(source) ? "Copied" : "Select and copy"); });
      } else {
        copied(button, copyBySelection(source) ? "Copied" : "Select and copy");
      }
    });
  });
})();

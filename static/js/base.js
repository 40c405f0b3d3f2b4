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

  window.Denoise = {el: el, liveSocket: liveSocket};
})();

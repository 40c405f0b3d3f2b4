// The project switcher: each option's value is the same kind of page in that project.
(function () {
  "use strict";
  const switcher = document.getElementById("project-switcher");
  if (!switcher) return;
  switcher.addEventListener("change", function () {
    if (switcher.value.startsWith("/")) window.location.assign(switcher.value);
  });
})();

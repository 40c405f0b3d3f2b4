// The project switcher: navigates to the same page kind in the chosen project.
(function () {
  const switcher = document.getElementById("project-switcher");
  if (!switcher) return;
  switcher.addEventListener("change", function () {
    const current = switcher.dataset.current;
    const path = window.location.pathname;
    const target = current && path.startsWith("/p/" + current + "/")
      ? "/p/" + encodeURIComponent(switcher.value) + "/" + path.split("/")[3] + "/"
      : "/p/" + encodeURIComponent(switcher.value) + "/traces/";
    window.location.assign(target);
  });
})();

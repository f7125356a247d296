// Header-check progress on the external links page: polls the status JSON once a
// second while a check runs, and reloads the page when it ends (to show the answers).
(function () {
  var section = document.getElementById("check-status");
  if (!section || section.dataset.running !== "true") return;
  function reload() {
    // The page again, with its filter and page kept and the flash message dropped.
    var params = new URLSearchParams(window.location.search);
    params.delete("msg");
    params.delete("err");
    var query = params.toString();
    window.location.replace(window.location.pathname + (query ? "?" + query : ""));
  }
  function poll() {
    fetch("/api/admin/report/external/check", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        var done = document.getElementById("check-done");
        if (done) done.textContent = s.checked;
        if (s.running) setTimeout(poll, 1000);
        else reload();
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  poll();
})();

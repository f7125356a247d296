// Live crawl progress on the admin page: polls the status JSON once a second
// while a crawl runs, and reloads the page when it ends (to show the history).
(function () {
  var section = document.getElementById("progress");
  if (!section) return;
  var running = section.dataset.running === "true";
  function show(s) {
    ["discovered", "crawled", "queued", "errors"].forEach(function (k) {
      document.getElementById(k).textContent = s[k];
    });
    document.getElementById("rate").textContent = s.pages_per_second;
    document.getElementById("crawl-state").textContent = s.running ? "running" : (s.outcome || "idle");
  }
  function poll() {
    fetch("/api/admin/crawls/current", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        show(s);
        if (s.running) { running = true; setTimeout(poll, 1000); }
        else if (running) { window.location.replace("/admin"); }
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  if (running) poll();
})();

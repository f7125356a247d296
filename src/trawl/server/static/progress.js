// Live crawl progress on the admin page: polls the status JSON once a second
// while a crawl runs (bar, counters, rate, the URL being fetched, the last
// errors, what is left, and the crawl's row of the history), and reloads the
// page when it ends (to show the finished history).
(function () {
  var section = document.getElementById("progress");
  if (!section) return;
  var running = section.dataset.running === "true";
  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = value;
  }
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "";
    if (seconds < 60) return seconds + " s";
    var m = Math.floor(seconds / 60);
    if (m < 60) return m + " min " + (seconds % 60) + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }
  function historyRow(s) {
    var body = document.querySelector("#history tbody");
    if (!body || s.crawl_id === null) return;
    var row = body.querySelector("tr[data-crawl='" + s.crawl_id + "']");
    if (!row) {  // the page was drawn before the crawl made its row
      var none = body.querySelector("tr.none");
      if (none) none.remove();
      row = document.createElement("tr");
      row.dataset.crawl = s.crawl_id;
      ["id", "", "", "urls", "ok", "failed", "outcome", "note"].forEach(function (name) {
        var cell = document.createElement("td");
        if (name && name !== "id" && name !== "urls") cell.className = name;
        row.appendChild(cell);
      });
      row.cells[0].textContent = s.crawl_id;
      row.cells[3].textContent = s.start_urls.join(" ");
      body.insertBefore(row, body.firstChild);
    }
    row.querySelector(".ok").textContent = s.ok;
    row.querySelector(".failed").textContent = s.failed;
    row.querySelector(".outcome").textContent = s.running ? "running" : (s.outcome || "");
    row.querySelector(".note").textContent = s.note || "";
  }
  function errors(list) {
    var box = document.getElementById("last-errors-box");
    var ul = document.getElementById("last-errors");
    if (!box || !ul) return;
    ul.textContent = "";
    list.forEach(function (e) {
      var li = document.createElement("li");
      var url = document.createElement("span");
      url.className = "u";
      url.textContent = e.url;
      li.appendChild(url);
      li.appendChild(document.createTextNode(": " + e.error));
      ul.appendChild(li);
    });
    box.hidden = list.length === 0;
  }
  function show(s) {
    ["discovered", "crawled", "queued", "errors"].forEach(function (k) { text(k, s[k]); });
    text("rate", s.pages_per_second);
    text("crawl-state", s.running ? "running" : (s.outcome || "idle"));
    text("crawl-urls", s.start_urls.join(" "));
    text("fetching", s.fetching);
    text("left", s.running ? s.left : "–");
    text("eta", s.running && s.eta_seconds !== null ? "about " + duration(s.eta_seconds) : "");
    var bar = document.getElementById("crawl-bar");
    if (bar) {
      bar.value = s.progress;
      bar.textContent = Math.round(s.progress * 100) + "%";
    }
    errors(s.last_errors);
    historyRow(s);
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

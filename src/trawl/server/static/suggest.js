// Search as you type: the search box's datalist is filled from /api/suggest (page
// titles completing the words typed so far). Without JavaScript the form works as before.
(function () {
  var box = document.querySelector('form.search input[name="q"]');
  var list = document.getElementById("suggestions");
  if (!box || !list || !window.fetch) return;
  var timer = null;
  var asked = "";
  function fill(words) {
    list.textContent = "";
    words.forEach(function (title) {
      var option = document.createElement("option");
      option.value = title;
      list.appendChild(option);
    });
  }
  function ask() {
    var text = box.value;
    if (text.trim().length < 2 || text === asked) return;
    asked = text;
    fetch("/api/suggest?q=" + encodeURIComponent(text))
      .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
      .then(function (answer) { if (box.value === text) fill(answer.suggestions || []); })
      .catch(function () {});
  }
  box.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(ask, 120);  // one request per pause in typing
  });
})();

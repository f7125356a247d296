// A form with data-confirm asks before it is sent. The question is data (it may name a
// crawled host), so it lives in an attribute the browser never runs, not in an inline
// handler: the Content-Security-Policy allows no inline script at all.
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});

// Times in the reader's own zone: every <time data-local datetime="..."> the server wrote in UTC is
// rewritten in the browser's zone, its UTC text kept as the title (shown on hover). Without this
// script the UTC text stays, and says so.
(function () {
  "use strict";
  var FORMATS = {
    datetime: { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" },
    date: { year: "numeric", month: "short", day: "numeric" },
    time: { hour: "2-digit", minute: "2-digit" },
    seconds: { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" }
  };

  function localise(root) {
    root.querySelectorAll("time[data-local][datetime]").forEach(function (element) {
      if (element.dataset.localised) { return; }
      var moment = new Date(element.getAttribute("datetime"));
      if (isNaN(moment.getTime())) { return; }
      var options = FORMATS[element.dataset.local] || FORMATS.datetime;
      var text = new Intl.DateTimeFormat(undefined, Object.assign({ timeZoneName: "short" }, options)).format(moment);
      element.title = element.textContent.trim();
      element.textContent = text;
      element.dataset.localised = "1";
    });
  }

  function start() {
    localise(document);
    // Rows a page adds later (a live table) are localised as they arrive.
    new MutationObserver(function () { localise(document); }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

// A part of a page that follows a job without reloading the page: every element with
// data-refresh-seconds reads its page's URL again after that many seconds (while the tab is shown)
// and takes the new text of the element of the same id; once the new one carries no
// data-refresh-seconds (the job ended), it stops. Unlike <meta http-equiv="refresh">, the reader's
// place, focus and zoom stay where they are (WCAG 2.2.1).
(function () {
  "use strict";

  function follow(element) {
    var seconds = Number(element.dataset.refreshSeconds);
    if (!element.id || !(seconds > 0)) { return; }
    window.setTimeout(function read() {
      if (document.hidden) {
        document.addEventListener("visibilitychange", read, { once: true });
        return;
      }
      fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          var fresh = html && new DOMParser().parseFromString(html, "text/html").getElementById(element.id);
          if (!fresh) { window.setTimeout(read, seconds * 1000); return; }
          element.innerHTML = fresh.innerHTML;
          Array.prototype.forEach.call(fresh.attributes, function (attribute) {
            element.setAttribute(attribute.name, attribute.value);
          });
          if (fresh.dataset.refreshSeconds) {
            window.setTimeout(read, seconds * 1000);
          } else {
            element.removeAttribute("data-refresh-seconds");
          }
        })
        .catch(function () { window.setTimeout(read, seconds * 2000); });
    }, seconds * 1000);
  }

  document.querySelectorAll("[data-refresh-seconds]").forEach(follow);
})();

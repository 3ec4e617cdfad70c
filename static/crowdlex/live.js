// Figures that stay current: every element with data-live-url polls that JSON every few seconds
// ({"figures": {key: text}, "bars": {key: percent}}) and writes each figure into the elements
// inside it that name its key (data-live="key"; progress bars: data-live-bar="key"). Polling
// pauses while the tab is hidden and resumes, with a fresh read, when it is shown again. A poll
// sends the ETag of the figures it holds; a 304 means nothing changed.
(function () {
  "use strict";
  var PERIOD = 4000;
  var MAX_PERIOD = 60000;
  var rendered = new WeakMap();

  function apply(root, data) {
    var figures = data.figures || {};
    var bars = data.bars || {};
    root.querySelectorAll("[data-live]").forEach(function (element) {
      var value = figures[element.dataset.live];
      if (value !== undefined && element.textContent !== value) {
        element.textContent = value;
      }
    });
    root.querySelectorAll("[data-live-bar]").forEach(function (bar) {
      var percent = bars[bar.dataset.liveBar];
      if (percent === undefined) { return; }
      if (bar.hasAttribute("aria-valuenow")) { bar.setAttribute("aria-valuenow", String(percent)); }
      if (bar.firstElementChild) { bar.firstElementChild.style.width = percent + "%"; }
    });
    // Parts rendered anew by the server (a table whose rows come and go): replaced when they changed,
    // but not under the reader's keyboard focus, which a replacement would lose.
    var parts = data.parts || {};
    root.querySelectorAll("[data-live-part]").forEach(function (element) {
      var html = parts[element.dataset.livePart];
      if (html === undefined || rendered.get(element) === html) { return; }
      if (element.contains(document.activeElement)) { return; }
      element.innerHTML = html;
      rendered.set(element, html);
    });
    root.dataset.liveUpdated = new Date().toISOString();
  }

  function watch(root) {
    var period = PERIOD;
    var timer = null;
    var tag = null;

    function schedule(delay) {
      window.clearTimeout(timer);
      timer = document.hidden ? null : window.setTimeout(poll, delay);
    }

    function poll() {
      // The figures' ETag names the benchmark's state: while nothing changed the server answers
      // 304 without a body and nothing is redrawn.
      var headers = { Accept: "application/json" };
      if (tag) { headers["If-None-Match"] = tag; }
      fetch(root.dataset.liveUrl, { credentials: "same-origin", cache: "no-store", headers: headers })
        .then(function (response) {
          if (response.status === 304) { return null; }
          if (!response.ok) { throw new Error(String(response.status)); }
          tag = response.headers.get("ETag");
          return response.json();
        })
        .then(function (data) {
          if (data) { apply(root, data); }
          period = PERIOD;
          schedule(period);
        })
        .catch(function () {
          // A server that restarts or a lost connection: wait longer each time, up to a minute.
          period = Math.min(period * 2, MAX_PERIOD);
          schedule(period);
        });
    }

    document.addEventListener("visibilitychange", function () {
      if (document.hidden) {
        window.clearTimeout(timer);
        timer = null;
      } else {
        schedule(0);
      }
    });
    schedule(period);
  }

  document.querySelectorAll("[data-live-url]").forEach(watch);
})();

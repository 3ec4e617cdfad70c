// Live progress of running export jobs: polls each job's status until it is done or failed.
(function () {
  "use strict";
  var rows = document.querySelectorAll("#export-jobs tr[data-job]");
  var labels = { pending: "pending", running: "running", done: "done", failed: "failed" };

  function update(row, job) {
    var percent = Math.round((job.progress || 0) * 100);
    var bar = row.querySelector(".progress");
    bar.setAttribute("aria-valuenow", String(percent));
    bar.firstElementChild.style.width = percent + "%";
    var badge = row.querySelector(".status .badge");
    badge.textContent = labels[job.status] || job.status;
    badge.className = "badge" + (job.status === "done" ? " ok" : job.status === "failed" ? " bad" : " warn");
    row.dataset.status = job.status;
    if (job.status === "done") {
      var link = document.createElement("a");
      link.className = "button";
      link.href = row.dataset.downloadUrl;
      link.textContent = "Download";
      row.querySelector(".download").replaceChildren(link);
    }
    if (job.status === "failed" && job.error) {
      var error = document.createElement("div");
      error.className = "error";
      error.textContent = job.error;
      row.querySelector(".status").appendChild(error);
    }
  }

  function poll(row) {
    fetch(row.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (job) {
        if (!job) { return; }
        update(row, job);
        if (job.status === "pending" || job.status === "running") {
          window.setTimeout(function () { poll(row); }, 1500);
        }
      })
      .catch(function () { window.setTimeout(function () { poll(row); }, 5000); });
  }

  rows.forEach(function (row) {
    if (row.dataset.status === "pending" || row.dataset.status === "running") { poll(row); }
  });
})();

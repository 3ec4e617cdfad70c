// The annotator's page of a scheme with one choice per item: keyboard use, the every-row-answered
// check, and time on page. Keys: up/down or j/k move between rows; each choice's letter or number
// (its data-keys, e.g. a/r/s or 1/2/3 for SWORDS) chooses; Enter submits.
(function () {
  "use strict";

  var form = document.getElementById("hit-form");
  if (!form || form.dataset.editable !== "1") {
    return;
  }
  var rows = Array.prototype.slice.call(form.querySelectorAll(".item"));
  var errorBox = document.getElementById("hit-error");
  var secondsField = form.querySelector("input[name=seconds_on_page]");
  var submitButton = document.getElementById("hit-submit");
  // Key -> choice value, read from the first row's choices (every row offers the same ones).
  var CHOICES = {};
  if (rows.length) {
    rows[0].querySelectorAll("input[type=radio][data-keys]").forEach(function (input) {
      input.dataset.keys.split(" ").forEach(function (key) {
        if (key) {
          CHOICES[key.toLowerCase()] = input.value;
        }
      });
    });
  }
  var submitting = false;

  // Time on page counts only while the page is visible, so a tab left in the background does
  // not inflate it; the server bounds it again by the time since the claim.
  var visibleMs = 0;
  var visibleSince = document.visibilityState === "hidden" ? null : performance.now();
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden" && visibleSince !== null) {
      visibleMs += performance.now() - visibleSince;
      visibleSince = null;
    } else if (document.visibilityState === "visible" && visibleSince === null) {
      visibleSince = performance.now();
    }
  });
  function secondsOnPage() {
    var ms = visibleMs + (visibleSince === null ? 0 : performance.now() - visibleSince);
    return (ms / 1000).toFixed(1);
  }

  function isAnswered(row) {
    return row.querySelector("input[type=radio]:checked") !== null;
  }

  function currentIndex() {
    var active = document.activeElement;
    var row = active && active.closest ? active.closest(".item") : null;
    return rows.indexOf(row);
  }

  function focusRow(index, options) {
    if (!rows.length) {
      return;
    }
    var row = rows[Math.max(0, Math.min(rows.length - 1, index))];
    // On load the page stays at the top so the text is read first.
    var quiet = options && options.quiet;
    row.focus({ preventScroll: true });
    if (!quiet) {
      row.scrollIntoView({ block: "nearest" });
    }
  }

  // Once answered, a row flagged as missing is no longer flagged.
  function markRow(row) {
    if (!isAnswered(row)) {
      return;
    }
    row.classList.remove("missing");
    var group = row.querySelector("[role=radiogroup]");
    if (group) {
      group.removeAttribute("aria-invalid");
    }
  }

  function choose(index, value) {
    var row = rows[index];
    var input = Array.prototype.find.call(row.querySelectorAll("input[type=radio]"), function (candidate) {
      return candidate.value === value;
    });
    if (!input || input.disabled) {
      return;
    }
    input.checked = true;
    markRow(row);
    if (index + 1 < rows.length) {
      focusRow(index + 1);
    } else if (submitButton) {
      submitButton.focus();
    }
  }

  function describe(row) {
    return "row " + row.dataset.number + " (“" + row.dataset.text + "”)";
  }

  // Returns true when every row is answered; otherwise names the unanswered rows and
  // focuses the first of them.
  function checkAllAnswered() {
    var missing = rows.filter(function (row) {
      return !isAnswered(row);
    });
    rows.forEach(function (row) {
      var isMissing = missing.indexOf(row) !== -1;
      row.classList.toggle("missing", isMissing);
      var group = row.querySelector("[role=radiogroup]");
      if (group) {
        if (isMissing) {
          group.setAttribute("aria-invalid", "true");
        } else {
          group.removeAttribute("aria-invalid");
        }
      }
    });
    if (!missing.length) {
      errorBox.hidden = true;
      errorBox.textContent = "";
      return true;
    }
    // textContent, never innerHTML: the row texts are data. Past three rows, numbers are enough.
    errorBox.textContent =
      missing.length > 3
        ? "Please answer every row before submitting. " +
          missing.length +
          " rows are not answered yet: rows " +
          missing
            .map(function (row) {
              return row.dataset.number;
            })
            .join(", ") +
          "."
        : "Please answer every row before submitting. Not answered yet: " + missing.map(describe).join(", ") + ".";
    errorBox.hidden = false;
    focusRow(rows.indexOf(missing[0]));
    return false;
  }

  // The page does its own check so it can name the rows; the radios keep `required` for
  // browsers without script, and the server checks again.
  form.noValidate = true;
  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    if (!checkAllAnswered()) {
      event.preventDefault();
      return;
    }
    secondsField.value = secondsOnPage();
    submitting = true;
    if (submitButton) {
      submitButton.setAttribute("aria-busy", "true");
    }
  });

  form.addEventListener("change", function (event) {
    var row = event.target.closest ? event.target.closest(".item") : null;
    if (row) {
      markRow(row);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) {
      return;
    }
    var target = event.target;
    var tag = target && target.tagName ? target.tagName.toLowerCase() : "";
    if (tag === "textarea" || tag === "select" || (tag === "input" && target.type !== "radio")) {
      return;
    }
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    var index = currentIndex();

    if (key === "ArrowDown" || key === "j") {
      event.preventDefault();
      focusRow(index < 0 ? 0 : index + 1);
    } else if (key === "ArrowUp" || key === "k") {
      event.preventDefault();
      focusRow(index < 0 ? 0 : index - 1);
    } else if (Object.prototype.hasOwnProperty.call(CHOICES, key) && !event.shiftKey) {
      event.preventDefault();
      if (index < 0) {
        // Nothing focused yet: answer the first unanswered row.
        index = rows.findIndex(function (row) {
          return !isAnswered(row);
        });
        if (index < 0) {
          return;
        }
      }
      choose(index, CHOICES[key]);
    } else if (key === "Enter") {
      // Buttons, links and the instructions' summary keep their own Enter.
      if (tag === "button" || tag === "a" || tag === "summary") {
        return;
      }
      event.preventDefault();
      if (typeof form.requestSubmit === "function") {
        form.requestSubmit();
      } else if (checkAllAnswered()) {
        secondsField.value = secondsOnPage();
        form.submit();
      }
    }
  });

  // Start where the work is: the first unanswered row (or the error message after a refusal).
  if (!errorBox.hidden) {
    var firstMissing = rows.findIndex(function (row) {
      return row.classList.contains("missing");
    });
    if (firstMissing >= 0) {
      focusRow(firstMissing);
    } else {
      errorBox.focus();
    }
  } else {
    var firstOpen = rows.findIndex(function (row) {
      return !isAnswered(row);
    });
    focusRow(firstOpen < 0 ? 0 : firstOpen, { quiet: true });
  }
})();

// The annotator's page of a scheme with one choice per item: keyboard use and the every-row-answered
// check (the page shell, static/hits/hit_page.js, keeps the draft and the time on page). Keys, only
// while the focus is in the rows: up/down or j/k move between rows; each key a choice declares (its
// data-keys, the scheme's Choice.keys, all shown on its button: 1/a, 2/r, 3/s for SWORDS; 1, - and 0
// for ProLex, the values they record) chooses it; Enter submits. The single-character keys stay
// quiet when the annotator turned them off (the form's data-shortcuts, WCAG 2.1.4).
(function () {
  "use strict";

  var form = document.getElementById("hit-form");
  if (!form || form.dataset.editable !== "1") {
    return;
  }
  var rows = Array.prototype.slice.call(form.querySelectorAll(".item"));
  var errorBox = document.getElementById("hit-error");
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
    // As a click would: the input and change events tell the page shell (counter, draft).
    input.click();
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

  // On the rows only: elsewhere (the instructions, the flag form, the browser's own keys) every
  // key keeps its usual meaning.
  form.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) {
      return;
    }
    var index = currentIndex();
    if (index < 0) {
      return;
    }
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    var singleKeys = form.dataset.shortcuts !== "off";
    // Shift+letter is left alone (a capital is not the letter's key); a digit or sign that the
    // keyboard's layout types with Shift (1 on AZERTY) still chooses.
    var shiftedLetter = event.shiftKey && key.toUpperCase() !== key;

    if (key === "ArrowDown" || (singleKeys && key === "j")) {
      event.preventDefault();
      focusRow(index + 1);
    } else if (key === "ArrowUp" || (singleKeys && key === "k")) {
      event.preventDefault();
      focusRow(index - 1);
    } else if (singleKeys && Object.prototype.hasOwnProperty.call(CHOICES, key) && !shiftedLetter) {
      event.preventDefault();
      choose(index, CHOICES[key]);
    } else if (key === "Enter" && submitButton) {
      event.preventDefault();
      // A click runs the submit listeners (this check, the shell's time on page) as a button would.
      submitButton.click();
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

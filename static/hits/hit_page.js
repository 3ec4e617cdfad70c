// The HIT page shell, for every scheme (templates/hits/assignment.html); it runs before the
// scheme's script. It keeps the rows clear of the sticky text, counts down to the deadline, counts
// the answered rows, keeps a draft of the answers and the time on page in the browser so a reload
// loses neither, holds the single-key shortcut setting, asks before a HIT with answers is returned,
// and sends flags without leaving the page. Nothing here knows a scheme's answers: a row (.item) is
// answered once one of its fields named item-… has a value.
(function () {
  "use strict";

  var DRAFT_PREFIX = "crowdlex:draft:";
  var DRAFT_DAYS = 3;
  var SHORTCUTS_KEY = "crowdlex:shortcuts";

  // Storage may be missing or full (private modes): the page then works as it would without it.
  var storage = {
    get: function (key) {
      try {
        return window.localStorage.getItem(key);
      } catch (error) {
        return null;
      }
    },
    set: function (key, value) {
      try {
        window.localStorage.setItem(key, value);
      } catch (error) {
        // Nothing to do: the answers are still on the page.
      }
    },
    remove: function (key) {
      try {
        window.localStorage.removeItem(key);
      } catch (error) {
        // As above.
      }
    },
    keys: function () {
      try {
        return Object.keys(window.localStorage);
      } catch (error) {
        return [];
      }
    },
  };

  // As the server's `duration` filter writes it: "45 s", "3 min 05 s", "1 h 02 min".
  function duration(seconds) {
    if (seconds < 60) {
      return seconds + " s";
    }
    var minutes = Math.floor(seconds / 60);
    if (minutes < 60) {
      return minutes + " min " + String(seconds % 60).padStart(2, "0") + " s";
    }
    return Math.floor(minutes / 60) + " h " + String(minutes % 60).padStart(2, "0") + " min";
  }

  // The countdown starts from the seconds the server counted, so a wrong clock on the device
  // does not move the deadline.
  var countdown = document.querySelector(".hit-countdown[data-seconds-left]");
  if (countdown) {
    var end = Date.now() + Number(countdown.dataset.secondsLeft) * 1000;
    var timeUp = document.getElementById("hit-time-up");
    var tick = function () {
      var left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
      countdown.textContent = duration(left) + " left";
      countdown.classList.toggle("low", left <= 120);
      if (left === 0) {
        if (timeUp) {
          timeUp.hidden = false;
        }
        return;
      }
      window.setTimeout(tick, 1000);
    };
    tick();
  }

  // The text stays at the top while the rows scroll (position: sticky); scrolling to a row, by the
  // keyboard or the browser, keeps the row clear of it.
  var card = document.querySelector(".hit-context");
  if (card) {
    var keepRowsClear = function () {
      document.documentElement.style.scrollPaddingTop = card.offsetHeight + 16 + "px";
    };
    keepRowsClear();
    window.addEventListener("resize", keepRowsClear);
  }

  var form = document.getElementById("hit-form");
  if (!form || form.dataset.editable !== "1") {
    return;
  }
  var rows = Array.prototype.slice.call(form.querySelectorAll(".item"));

  function answerFields(root) {
    return Array.prototype.slice.call(root.querySelectorAll("[name^='item-']"));
  }

  function rowAnswered(row) {
    return answerFields(row).some(function (field) {
      if (field.type === "radio" || field.type === "checkbox") {
        return field.checked;
      }
      return field.value.trim() !== "";
    });
  }

  function answeredCount() {
    return rows.filter(rowAnswered).length;
  }

  var answeredBox = document.getElementById("hit-answered");
  function showAnswered() {
    if (answeredBox) {
      answeredBox.textContent = answeredCount() + " of " + rows.length + " answered";
    }
  }

  // --- the draft: answers and time on page, per assignment ---

  var now = Date.now();
  storage.keys().forEach(function (key) {
    if (key.indexOf(DRAFT_PREFIX) !== 0) {
      return;
    }
    var saved = null;
    try {
      saved = JSON.parse(storage.get(key));
    } catch (error) {
      saved = null;
    }
    if (!saved || !(now - saved.saved < DRAFT_DAYS * 86400000)) {
      storage.remove(key);
    }
  });

  var draftKey = form.dataset.draftKey;
  var draft = {};
  try {
    draft = JSON.parse(storage.get(draftKey)) || {};
  } catch (error) {
    draft = {};
  }

  // Rows answered on arrival (the server's own, after a refused submit) keep their answers.
  var answeredOnArrival = rows.filter(rowAnswered);
  (draft.answers || []).forEach(function (pair) {
    answerFields(form).forEach(function (field) {
      if (field.name !== pair[0] || answeredOnArrival.indexOf(field.closest(".item")) !== -1) {
        return;
      }
      if (field.type === "radio" || field.type === "checkbox") {
        if (field.value === pair[1]) {
          field.checked = true;
        }
      } else if (!field.value) {
        field.value = pair[1];
      }
    });
  });
  showAnswered();

  // Time on page counts only while the page is visible, so a tab left in the background does
  // not inflate it; it adds up across reloads. The server bounds it by the time since the claim.
  var earlierMs = Number(draft.ms) || 0;
  var visibleMs = 0;
  var visibleSince = document.visibilityState === "hidden" ? null : Date.now();
  function onPageMs() {
    return earlierMs + visibleMs + (visibleSince === null ? 0 : Date.now() - visibleSince);
  }

  function saveDraft() {
    var answers = [];
    new FormData(form).forEach(function (value, name) {
      if (name.indexOf("item-") === 0 && typeof value === "string") {
        answers.push([name, value]);
      }
    });
    storage.set(draftKey, JSON.stringify({ answers: answers, ms: onPageMs(), saved: Date.now() }));
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden" && visibleSince !== null) {
      visibleMs += Date.now() - visibleSince;
      visibleSince = null;
      saveDraft();
    } else if (document.visibilityState === "visible" && visibleSince === null) {
      visibleSince = Date.now();
    }
  });
  window.addEventListener("pagehide", saveDraft);
  ["change", "input"].forEach(function (type) {
    form.addEventListener(type, function () {
      showAnswered();
      saveDraft();
    });
  });

  // On the document, so it runs after the scheme's own submit check, which may stop the submit.
  document.addEventListener("submit", function (event) {
    if (event.target === form && !event.defaultPrevented) {
      form.querySelector("input[name=seconds_on_page]").value = (onPageMs() / 1000).toFixed(1);
    }
  });

  // --- single-key shortcuts (WCAG 2.1.4): on unless turned off; the scheme's script reads the form's data-shortcuts ---

  var shortcuts = document.getElementById("hit-shortcuts");
  var keyboardHelp = document.getElementById("keyboard-help");
  function applyShortcuts(on) {
    form.dataset.shortcuts = on ? "on" : "off";
    if (keyboardHelp) {
      keyboardHelp.hidden = !on;
    }
  }
  applyShortcuts(storage.get(SHORTCUTS_KEY) !== "off");
  if (shortcuts) {
    shortcuts.checked = form.dataset.shortcuts === "on";
    shortcuts.closest("label").hidden = false;
    shortcuts.addEventListener("change", function () {
      storage.set(SHORTCUTS_KEY, shortcuts.checked ? "on" : "off");
      applyShortcuts(shortcuts.checked);
    });
  }

  // --- returning a HIT that has answers asks first ---

  var returnForm = document.querySelector("form.hit-return");
  if (returnForm) {
    returnForm.addEventListener("submit", function (event) {
      var answered = answeredCount();
      if (
        answered > 0 &&
        !window.confirm(
          "You have answered " +
            answered +
            " of " +
            rows.length +
            " rows. Return this HIT anyway? These answers will not be saved."
        )
      ) {
        event.preventDefault();
      }
    });
  }

  // --- flags go without leaving the page (without script the form posts and the page comes back) ---

  var flagForm = document.getElementById("hit-flag-form");
  var flagStatus = document.getElementById("hit-flag-status");
  if (flagForm && flagStatus && window.fetch) {
    flagForm.addEventListener("submit", function (event) {
      event.preventDefault();
      flagStatus.classList.remove("error");
      flagStatus.textContent = "Sending…";
      window
        .fetch(flagForm.action, { method: "POST", body: new FormData(flagForm), credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) {
            throw new Error(String(response.status));
          }
          flagForm.reset();
          flagStatus.textContent = "Thank you: your flag was sent to the researchers. The HIT is still yours.";
        })
        .catch(function () {
          flagStatus.classList.add("error");
          flagStatus.textContent = "The flag could not be sent. Please try again.";
        });
    });
  }
})();

// The HIT page shell, for every scheme (templates/hits/assignment.html); it runs before the
// scheme's script. It keeps the rows clear of the sticky text, counts down to the deadline, counts
// the answered rows, keeps a draft of the answers and the time on page in the browser so a reload
// loses neither, and on the server (where the page has a draft address) so another device resumes
// both (docs/design.md §4, "Drafts across devices"), holds the single-key shortcut setting, asks
// before a HIT with answers is returned, and sends flags without leaving the page. Nothing here knows a scheme's answers: a row (.item) is
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

  // The server's draft, written into the page: the answers and state of whichever draft was saved
  // last (this device's or another's), and the time of every page view either knows of.
  var serverDraft = null;
  var serverDraftBox = document.getElementById("hit-server-draft");
  if (serverDraftBox) {
    try {
      serverDraft = JSON.parse(serverDraftBox.textContent);
    } catch (error) {
      serverDraft = null;
    }
  }
  var views = {};
  [draft.views || {}, (serverDraft && serverDraft.views) || {}].forEach(function (known) {
    Object.keys(known).forEach(function (id) {
      views[id] = Math.max(views[id] || 0, Number(known[id]) || 0);
    });
  });
  if (serverDraft && !(Number(draft.saved) > Number(serverDraft.saved))) {
    draft = {
      answers: (serverDraft.answers || []).map(function (answer) {
        return [answer.name, answer.value];
      }),
      telemetry: (serverDraft.state || {}).telemetry,
      first: (serverDraft.state || {}).first,
      last_first_ms: (serverDraft.state || {}).last_first_ms,
      views: views,
    };
  }
  // This page view's own id: its time is reported under it, so a repeated report adds nothing.
  var viewId = (function () {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map
      .call(bytes, function (byte) {
        return ("0" + byte.toString(16)).slice(-2);
      })
      .join("");
  })();

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
  // not inflate it; it adds up across reloads and devices: the sum of every page view's own time
  // (an older draft without views holds one figure). The server bounds it by the time since the claim.
  var earlierMs = Object.keys(views).length
    ? Object.keys(views).reduce(function (sum, id) {
        return sum + views[id];
      }, 0)
    : Number(draft.ms) || 0;
  var visibleMs = 0;
  var visibleSince = document.visibilityState === "hidden" ? null : Date.now();
  function viewMs() {
    return visibleMs + (visibleSince === null ? 0 : Date.now() - visibleSince);
  }
  function onPageMs() {
    return earlierMs + viewMs();
  }

  // --- telemetry: how the HIT is worked on, as timings and counts, never the text (docs/quality.md) ---
  // It rides in the draft, so a reload adds to it; it goes to the server with the submit or the return.
  var telemetry = {
    ms_to_first_answer: null,
    item_ms: [],
    pointer: 0,
    touch: 0,
    key: 0,
    hidden: 0,
    away_ms: 0,
    away_answering_ms: 0,
    copies: 0,
    pastes: [],
    typed_keys: 0,
    typed_chars: 0,
    largest_insert: 0,
    inserts: 0,
    blocked: 0,
    loads: 0,
  };
  var MAX_LIST = 50;
  var saved = draft.telemetry || {};
  Object.keys(telemetry).forEach(function (name) {
    if (saved[name] !== undefined && typeof saved[name] === typeof telemetry[name]) {
      telemetry[name] = saved[name];
    }
  });
  if (typeof saved.ms_to_first_answer === "number") {
    telemetry.ms_to_first_answer = saved.ms_to_first_answer;
  }
  telemetry.loads += 1;
  // Rows (by position) already answered once, and when the last of them was first answered.
  var firstAnswered = Array.isArray(draft.first) ? draft.first : [];
  var lastFirstMs = Number(draft.last_first_ms) || 0;
  var hiddenSince = document.visibilityState === "hidden" ? Date.now() : null;
  var blockCopyPaste = form.dataset.blockCopyPaste === "1";
  var hitArticle = form.closest(".hit") || document.body;

  function isTextField(element) {
    if (!element || !form.contains(element)) {
      return false;
    }
    if (element.tagName === "TEXTAREA") {
      return true;
    }
    return element.tagName === "INPUT" && ["text", "search", ""].indexOf(element.getAttribute("type") || "") !== -1;
  }

  // A page without rows of its own (a scheme whose item is the target itself: one box of text for it)
  // is timed as one row: the form.
  var timedRows = rows.length ? rows : [form];
  function noteAnswer(target) {
    var row = rows.length ? (target && target.closest ? target.closest(".item") : null) : form;
    var index = timedRows.indexOf(row);
    // Time away counts only up to the last answer: leaving after answering is no sign of anything.
    telemetry.away_answering_ms = telemetry.away_ms;
    if (index === -1 || firstAnswered.indexOf(index) !== -1 || !rowAnswered(row)) {
      return;
    }
    var at = Math.round(onPageMs());
    firstAnswered.push(index);
    if (telemetry.ms_to_first_answer === null) {
      telemetry.ms_to_first_answer = at;
    }
    if (telemetry.item_ms.length < 200) {
      telemetry.item_ms.push(Math.max(0, at - lastFirstMs));
    }
    lastFirstMs = at;
  }

  // Only events the browser marks as trusted (made by a person's device, not by a script) count as input.
  document.addEventListener(
    "pointerdown",
    function (event) {
      if (event.isTrusted) {
        telemetry[event.pointerType === "touch" ? "touch" : "pointer"] += 1;
      }
    },
    true
  );
  document.addEventListener(
    "keydown",
    function (event) {
      if (event.isTrusted) {
        telemetry.key += 1;
        if (isTextField(event.target)) {
          telemetry.typed_keys += 1;
        }
      }
    },
    true
  );
  ["copy", "cut"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      if (isTextField(event.target) || !hitArticle.contains(event.target)) {
        return;
      }
      if (blockCopyPaste) {
        event.preventDefault();
        telemetry.blocked += 1;
      } else {
        telemetry.copies += 1;
      }
    });
  });
  ["paste", "drop"].forEach(function (type) {
    form.addEventListener(type, function (event) {
      if (!isTextField(event.target)) {
        return;
      }
      if (blockCopyPaste) {
        event.preventDefault();
        telemetry.blocked += 1;
        return;
      }
      var data = event.clipboardData || event.dataTransfer;
      var text = data ? data.getData("text") || data.getData("text/plain") : "";
      if (telemetry.pastes.length < MAX_LIST) {
        telemetry.pastes.push(text.length);
      }
    });
  });
  // Characters that go into text fields, pastes aside, measured by the length each input event adds (a
  // phone's composition events repeat the word so far, so their data would count it many times over).
  var lengthBefore = null;
  form.addEventListener("beforeinput", function (event) {
    lengthBefore = isTextField(event.target) ? event.target.value.length : null;
  });
  form.addEventListener("input", function (event) {
    if (!isTextField(event.target) || lengthBefore === null) {
      return;
    }
    var added = event.target.value.length - lengthBefore;
    lengthBefore = null;
    if (added <= 0 || event.inputType === "insertFromPaste" || event.inputType === "insertFromDrop") {
      return; // deletions, and pastes or drops (counted by their own events)
    }
    telemetry.inserts += 1;
    telemetry.typed_chars += added;
    telemetry.largest_insert = Math.max(telemetry.largest_insert, added);
  });

  function telemetryNow() {
    var away = telemetry.away_ms + (hiddenSince === null ? 0 : Date.now() - hiddenSince);
    var out = {};
    Object.keys(telemetry).forEach(function (name) {
      out[name] = telemetry[name];
    });
    out.v = 1;
    out.away_ms = Math.round(away);
    out.away_answering_ms = Math.min(Math.round(telemetry.away_answering_ms), out.away_ms);
    return out;
  }

  function draftAnswers() {
    var answers = [];
    new FormData(form).forEach(function (value, name) {
      if (name.indexOf("item-") === 0 && typeof value === "string") {
        answers.push([name, value]);
      }
    });
    return answers;
  }

  function saveDraft() {
    var mine = {};
    Object.keys(views).forEach(function (id) {
      mine[id] = views[id];
    });
    mine[viewId] = Math.round(viewMs());
    storage.set(
      draftKey,
      JSON.stringify({
        answers: draftAnswers(),
        views: mine,
        saved: Date.now(),
        telemetry: telemetryNow(),
        first: firstAnswered,
        last_first_ms: lastFirstMs,
      })
    );
  }

  // The server's copy: sent every few seconds while the page is visible, soon after an answer, and
  // when the page is hidden or left (keepalive lets that last one outlive the page).
  var draftUrl = form.dataset.draftUrl;
  var draftEvery = (Number(form.dataset.draftSeconds) || 20) * 1000;
  var csrfField = form.querySelector("input[name=csrfmiddlewaretoken]");
  var serverSaving = !!(draftUrl && window.fetch && csrfField);
  var serverTimer = null;
  function sendDraft() {
    if (serverTimer !== null) {
      window.clearTimeout(serverTimer);
      serverTimer = null;
    }
    if (!serverSaving) {
      return;
    }
    var body = JSON.stringify({
      view: viewId,
      ms: Math.round(viewMs()),
      answers: draftAnswers().map(function (pair) {
        return { name: pair[0], value: pair[1] };
      }),
      state: { telemetry: telemetryNow(), first: firstAnswered, last_first_ms: Math.round(lastFirstMs) },
    });
    window
      .fetch(draftUrl, {
        method: "POST",
        body: body,
        credentials: "same-origin",
        keepalive: body.length < 60000,
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfField.value },
      })
      .then(function (response) {
        // Submitted, returned or expired elsewhere: nothing more to keep.
        if (response.status === 404) {
          serverSaving = false;
        }
      })
      .catch(function () {
        // Offline for now: the next save sends everything again.
      });
  }
  function sendDraftSoon() {
    if (serverSaving && serverTimer === null) {
      serverTimer = window.setTimeout(sendDraft, 2000);
    }
  }
  if (serverSaving) {
    window.setInterval(function () {
      if (document.visibilityState === "visible") {
        sendDraft();
      }
    }, draftEvery);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden" && visibleSince !== null) {
      visibleMs += Date.now() - visibleSince;
      visibleSince = null;
      telemetry.hidden += 1;
      hiddenSince = Date.now();
      saveDraft();
      sendDraft();
    } else if (document.visibilityState === "visible" && visibleSince === null) {
      visibleSince = Date.now();
      if (hiddenSince !== null) {
        telemetry.away_ms += Date.now() - hiddenSince;
        hiddenSince = null;
      }
    }
  });
  window.addEventListener("pagehide", function () {
    saveDraft();
    sendDraft();
  });
  ["change", "input"].forEach(function (type) {
    form.addEventListener(type, function (event) {
      noteAnswer(event.target);
      showAnswered();
      saveDraft();
      sendDraftSoon();
    });
  });

  var pledgeBox = document.getElementById("hit-pledge");
  form.addEventListener("submit", function (event) {
    if (pledgeBox && !pledgeBox.checked) {
      event.preventDefault();
      event.stopImmediatePropagation();
      var errorBox = document.getElementById("hit-error");
      errorBox.textContent = "Please confirm first that you will answer yourself, without AI tools.";
      errorBox.hidden = false;
      pledgeBox.focus();
    }
  });

  // On the document, so it runs after the scheme's own submit check, which may stop the submit.
  document.addEventListener("submit", function (event) {
    if (event.target === form && !event.defaultPrevented) {
      serverSaving = false;
      form.querySelector("input[name=seconds_on_page]").value = (onPageMs() / 1000).toFixed(1);
      form.querySelector("input[name=telemetry]").value = JSON.stringify(telemetryNow());
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
        return;
      }
      serverSaving = false;
      var field = returnForm.querySelector("input[name=telemetry]");
      if (field) {
        field.value = JSON.stringify(telemetryNow());
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

// The Smart Word Suggestions page: select a word or phrase of the sentence, give suggestions and a
// type, repeat; the targets go to the server as JSON in the row's hidden field (schemes.sws.answers).
// Selecting: drag with the mouse or a finger, click (shift-click extends), or on a touch screen tap
// a word and tap another to extend; with the keyboard, arrows move, shift+arrows extend, Enter goes
// to the suggestions, Escape clears. Text is only ever set with textContent: the sentence is data.
(function () {
  "use strict";

  var form = document.getElementById("hit-form");
  var root = form ? form.querySelector(".sws") : null;
  if (!root) {
    return;
  }
  var editable = form.dataset.editable === "1";
  var sentenceText = root.dataset.sentence;
  var minTargets = parseInt(root.dataset.minTargets, 10) || 0;
  var sentence = root.querySelector(".sws-sentence");
  var tokens = Array.prototype.slice.call(sentence.querySelectorAll(".token"));
  var answerField = root.querySelector(".sws-answer");
  var list = root.querySelector(".sws-targets");
  var count = root.querySelector(".sws-count");
  var selectedLabel = root.querySelector(".sws-selected");
  var suggestionsField = root.querySelector(".sws-suggestions");
  var addButton = root.querySelector(".sws-add");
  var editorError = root.querySelector(".sws-editor-error");
  var discard = root.querySelector(".sws-discard");
  var discardField = root.querySelector(".sws-discard-reason");
  var errorBox = document.getElementById("hit-error");
  var secondsField = form.querySelector("input[name=seconds_on_page]");
  var submitButton = document.getElementById("hit-submit");
  var TYPE_NAMES = { "refine-usage": "refine usage", "diversify-expression": "diversify expression" };

  var targets = [];
  var anchor = null;
  var focus = null;
  var caret = 0;
  var pointer = null; // set while a pointer is down on the sentence
  var submitting = false;

  function selection() {
    if (anchor === null) {
      return null;
    }
    return { first: Math.min(anchor, focus), last: Math.max(anchor, focus) };
  }

  function spanOf(range) {
    return { start: Number(tokens[range.first].dataset.start), end: Number(tokens[range.last].dataset.end) };
  }

  function isMarked(index) {
    var start = Number(tokens[index].dataset.start);
    return targets.some(function (target) {
      return target.start <= start && start < target.end;
    });
  }

  // The sentence: the selection, what is marked already, and the keyboard's caret.
  function renderSentence() {
    var range = selection();
    tokens.forEach(function (token, index) {
      token.classList.toggle("selected", range !== null && range.first <= index && index <= range.last);
      token.classList.toggle("marked", isMarked(index));
      token.classList.toggle("caret", editable && index === caret && document.activeElement === sentence);
    });
    if (selectedLabel) {
      if (range === null) {
        selectedLabel.textContent = "nothing yet";
      } else {
        var span = spanOf(range);
        selectedLabel.textContent = "“" + sentenceText.slice(span.start, span.end) + "”";
      }
    }
  }

  // The targets so far, and the answer the form sends. Rebuilt only when the targets change, so a
  // Remove button under the pointer is never replaced between its press and its click.
  function renderTargets() {
    list.textContent = "";
    targets.forEach(function (target, index) {
      var item = document.createElement("li");
      var words = document.createElement("strong");
      words.textContent = "“" + target.text + "”";
      item.appendChild(words);
      item.appendChild(document.createTextNode(" → " + target.suggestions.join("; ") + " (" + TYPE_NAMES[target.type] + ")"));
      if (editable) {
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "sws-remove";
        remove.dataset.index = String(index);
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", "Remove the target “" + target.text + "”");
        item.appendChild(document.createTextNode(" "));
        item.appendChild(remove);
      }
      list.appendChild(item);
    });
    count.textContent = String(targets.length);
    saveAnswer();
  }

  function saveAnswer() {
    answerField.value = JSON.stringify({ targets: targets, discard: discardField ? discardField.value.trim() : "" });
  }

  function render() {
    renderSentence();
    renderTargets();
  }

  function showEditorError(message) {
    editorError.textContent = message;
    editorError.hidden = !message;
  }

  function select(index, extend) {
    caret = index;
    if (extend && anchor !== null) {
      focus = index;
    } else {
      anchor = focus = index;
    }
    showEditorError("");
    renderSentence();
  }

  function splitSuggestions(text) {
    var seen = {};
    return text
      .split(";")
      .map(function (part) {
        return part.trim();
      })
      .filter(function (part) {
        var key = part.toLowerCase();
        if (!part || seen[key]) {
          return false;
        }
        seen[key] = true;
        return true;
      });
  }

  function addTarget() {
    var range = selection();
    if (range === null) {
      showEditorError("Select a word or phrase of the sentence first.");
      sentence.focus();
      return;
    }
    var span = spanOf(range);
    var text = sentenceText.slice(span.start, span.end);
    var suggestions = splitSuggestions(suggestionsField.value);
    var type = root.querySelector("input[name=sws-type]:checked");
    if (!suggestions.length) {
      showEditorError("Type one or more suggestions for “" + text + "”, separated by ;");
      suggestionsField.focus();
      return;
    }
    if (!type) {
      showEditorError("Choose the type: refine usage or diversify expression.");
      root.querySelector("input[name=sws-type]").focus();
      return;
    }
    if (targets.some(function (target) {
      return target.start === span.start && target.end === span.end;
    })) {
      showEditorError("“" + text + "” is a target already: remove it first to change it.");
      return;
    }
    targets.push({ start: span.start, end: span.end, text: text, suggestions: suggestions, type: type.value });
    targets.sort(function (a, b) {
      return a.start - b.start || a.end - b.end;
    });
    suggestionsField.value = "";
    type.checked = false;
    anchor = focus = null;
    showEditorError("");
    render();
    sentence.focus();
  }

  function restore() {
    var saved;
    try {
      saved = JSON.parse(answerField.value || "{}");
    } catch (error) {
      saved = {};
    }
    if (saved && Array.isArray(saved.targets)) {
      targets = saved.targets.filter(function (target) {
        return typeof target.start === "number" && typeof target.end === "number";
      });
    }
    if (saved && saved.discard && discardField) {
      discardField.value = saved.discard;
      discard.open = true;
    }
  }

  restore();
  render();
  if (!editable) {
    return;
  }

  function tokenAt(event) {
    var element = document.elementFromPoint(event.clientX, event.clientY);
    var token = element && element.closest ? element.closest(".token") : null;
    return token && sentence.contains(token) ? tokens.indexOf(token) : -1;
  }

  sentence.addEventListener("pointerdown", function (event) {
    var index = tokenAt(event);
    if (index < 0) {
      return;
    }
    event.preventDefault();
    sentence.focus({ preventScroll: true });
    var range = selection();
    var touch = event.pointerType !== "mouse";
    var inside = range !== null && range.first <= index && index <= range.last;
    pointer = { index: index };
    // A touch extends the selection it lands outside of; a mouse extends with shift.
    select(index, event.shiftKey || (touch && range !== null && !inside));
  });
  sentence.addEventListener("pointermove", function (event) {
    if (pointer === null) {
      return;
    }
    var index = tokenAt(event);
    if (index >= 0 && index !== focus) {
      caret = focus = index;
      renderSentence();
    }
  });
  document.addEventListener("pointerup", function () {
    pointer = null;
  });
  document.addEventListener("pointercancel", function () {
    pointer = null;
  });

  sentence.addEventListener("focus", renderSentence);
  sentence.addEventListener("blur", renderSentence);
  sentence.addEventListener("keydown", function (event) {
    var key = event.key;
    if (key === "ArrowRight" || key === "ArrowLeft" || key === "Home" || key === "End") {
      event.preventDefault();
      var next = key === "ArrowRight" ? caret + 1 : key === "ArrowLeft" ? caret - 1 : key === "Home" ? 0 : tokens.length - 1;
      next = Math.max(0, Math.min(tokens.length - 1, next));
      if (event.shiftKey && anchor === null) {
        anchor = caret;
      }
      select(next, event.shiftKey);
    } else if (key === " " || key === "Spacebar") {
      event.preventDefault();
      select(caret, false);
    } else if (key === "Enter") {
      event.preventDefault();
      if (selection() === null) {
        select(caret, false);
      }
      suggestionsField.focus();
    } else if (key === "Escape") {
      anchor = focus = null;
      renderSentence();
    }
  });

  suggestionsField.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      event.preventDefault();
      addTarget();
    }
  });
  root.querySelectorAll("input[name=sws-type]").forEach(function (input) {
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        addTarget();
      }
    });
  });
  addButton.addEventListener("click", addTarget);
  list.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".sws-remove") : null;
    if (button) {
      targets.splice(Number(button.dataset.index), 1);
      render();
      sentence.focus();
    }
  });
  if (discardField) {
    discardField.addEventListener("input", saveAnswer);
  }

  var started = performance.now();
  form.noValidate = true;
  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    saveAnswer();
    var reason = discardField ? discardField.value.trim() : "";
    if (!reason && targets.length < minTargets) {
      event.preventDefault();
      errorBox.textContent =
        "Please mark at least " + minTargets + " targets (you marked " + targets.length + "), " +
        "or say why the sentence cannot be improved.";
      errorBox.hidden = false;
      errorBox.focus();
      return;
    }
    secondsField.value = ((performance.now() - started) / 1000).toFixed(1);
    submitting = true;
    if (submitButton) {
      submitButton.setAttribute("aria-busy", "true");
    }
  });

  if (errorBox && !errorBox.hidden) {
    errorBox.focus();
  }
})();

// The lexical simplification page: one simpler word typed in the sentence's language, or "no
// simpler word comes to mind". The answer goes to the server as JSON in the row's hidden field
// (schemes/tsar/answers.py, which checks it again); the page checks it first and says what to fix:
// an empty answer, a word and the box both, text without a letter or with symbols, or the
// highlighted word itself. Enter in the box submits, as in any form.
(function () {
  "use strict";

  var form = document.getElementById("hit-form");
  var root = form ? form.querySelector(".simplify") : null;
  if (!root) {
    return;
  }
  var field = root.querySelector(".simplify-word");
  var noneBox = root.querySelector(".simplify-none-box");
  var answerField = root.querySelector(".simplify-answer");
  var errorBox = document.getElementById("hit-error");
  var secondsField = form.querySelector("input[name=seconds_on_page]");
  var submitButton = document.getElementById("hit-submit");
  var word = (root.dataset.word || "").trim();
  var started = performance.now();
  var submitting = false;
  // As the server's check: a letter, and nothing but letters, marks, digits, spaces and - ' ’ .
  var HAS_LETTER = /\p{L}/u;
  var WORD_CHARS = /^[\p{L}\p{M}\p{N} \-'’.]+$/u;

  function typed() {
    return field.value.trim().split(/\s+/).join(" ");
  }

  function save() {
    answerField.value = JSON.stringify({ substitute: typed(), none: noneBox.checked });
  }

  function restore() {
    var saved;
    try {
      saved = JSON.parse(answerField.value || "{}");
    } catch (error) {
      saved = {};
    }
    field.value = typeof saved.substitute === "string" ? saved.substitute : "";
    noneBox.checked = saved.none === true;
  }

  restore();
  if (form.dataset.editable !== "1") {
    return;
  }
  field.addEventListener("input", save);
  noneBox.addEventListener("change", save);

  function refuse(message, focus) {
    errorBox.textContent = message;
    errorBox.hidden = false;
    (focus || errorBox).focus();
  }

  function problem(text) {
    if (noneBox.checked && text) {
      return "You typed a word and ticked that no simpler word comes to mind: keep one of the two.";
    }
    if (noneBox.checked) {
      return "";
    }
    if (!text) {
      return "Type one simpler word, or tick that no simpler word comes to mind.";
    }
    if (!HAS_LETTER.test(text) || !WORD_CHARS.test(text)) {
      return "“" + text + "” is not a word: type a word.";
    }
    if (text.toLocaleLowerCase() === word.toLocaleLowerCase()) {
      return "“" + text + "” is the highlighted word itself: type a simpler one.";
    }
    return "";
  }

  form.noValidate = true;
  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    save();
    var message = problem(typed());
    if (message) {
      event.preventDefault();
      refuse(message, noneBox.checked && !typed() ? noneBox : field);
      return;
    }
    secondsField.value = ((performance.now() - started) / 1000).toFixed(1);
    submitting = true;
    if (submitButton) {
      submitButton.setAttribute("aria-busy", "true");
    }
  });

  if (!errorBox.hidden) {
    errorBox.focus();
  } else {
    field.focus({ preventScroll: true });
  }
})();

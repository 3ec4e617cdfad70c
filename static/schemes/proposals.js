// The generation task's page: up to five substitutes typed from memory, or "none comes to mind".
// The answer goes to the server as JSON in the row's hidden field (schemes.swords.proposals.rules); the
// page checks it first and says what is missing. Enter in a box submits, as in any form.
(function () {
  "use strict";

  var form = document.getElementById("hit-form");
  var root = form ? form.querySelector(".proposals") : null;
  if (!root) {
    return;
  }
  var fields = Array.prototype.slice.call(root.querySelectorAll(".proposal"));
  var noneBox = root.querySelector(".proposals-none-box");
  var answerField = root.querySelector(".proposals-answer");
  var errorBox = document.getElementById("hit-error");
  var secondsField = form.querySelector("input[name=seconds_on_page]");
  var submitButton = document.getElementById("hit-submit");
  var started = performance.now();
  var submitting = false;

  function typed() {
    return fields
      .map(function (field) {
        return field.value.trim();
      })
      .filter(function (text) {
        return text !== "";
      });
  }

  function save() {
    answerField.value = JSON.stringify({ substitutes: typed(), none: noneBox.checked });
  }

  function restore() {
    var saved;
    try {
      saved = JSON.parse(answerField.value || "{}");
    } catch (error) {
      saved = {};
    }
    (Array.isArray(saved.substitutes) ? saved.substitutes : []).slice(0, fields.length).forEach(function (text, index) {
      fields[index].value = text;
    });
    noneBox.checked = saved.none === true;
  }

  restore();
  if (form.dataset.editable !== "1") {
    return;
  }
  fields.forEach(function (field) {
    field.addEventListener("input", save);
  });
  noneBox.addEventListener("change", save);

  function refuse(message, focus) {
    errorBox.textContent = message;
    errorBox.hidden = false;
    (focus || errorBox).focus();
  }

  form.noValidate = true;
  form.addEventListener("submit", function (event) {
    if (submitting) {
      event.preventDefault();
      return;
    }
    save();
    var substitutes = typed();
    if (noneBox.checked && substitutes.length) {
      event.preventDefault();
      refuse("You typed substitutes and ticked that none comes to mind: keep one of the two.", noneBox);
      return;
    }
    if (!noneBox.checked && !substitutes.length) {
      event.preventDefault();
      refuse("Type at least one substitute, or tick that none comes to mind.", fields[0]);
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
    fields[0].focus({ preventScroll: true });
  }
})();

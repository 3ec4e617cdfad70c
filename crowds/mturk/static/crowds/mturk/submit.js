// After the answers are saved, hand the assignment to MTurk (turkSubmitTo/mturk/externalSubmit).
(function () {
  "use strict";
  var form = document.getElementById("mturk-submit");
  if (form) {
    form.submit();
  }
})();

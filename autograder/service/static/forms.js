// The instructor's forms: a moment typed in a datetime-local field is sent as the exact UTC moment the
// browser reads it as (its own zone, daylight saving included); without this script the server reads
// the field in the assignment's zone, as the form says.
"use strict";
(function () {
  for (const hidden of document.querySelectorAll("input.utc-of[data-of]")) {
    const field = document.getElementById(hidden.getAttribute("data-of"));
    if (!field || !field.form) continue;
    field.form.addEventListener("submit", function () {
      const when = field.value ? new Date(field.value) : null;
      hidden.value = when && !isNaN(when.getTime()) ? when.toISOString() : "";
    });
  }
  const shared = window.autograderPage;
  const zone = shared.zone();
  if (zone && shared.t.moment_zone_browser) {
    for (const note of document.querySelectorAll(".zone-note")) {
      note.textContent = shared.fill(shared.t.moment_zone_browser, {zone: zone});
    }
  }
  shared.writeTimes(document.body);  // the page's times in the launch's locale (idempotent)
})();

// The instructor's page: the queue stays live, and the class report reloads when a grading finished.
"use strict";
(function () {
  const {page, t, el, moment, writeTimes, sleep} = window.autograderPage;
  const box = document.getElementById("queue"), report = document.getElementById("report");
  let graded = null;
  async function refresh() {
    const data = await (await fetch(page.queue_url, {credentials: "same-origin", cache: "no-store"})).json();
    box.replaceChildren();
    if (!data.queue.length) {
      box.append(el("p", {}, t.queue_empty));
    } else {
      const table = el("table");
      for (const q of data.queue) {
        const status = (t[q.status] || q.status) + (q.regrade ? " · " + t.history_regraded : "");
        table.append(el("tr", {}, el("td", {}, q.student), el("td", {}, status), el("td", {}, moment(q.received_at))));
      }
      box.append(table);
    }
    writeTimes(box);
    const now = data.counts.graded || 0;
    if (graded !== null && now !== graded) report.contentWindow.location.reload();
    graded = now;
  }
  (async function () {
    writeTimes(document.body);
    for (;;) {
      try { await refresh(); } catch (e) { /* the next beat tries again */ }
      await sleep(2000);
    }
  })();
})();

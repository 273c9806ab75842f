// The student's page: sends an upload once (the button is off while it is sent), follows its grading,
// keeps the list current on its own, says when the connection is lost and tries again, and writes
// times in the launch's locale and the browser's time zone. Every text is set as text, never as HTML.
"use strict";
(function () {
  const {page, t, el, fill, num, moment, writeTimes, zone, sleep} = window.autograderPage;
  const $ = (id) => document.getElementById(id);
  const form = $("upload"), button = $("submit"), error = $("error"), progress = $("progress");
  const scoreLine = $("score-line"), frame = $("feedback"), connection = $("connection");
  const table = $("earlier"), body = table.tBodies[0], none = $("earlier-none");
  const token = document.querySelector('meta[name="csrf-token"]').content;
  let version = page.version;
  let watching = null;  // the upload whose progress the status lines show
  let feedbackOf = null;  // what the feedback frame shows: "upload id|graded at"

  function show(node, text) { node.textContent = text || ""; node.hidden = !text; }

  function parts(segments) {
    const fragment = document.createDocumentFragment();
    for (const [kind, value] of segments) fragment.append(kind === "time" ? moment(value) : value);
    return fragment;
  }

  function row(r) {  // the same row as the page's template (service_macros.html upload_row)
    const status = el("td", {class: "status"}, r.status_text);
    if (r.score !== null) status.append(": ", el("b", {class: "score"}, num(r.score)), " / " + num(r.max_score));
    if (r.regrading) status.append(" · ", el("span", {class: "regrading"}, t.regrading));
    if (r.counts) status.append(" · ", el("span", {class: "counts"}, t.counted));
    if (r.message) status.append(el("br"), el("span", {class: "message"}, r.message));
    const more = el("td", {class: "more"});
    if (r.feedback_url) more.append(el("a", {href: r.feedback_url, target: "_blank", rel: "noopener"}, t.feedback));
    if (r.note_parts.length) more.append(" ", el("span", {class: "note"}, parts(r.note_parts)));
    if (r.history.length > 1) {
      const list = el("ul", {class: "history"});
      for (const h of r.history) {
        const item = el("li", {class: h.kind}, h.kind_text, " ", moment(h.at));
        if (h.score !== null) item.append(": " + num(h.score) + " / " + num(h.max_score));
        else if (h.status !== "graded") item.append(": " + h.status_text);
        list.append(item);
      }
      more.append(list);
    }
    return el("tr", {"data-id": r.id, "data-status": r.status}, el("td", {class: "when"}, moment(r.received_at)),
              el("td", {class: "file"}, r.filename), status, more);
  }

  function renderList(list) {
    body.replaceChildren(...list.map(row));
    table.hidden = list.length === 0;
    none.hidden = list.length > 0;
    writeTimes(body);
  }

  function showCurrent(s) {  // the upload this page follows, in the status lines above the list
    if (s.status === "queued" || s.status === "grading") { show(progress, s.status_text); return; }
    show(progress, "");
    watching = null;
    if (s.status === "failed") { show(error, s.message || s.status_text); return; }
    scoreLine.replaceChildren();
    if (s.score !== null) {
      scoreLine.append(el("b", {id: "score"}, num(s.score)), " / " + num(s.max_score));
      if (s.note_parts.length) scoreLine.append(" · ", parts(s.note_parts));
    } else {
      scoreLine.append(parts(s.note_parts));
    }
    writeTimes(scoreLine);
    scoreLine.hidden = false;
    const shown = s.id + "|" + s.graded_at;
    if (s.feedback_url && feedbackOf !== shown) { frame.src = s.feedback_url; frame.hidden = false; feedbackOf = shown; }
  }

  async function follow() {  // the list, long-polled: the server answers when it changed (or after a while)
    let failures = 0;
    for (;;) {
      let answer = null, data = null;
      try {
        answer = await fetch(page.list_url + "?since=" + version, {credentials: "same-origin", cache: "no-store"});
        if (answer.ok) data = await answer.json();
      } catch (e) {
        data = null;  // the connection is lost (or the answer cut): said below, then tried again
      }
      if (answer !== null && answer.status === 401) { show(connection, ""); show(error, t.session_over); return; }
      if (data === null) {
        failures += 1;
        const wait = Math.min(15, 2 ** Math.min(failures - 1, 4));
        show(connection, fill(t.connection_lost, {seconds: wait}));
        await sleep(wait * 1000);
        continue;
      }
      failures = 0;
      show(connection, "");
      version = data.version;
      renderList(data.submissions);
      const mine = data.submissions.find((s) => s.id === watching);
      if (mine) showCurrent(mine);
    }
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    if (button.disabled) return;  // one upload at a time: a second click while sending does nothing
    button.disabled = true;
    form.setAttribute("aria-busy", "true");
    show(error, "");
    scoreLine.hidden = true;
    frame.hidden = true;
    show(progress, t.sending);
    try {
      let answer;
      try {
        answer = await fetch(form.action, {method: "POST", body: new FormData(form),
                                           headers: {"X-CSRFToken": token}, credentials: "same-origin"});
      } catch (e) {
        show(progress, "");
        show(error, t.send_failed);
        return;
      }
      let data = null;
      try { data = await answer.json(); } catch (e) { data = null; }
      if (!answer.ok || data === null) {
        show(progress, "");
        error.replaceChildren(data && data.error_parts ? parts(data.error_parts)
                              : (data && data.error) || (answer.status === 401 ? t.session_over : t.server_error));
        writeTimes(error);
        error.hidden = false;
        return;
      }
      form.reset();
      watching = data.id;
      showCurrent(data);
      if (data.duplicate && watching !== null) show(progress, t.duplicate + " " + data.status_text);
      else if (data.duplicate) show(progress, t.duplicate);
    } finally {
      button.disabled = false;
      form.removeAttribute("aria-busy");
    }
  });

  const here = zone();
  if (here) show($("time-zone"), fill(t.time_zone, {zone: here}));
  writeTimes(document.body);
  const pending = body.querySelector('tr[data-status="queued"], tr[data-status="grading"]');
  if (pending) watching = Number(pending.getAttribute("data-id"));
  follow();
})();

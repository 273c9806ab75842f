// The class table searched and sorted in the page, as the server does it for the page without this
// script (the same rule: a part of the student's id, any case; the same sort keys), and its CSV link
// given the same search and sort, so the file holds what the table shows.
"use strict";
(function () {
  const table = document.getElementById("students");
  const search = document.getElementById("table-search");
  const link = document.getElementById("csv-link");
  const none = document.getElementById("table-none");
  if (!table || !search || !link) return;
  const body = table.tBodies[0];
  const form = document.getElementById("table-search-form");
  const state = {sort: form.elements.sort.value, dir: form.elements.dir.value};
  const keys = {
    student: (row) => [row.dataset.student],
    last: (row) => [row.dataset.last, row.dataset.student],
    score: (row) => [Number(row.dataset.score), row.dataset.student],
  };
  function compare(a, b) {
    for (let i = 0; i < a.length; i++) {
      if (a[i] < b[i]) return -1;
      if (a[i] > b[i]) return 1;
    }
    return 0;
  }
  function query() {
    const params = new URLSearchParams();
    if (search.value.trim()) params.set("q", search.value.trim());
    params.set("sort", state.sort);
    params.set("dir", state.dir);
    return params.toString();
  }
  function apply() {
    const wanted = search.value.trim().toLowerCase();
    let shown = 0;
    const rows = Array.from(body.rows);
    rows.sort((a, b) => compare(keys[state.sort](a), keys[state.sort](b)) * (state.dir === "desc" ? -1 : 1));
    for (const row of rows) {
      const match = !wanted || row.dataset.student.toLowerCase().includes(wanted);
      row.hidden = !match;
      shown += match ? 1 : 0;
      body.append(row);
    }
    for (const th of table.tHead.rows[0].cells) {
      const column = th.getAttribute("data-column");
      if (!column) continue;
      if (column === state.sort) th.setAttribute("aria-sort", state.dir === "desc" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
    if (none) none.hidden = shown > 0;
    form.elements.sort.value = state.sort;
    form.elements.dir.value = state.dir;
    link.href = link.pathname + "?" + query();
  }
  search.addEventListener("input", apply);
  form.addEventListener("submit", (event) => { event.preventDefault(); apply(); });
  for (const anchor of table.querySelectorAll("a.sort[data-sort]")) {
    anchor.addEventListener("click", function (event) {
      event.preventDefault();
      const column = anchor.getAttribute("data-sort");
      state.dir = state.sort === column && state.dir === "asc" ? "desc" : "asc";
      state.sort = column;
      apply();
    });
  }
  apply();
})();

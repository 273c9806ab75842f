// What the service's page scripts share: building nodes from text (never from HTML), times, numbers.
"use strict";
window.autograderPage = (function () {
  const page = JSON.parse(document.getElementById("page-data").textContent);
  let dateFormat;
  try {
    dateFormat = new Intl.DateTimeFormat(page.locale, {dateStyle: "medium", timeStyle: "medium"});
  } catch (e) {  // a locale the browser does not know: its own
    dateFormat = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "medium"});
  }
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined) node.setAttribute(key, value);
    }
    node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  }
  return {
    page: page,
    t: page.texts,
    el: el,
    // the page's texts have {name} fields: filled with text, never parsed as HTML
    fill: (text, fields) => text.replace(/\{(\w+)\}/g, (m, k) => (k in fields ? String(fields[k]) : m)),
    // like Python's %g for the scores the server sends
    num: (x) => String(Number(Number(x).toPrecision(6))),
    moment: (value) => (value ? el("time", {datetime: value}, value) : null),
    writeTimes: function (root) {  // every <time datetime> in the launch's locale, the browser's zone
      for (const node of root.querySelectorAll("time[datetime]")) {
        const when = new Date(node.getAttribute("datetime"));
        if (!isNaN(when.getTime())) {
          node.textContent = dateFormat.format(when);
          node.title = node.getAttribute("datetime");
        }
      }
    },
    zone: () => Intl.DateTimeFormat().resolvedOptions().timeZone || "",
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
})();

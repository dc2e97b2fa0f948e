/* Sortable tables for lbsim reports: click a header to sort by that column,
   again to reverse. Cells sort by their data-sort value (numbers as numbers,
   empty cells last), else by their text. No dependencies. */
(function () {
  "use strict";
  function value(td) {
    var v = td.getAttribute("data-sort");
    return v === null ? td.textContent.trim() : v;
  }
  function compare(a, b) {
    if (a === "" && b === "") return 0;
    if (a === "") return 1;
    if (b === "") return -1;
    var x = Number(a), y = Number(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    return a.localeCompare(b, undefined, { numeric: true });
  }
  function sortBy(table, th, index) {
    var body = table.tBodies[0];
    if (!body) return;
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = value(r1.cells[index]), b = value(r2.cells[index]);
      if (a === "" || b === "") return compare(a, b); // missing values stay last either way
      var c = compare(a, b);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function init(root) {
    var tables = (root || document).querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (table.getAttribute("data-sortable-ready") || !table.tHead) return;
      table.setAttribute("data-sortable-ready", "1");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        th.setAttribute("title", "Sort by " + th.textContent.trim());
        th.addEventListener("click", function () { sortBy(table, th, i); });
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { init(document); });
  } else {
    init(document);
  }
})();

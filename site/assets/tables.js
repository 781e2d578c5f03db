/* Sortable and filterable tables, written for this site (no external library).
   Every table with data-sortable="true" gets a filter box above it; clicking a header sorts by
   that column (again to reverse). Cells may carry data-sort with the value to sort by. */
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var v = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    return v.trim();
  }

  function compare(a, b) {
    var x = parseFloat(a), y = parseFloat(b);
    var numeric = /^-?[0-9.]+(e-?[0-9]+)?$/i;
    if (numeric.test(a) && numeric.test(b) && !isNaN(x) && !isNaN(y)) { return x - y; }
    if (a === "" || a === "\u2013") { return 1; }
    if (b === "" || b === "\u2013") { return -1; }
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function sortBy(table, index, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = header.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", dir);
    rows.sort(function (r1, r2) {
      var c = compare(cellValue(r1, index), cellValue(r2, index));
      return dir === "ascending" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function addFilter(table) {
    var box = document.createElement("input");
    box.type = "search";
    box.className = "fr-filter";
    box.placeholder = "Filter rows\u2026";
    box.setAttribute("aria-label", "Filter the rows of the table below");
    var count = document.createElement("span");
    count.className = "fr-filter-count";
    var bar = document.createElement("div");
    bar.className = "fr-filter-bar";
    bar.appendChild(box);
    bar.appendChild(count);
    var anchor = table.closest(".md-typeset__scrollwrap") || table;
    anchor.parentNode.insertBefore(bar, anchor);
    var rows = table.tBodies[0].rows;
    function update() {
      var q = box.value.toLowerCase().trim();
      var shown = 0;
      Array.prototype.forEach.call(rows, function (r) {
        var hit = !q || r.textContent.toLowerCase().indexOf(q) !== -1;
        r.style.display = hit ? "" : "none";
        if (hit) { shown += 1; }
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }
    box.addEventListener("input", update);
    update();
  }

  // A table wider than the page gets a scrollbar above it too (the one below may be a screen away) and a
  // note saying so, so that no column is hidden without a sign: every table fits or visibly scrolls.
  function markWide(root) {
    Array.prototype.forEach.call(root.querySelectorAll(".md-typeset__scrollwrap"), function (wrap) {
      var bar = wrap.previousElementSibling;
      var has = bar && bar.classList.contains("fr-topscroll");
      if (wrap.scrollWidth <= wrap.clientWidth + 1) {
        if (has) { bar.parentNode.removeChild(bar); wrap.classList.remove("fr-wide-table"); }
        return;
      }
      if (!has) {
        bar = document.createElement("div");
        bar.className = "fr-topscroll";
        bar.setAttribute("aria-hidden", "true");
        bar.appendChild(document.createElement("div"));
        var note = document.createElement("div");
        note.className = "fr-scroll-note";
        note.textContent = "Wider than the page: scroll sideways for more columns \u2192";
        wrap.parentNode.insertBefore(note, wrap);
        wrap.parentNode.insertBefore(bar, wrap);
        bar.addEventListener("scroll", function () { wrap.scrollLeft = bar.scrollLeft; });
        wrap.addEventListener("scroll", function () { bar.scrollLeft = wrap.scrollLeft; });
      }
      wrap.classList.add("fr-wide-table");
      bar.firstChild.style.width = wrap.scrollWidth + "px";
    });
  }

  function setup(root) {
    var tables = root.querySelectorAll('table[data-sortable="true"]');
    Array.prototype.forEach.call(tables, function (table) {
      if (table.getAttribute("data-ready") === "true" || !table.tHead || !table.tBodies.length) { return; }
      table.setAttribute("data-ready", "true");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        th.classList.add("fr-sortable");
        th.setAttribute("tabindex", "0");
        th.setAttribute("title", "Sort by this column");
        th.addEventListener("click", function () { sortBy(table, index, th); });
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, index, th); }
        });
      });
      addFilter(table);
    });
    markWide(root);
  }
  window.addEventListener("resize", function () { markWide(document); });

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(function () { setup(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { setup(document); });
  } else {
    setup(document);
  }
})();

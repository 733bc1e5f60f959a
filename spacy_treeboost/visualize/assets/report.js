(function () {
  "use strict";
  var PAGE = 50;
  var data = JSON.parse(document.getElementById("tb-report-data").textContent);
  var COLUMNS = [
    {key: "rank", title: "#", num: true},
    {key: "pattern", title: "subtree"},
    {key: "weight", title: "contribution when present", num: true},
    {key: "docs", title: "docs", num: true},
    {key: "data_contribution", title: "total in data", num: true},
    {key: "snippets", title: "where it fired"}
  ];
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }
  function fmt(value, signed) {
    if (value === null || value === undefined) { return "\u2014"; }
    if (typeof value !== "number") { return String(value); }
    if (Number.isInteger(value) && !signed) { return String(value); }
    return (signed && value >= 0 ? "+" : "") + value.toFixed(4);
  }
  function compare(key, descending) {
    return function (a, b) {
      var x = a[key], y = b[key];
      if (x === null || x === undefined) { x = -Infinity; }
      if (y === null || y === undefined) { y = -Infinity; }
      var c = x < y ? -1 : x > y ? 1 : 0;
      return (descending ? -c : c) || a.rank - b.rank;
    };
  }
  function renderRow(row, largest) {
    var tr = el("tr");
    tr.setAttribute("data-pattern", row.pattern);
    tr.setAttribute("data-weight", String(row.weight));
    tr.setAttribute("data-rank", String(row.rank));
    tr.appendChild(el("td", "tb-num", String(row.rank)));
    var cell = el("td");
    cell.appendChild(el("code", null, row.pattern));
    for (var i = 0; i < row.rules.length; i++) { cell.appendChild(el("div", "tb-rule", row.rules[i])); }
    tr.appendChild(cell);
    var sign = row.weight >= 0 ? "tb-pos" : "tb-neg";
    var w = el("td", "tb-num " + sign);
    var bar = el("span", "tb-bar " + sign);
    bar.style.width = Math.max(1, Math.round(60 * Math.abs(row.weight) / largest)) + "px";
    w.appendChild(bar);
    w.appendChild(document.createTextNode(fmt(row.weight, true)));
    tr.appendChild(w);
    tr.appendChild(el("td", "tb-num", fmt(row.docs)));
    tr.appendChild(el("td", "tb-num", fmt(row.data_contribution, true)));
    var where = el("td");
    for (var s = 0; s < row.snippets.length; s++) {
      var snippet = row.snippets[s], line = el("div", "tb-snippet");
      line.appendChild(el("span", "tb-gold", "#" + snippet.doc + (snippet.gold ? " " + snippet.gold : "")));
      for (var j = 0; j < snippet.segments.length; j++) {
        var seg = snippet.segments[j];
        line.appendChild(seg[1] ? el("mark", null, seg[0]) : document.createTextNode(seg[0]));
      }
      where.appendChild(line);
    }
    tr.appendChild(where);
    return tr;
  }
  function section(head) {
    var box = el("section", "tb-label-section");
    box.setAttribute("data-label", head.label);
    box.appendChild(el("h2", null, "Label " + head.label));
    box.appendChild(el("p", "tb-summary", head.rules + " rules over " + head.subtrees + " subtrees; bias " +
      fmt(head.bias, true) + ". The top " + head.shown + " subtrees below carry " +
      (100 * head.shown_share).toFixed(1) + " % of the summed |contribution when present|."));
    var controls = el("div", "tb-controls");
    var search = el("input");
    search.type = "search";
    search.placeholder = "search subtrees, e.g. not";
    search.setAttribute("aria-label", "search the subtrees of " + head.label);
    var prev = el("button", null, "\u2039 previous"), next = el("button", null, "next \u203a");
    var status = el("span", "tb-status");
    controls.appendChild(search);
    controls.appendChild(prev);
    controls.appendChild(next);
    controls.appendChild(status);
    box.appendChild(controls);
    var table = el("table", "tb-rules"), thead = el("thead"), headRow = el("tr"), tbody = el("tbody");
    var state = {key: "rank", descending: false, page: 0, rows: head.rows.slice()};
    var largest = head.rows.reduce(function (m, r) { return Math.max(m, Math.abs(r.weight)); }, 0) || 1;
    COLUMNS.forEach(function (column) {
      var th = el("th", null, column.title);
      th.setAttribute("data-key", column.key);
      if (column.key !== "snippets") {
        th.title = "sort by " + column.title;
        th.addEventListener("click", function () {
          state.descending = state.key === column.key ? !state.descending : column.key !== "rank" && column.key !== "pattern";
          state.key = column.key;
          state.page = 0;
          update();
        });
      }
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);
    table.appendChild(thead);
    table.appendChild(tbody);
    box.appendChild(table);
    function update() {
      var query = search.value.trim().toLowerCase();
      var rows = head.rows.filter(function (r) { return !query || r.pattern.toLowerCase().indexOf(query) >= 0; });
      rows.sort(compare(state.key, state.descending));
      var pages = Math.max(1, Math.ceil(rows.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * PAGE, shown = rows.slice(start, start + PAGE);
      var fragment = document.createDocumentFragment();
      for (var i = 0; i < shown.length; i++) { fragment.appendChild(renderRow(shown[i], largest)); }
      tbody.textContent = "";
      tbody.appendChild(fragment);
      var ths = headRow.children;
      for (var t = 0; t < ths.length; t++) { ths[t].classList.toggle("tb-sorted", ths[t].getAttribute("data-key") === state.key); }
      status.textContent = rows.length ? "rows " + (start + 1) + "\u2013" + (start + shown.length) + " of " + rows.length +
        (query ? " matching" : "") + " (page " + (state.page + 1) + " of " + pages + ")" : "no subtree matches";
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }
    search.addEventListener("input", function () { state.page = 0; update(); });
    prev.addEventListener("click", function () { state.page -= 1; update(); });
    next.addEventListener("click", function () { state.page += 1; update(); });
    update();
    return box;
  }
  var labels = document.getElementById("tb-labels");
  data.heads.forEach(function (head) { labels.appendChild(section(head)); });
  document.body.setAttribute("data-first-screen-ms", performance.now().toFixed(1));
})();

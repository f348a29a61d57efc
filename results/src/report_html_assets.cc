// The report's stylesheet and its one script (sorting the tables by a click on a header). Both
// are inline in the page: the report is one file that works offline and is forwarded as it is.
#include "report_html_parts.h"

namespace kg::results::html {

const std::string& stylesheet() {
  static const std::string css = R"css(
:root { --pass: #1a7f37; --fail: #c4320a; --rejected: #8250df; --error: #57606a; --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 0; background: #f6f8fa; }
header { background: #24292f; color: #fff; padding: 14px 28px; }
header h1 { margin: 0; font-size: 20px; font-weight: 600; }
header p { margin: 2px 0 0; color: #c9d1d9; }
main { padding: 8px 28px 40px; max-width: 1400px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px 18px; margin: 16px 0; }
h2 { font-size: 17px; margin: 4px 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
h4 { font-size: 14px; margin: 10px 0 4px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
th[data-type] { cursor: pointer; user-select: none; }
th[data-type]::after { content: " \2195"; color: #8c959f; }
th[aria-sort="ascending"]::after { content: " \2191"; color: #1f2328; }
th[aria-sort="descending"]::after { content: " \2193"; color: #1f2328; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.facts { margin-bottom: 12px; }
table.facts th { width: 180px; background: none; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: 600; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); }
.badge.rejected { background: var(--rejected); } .badge.error, .badge.other { background: var(--error); }
.badge.found { background: var(--rejected); } .badge.nothing_found { background: var(--pass); }
.badge.partly_checked { background: #9a6700; } .badge.not_checked { background: var(--error); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 8px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; min-width: 110px; }
.card .value { font-size: 22px; font-weight: 600; }
.card .label { color: var(--muted); font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
.chart { flex: 0 0 auto; }
svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
svg .axis { stroke: #8c959f; } svg .grid { stroke: #eaeef2; }
svg .curve { fill: none; stroke: #0969da; stroke-width: 2; }
svg .bar { fill: #0969da; } svg .bar.slow { fill: var(--fail); } svg .bar.fast { fill: var(--pass); }
pre, code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; white-space: pre-wrap; word-break: break-all; margin: 4px 0; max-height: 360px; overflow: auto; }
.failure, .violation { border-left: 3px solid var(--fail); padding: 2px 0 2px 10px; margin: 8px 0; }
.violation { border-left-color: var(--rejected); }
dl.evidence { display: grid; grid-template-columns: 160px 1fr; gap: 2px 10px; margin: 4px 0; }
dl.evidence dt { color: var(--muted); } dl.evidence dd { margin: 0; word-break: break-all; }
.muted { color: var(--muted); }
details > summary { cursor: pointer; }
.op-evidence { border-top: 1px solid var(--line); margin-top: 12px; padding-top: 2px; }
)css";
  return css;
}

const std::string& sorting_script() {
  static const std::string js = R"js(
(function () {
  function key(row, index, numeric) {
    var cell = row.cells[index];
    var v = cell.hasAttribute('data-sort') ? cell.getAttribute('data-sort') : cell.textContent.trim();
    if (!numeric) return v.toLowerCase();
    var n = parseFloat(v);
    return isNaN(n) ? -Infinity : n;
  }
  function sortBy(table, th, direction) {
    var index = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var numeric = th.getAttribute('data-type') === 'number';
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var order = new Map();
    rows.forEach(function (r, i) { order.set(r, i); });
    rows.sort(function (a, b) {
      var x = key(a, index, numeric), y = key(b, index, numeric);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return (direction === 'ascending' ? c : -c) || order.get(a) - order.get(b);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', direction);
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      if (!th.hasAttribute('data-type')) return;
      th.tabIndex = 0;
      var toggle = function () {
        sortBy(table, th, th.getAttribute('aria-sort') === 'descending' ? 'ascending' : 'descending');
      };
      th.addEventListener('click', toggle);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); }
      });
      if (th.hasAttribute('data-initial-sort')) sortBy(table, th, th.getAttribute('data-initial-sort'));
    });
    table.setAttribute('data-sorting', 'ready');
  });
})();
)js";
  return js;
}

}  // namespace kg::results::html

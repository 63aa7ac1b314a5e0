"""The console's script and style sheet, served from ``/static/``: the pages' only script (no inline code,
so the Content-Security-Policy can forbid every other script)."""

from __future__ import annotations

__all__ = ["CSS", "JS"]

JS = r"""
// Live pages: the element with data-live follows a Server-Sent Events stream of its children, rendered
// (and escaped) by the server. Children are matched by id; one whose version (data-v) did not change is
// kept as it is, so a decision form being filled in survives an update.
(function () {
  "use strict";
  function merge(live, html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var cur = live.firstElementChild;
    Array.prototype.slice.call(tpl.content.children).forEach(function (n) {
      var old = n.id ? document.getElementById(n.id) : null;
      if (old && old.parentNode === live && old.getAttribute("data-v") === n.getAttribute("data-v")) {
        if (old !== cur) { live.insertBefore(old, cur); } else { cur = cur.nextElementSibling; }
      } else {
        if (old && old.parentNode === live) { if (old === cur) { cur = cur.nextElementSibling; } old.remove(); }
        live.insertBefore(n, cur);
      }
    });
    while (cur) { var next = cur.nextElementSibling; cur.remove(); cur = next; }
    remember(live);
  }
  function remember(root) {
    var name = localStorage.getItem("toolslip-by") || "";
    root.querySelectorAll("input.by").forEach(function (input) { if (!input.value) { input.value = name; } });
  }
  document.addEventListener("submit", function (ev) {
    var by = ev.target.querySelector("input.by");
    if (by && by.value) { localStorage.setItem("toolslip-by", by.value); }
  });
  document.querySelectorAll("[data-live]").forEach(function (live) {
    remember(live);
    if (!window.EventSource) { return; }
    var source = new EventSource(live.getAttribute("data-live"));
    source.onmessage = function (ev) { merge(live, ev.data); document.body.setAttribute("data-updated", Date.now()); };
  });
})();
"""

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
header { display: flex; gap: 2em; align-items: center; padding: .6em 1.2em; background: #20232a; color: #fff; }
header a { color: #cfd8dc; margin-right: 1.2em; text-decoration: none; }
header a.on { color: #fff; border-bottom: 2px solid #61dafb; }
main { padding: 1em 1.2em; max-width: 100%; overflow-x: hidden; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .3em .5em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.prompt { max-width: 28em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.state { font-weight: 600; }
.state.completed { color: #1b7f3b; } .state.paused { color: #b26a00; } .state.running { color: #0b62c4; }
.state.failed, .state.interrupted { color: #b3261e; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 30em; overflow: auto; background: #f3f3f3;
      padding: .4em; margin: .2em 0; }
ol.timeline { list-style: none; padding: 0; }
ol.timeline li, ul.inbox li { background: #fff; border: 1px solid #e3e3e3; border-radius: 4px; margin: .4em 0;
      padding: .5em .7em; }
li.decision, .decided { border-left: 4px solid #0b62c4; }
li.held { border-left: 4px solid #b26a00; }
.outcome { font-weight: 600; } .outcome.ran { color: #1b7f3b; } .outcome.held { color: #b26a00; }
.outcome.refused, .outcome.failed { color: #b3261e; }
a.trial { color: #b3261e; } a.trial.pass, .verdict.pass { color: #1b7f3b; } a.trial.running { color: #0b62c4; }
.verdict { font-weight: 600; color: #b3261e; }
.gate { color: #6a1b9a; } .why { color: #555; } .at { color: #777; }
form.decide label { display: block; margin: .3em 0; }
form.decide textarea, form.decide input[name=note] { width: 100%; font-family: monospace; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.cols > div { min-width: 0; }
ul.inbox { list-style: none; padding: 0; }
.error { color: #b3261e; font-weight: 600; }
"""

"""`kg view`: the graph as one self-contained HTML page (no CDN, works offline).

The renderer is our own: a force-directed layout on a grid (so 5,000+ nodes
settle in seconds) drawn on a <canvas>, in vanilla JS inlined in the page. The
graph travels as JSON inside `<script type="application/json">` with `<`, `>`,
`&`, U+2028 and U+2029 escaped, so no user text can close the script element;
the page puts user text into the DOM only through `textContent`, so Markdown or
HTML in a body is shown as text, never parsed.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from git_gasp.base.files import write_output
from git_gasp.kg import index
from git_gasp.kg.config import state_home
from git_gasp.kg.frontmatter import lenient_fields, split
from git_gasp.kg.model import read_text
from git_gasp.kg.workspace import Workspace
from git_gasp.view.htmlpage import script_json

MAX_TEXT = 20_000  # characters of body kept per entity/relation


def _read(root: Path, rel: str) -> tuple[dict[str, Any], str]:
    text = read_text(root, rel)
    if text is None:
        return {}, ""
    fm, body = split(text)
    fields = lenient_fields(fm)
    body = body.strip("\n")
    if len(body) > MAX_TEXT:
        body = body[:MAX_TEXT] + "\n… (truncated)"
    return fields, body


def _str(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return ", ".join(_str(x) for x in v)
    return str(v)


def graph_data(ws: Workspace, *, uncommitted: bool = False) -> dict[str, Any]:
    idx = index.load(ws.path, uncommitted=uncommitted)
    nodes: list[dict[str, Any]] = []
    pos: dict[str, int] = {}
    edges: list[list[Any]] = []
    root = ws.path
    for _pn, d in idx.docs("e"):
        rel = d[0]
        parts = rel.split("/")
        fields, body = _read(root, rel)
        al = fields.get("aliases")
        aliases = [_str(a) for a in al] if isinstance(al, list) else ([_str(al)] if al else [])
        pos[parts[1]] = len(nodes)
        nodes.append({"id": parts[1], "label": d[2] or parts[1], "type": d[3],
                      "aliases": aliases, "valid": d[4] != "s", "updated": d[6],
                      "sources": _str(fields.get("sources")), "body": body})
    for _pn, d in idx.docs("r"):
        parts = d[0].split("/")
        src, rtype, dst = parts[1], parts[2], parts[3][:-3]
        for end in (src, dst):
            if end not in pos:
                pos[end] = len(nodes)
                nodes.append({"id": end, "label": end, "type": "(missing)", "aliases": [],
                              "valid": True, "updated": "", "sources": "", "body": "",
                              "missing": True})
        _fields, body = _read(root, d[0])
        edges.append([pos[src], pos[dst], rtype, d[4] != "s", body])
    return {"branch": ws.branch, "repo": ws.repo, "nodes": nodes, "edges": edges}


def render(data: dict[str, Any]) -> str:
    title = html.escape(f"perstate: {data['branch']} ({len(data['nodes'])} entities)")
    return (PAGE.replace("__TITLE__", title)
            .replace("__DATA__", script_json(data)))


def _home_of(out: Path, ws: Workspace) -> Path | None:
    """The state home or worktree `out` lies in (no link may lead there), else None."""
    target = Path(os.path.abspath(out))
    for home in (state_home(), ws.path):
        base = Path(os.path.abspath(home))
        if base == target or base in target.parents:
            return base
    return None


def write(ws: Workspace, out: Path, *, uncommitted: bool = False) -> tuple[int, int]:
    """Write the page to `out` atomically; (entities, relations) drawn."""
    data = graph_data(ws, uncommitted=uncommitted)
    page = render(data)
    write_output(out, page.encode("utf-8"), root=_home_of(out, ws), mode=0o600,
                 make_parents=True)
    return sum(1 for n in data["nodes"] if not n.get("missing")), len(data["edges"])


PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; script-src 'unsafe-inline';
               style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  html, body { margin: 0; height: 100%; font: 14px/1.4 system-ui, sans-serif; color: #222; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 12px; align-items: center; padding: 6px 10px;
           border-bottom: 1px solid #ddd; background: #fafafa; }
  header input { flex: 0 0 260px; padding: 4px 6px; }
  #status { color: #666; font-size: 12px; }
  main { flex: 1; display: flex; min-height: 0; }
  #wrap { flex: 1; position: relative; min-width: 0; }
  canvas { position: absolute; inset: 0; width: 100%; height: 100%; cursor: grab; }
  aside { width: 380px; overflow: auto; border-left: 1px solid #ddd; padding: 10px;
          background: #fff; }
  aside h2 { margin: 0 0 4px; font-size: 18px; word-break: break-word; }
  .meta { color: #555; font-size: 12px; margin-bottom: 8px; word-break: break-word; }
  pre.body { white-space: pre-wrap; word-break: break-word; background: #f6f6f6;
             padding: 8px; border-radius: 4px; font: 12px/1.45 ui-monospace, monospace; }
  .rel { border-top: 1px solid #eee; padding: 6px 0; }
  .rel button, #results button { background: none; border: 0; color: #0a58ca; cursor: pointer;
             padding: 0; font: inherit; text-align: left; }
  #results { position: absolute; top: 4px; left: 4px; max-height: 40%; overflow: auto;
             background: rgba(255,255,255,.95); border: 1px solid #ddd; padding: 4px 8px;
             display: none; z-index: 2; }
  #legend { position: absolute; bottom: 4px; left: 4px; background: rgba(255,255,255,.9);
            padding: 4px 8px; font-size: 12px; max-height: 30%; overflow: auto; }
  .sw { display: inline-block; width: 10px; height: 10px; border-radius: 50%;
        margin-right: 4px; vertical-align: middle; }
  .superseded { color: #999; text-decoration: line-through; }
</style>
</head>
<body>
<header>
  <strong>perstate</strong>
  <input id="q" type="search" placeholder="search id, label, alias, text… (Enter: go)"
         autocomplete="off">
  <span id="status">loading…</span>
</header>
<main>
  <div id="wrap"><canvas id="c"></canvas><div id="results"></div><div id="legend"></div></div>
  <aside id="panel"><p class="meta">Click a node to read it. Drag to pan, wheel to zoom.</p></aside>
</main>
<script id="graph-data" type="application/json">__DATA__</script>
<script>
"use strict";
(function () {
  var errors = 0;
  window.addEventListener("error", function (ev) {
    errors += 1;
    document.body.setAttribute("data-errors", String(errors));
    var s = document.getElementById("status");
    if (s) { s.textContent = "error: " + (ev && ev.message ? ev.message : "unknown"); }
  });
  var D = JSON.parse(document.getElementById("graph-data").textContent);
  var N = D.nodes, E = D.edges, n = N.length;
  var canvas = document.getElementById("c"), ctx = canvas.getContext("2d");
  var statusEl = document.getElementById("status"), panel = document.getElementById("panel");
  var qEl = document.getElementById("q"), resultsEl = document.getElementById("results");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  // colours by type: a stable hue per type name
  var typeColor = {}, typeCount = {};
  function hue(s) {
    var h = 0;
    for (var i = 0; i < s.length; i++) { h = (h * 31 + s.charCodeAt(i)) >>> 0; }
    return h % 360;
  }
  N.forEach(function (d) {
    var t = d.type || "(none)";
    typeCount[t] = (typeCount[t] || 0) + 1;
    if (!typeColor[t]) {
      typeColor[t] = t === "(missing)" ? "#bbb" : "hsl(" + hue(t) + ",65%,50%)";
    }
  });
  var legend = document.getElementById("legend");
  Object.keys(typeCount).sort().forEach(function (t) {
    var row = el("div");
    var sw = el("span", "sw"); sw.style.background = typeColor[t];
    row.appendChild(sw); row.appendChild(document.createTextNode(t + " (" + typeCount[t] + ")"));
    legend.appendChild(row);
  });

  // adjacency
  var outE = [], inE = [], deg = new Float64Array(n);
  for (var i = 0; i < n; i++) { outE.push([]); inE.push([]); }
  E.forEach(function (e, k) { outE[e[0]].push(k); inE[e[1]].push(k); deg[e[0]]++; deg[e[1]]++; });
  var byId = {}; N.forEach(function (d, k) { byId[d.id] = k; });

  // layout: seeded positions by type, then a grid-accelerated force simulation
  var seed = 12345;
  function rnd() { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; }
  var X = new Float64Array(n), Y = new Float64Array(n);
  var VX = new Float64Array(n), VY = new Float64Array(n);
  var types = Object.keys(typeCount).sort(), R0 = Math.sqrt(n) * 30 + 50;
  N.forEach(function (d, k) {
    var a = 2 * Math.PI * types.indexOf(d.type || "(none)") / Math.max(1, types.length);
    X[k] = Math.cos(a) * R0 * 0.5 + (rnd() - 0.5) * R0;
    Y[k] = Math.sin(a) * R0 * 0.5 + (rnd() - 0.5) * R0;
  });
  var K = 40, iter = 0, maxIter = n > 20000 ? 60 : (n > 3000 ? 200 : 400), alpha = 1;
  function step() {
    var cell = K * 2, grid = new Map();
    for (var i = 0; i < n; i++) {
      var key = Math.floor(X[i] / cell) * 100003 + Math.floor(Y[i] / cell);
      var b = grid.get(key); if (!b) { b = []; grid.set(key, b); } b.push(i);
    }
    for (var i = 0; i < n; i++) {
      var gx = Math.floor(X[i] / cell), gy = Math.floor(Y[i] / cell);
      for (var dx = -1; dx <= 1; dx++) for (var dy = -1; dy <= 1; dy++) {
        var b = grid.get((gx + dx) * 100003 + gy + dy); if (!b) continue;
        for (var j = 0; j < b.length; j++) {
          var o = b[j]; if (o <= i) continue;
          var ux = X[i] - X[o], uy = Y[i] - Y[o], d2 = ux * ux + uy * uy + 0.01;
          if (d2 > cell * cell) continue;
          var f = K * K / d2 * 0.5;
          VX[i] += ux * f; VY[i] += uy * f; VX[o] -= ux * f; VY[o] -= uy * f;
        }
      }
    }
    for (var k = 0; k < E.length; k++) {
      var s = E[k][0], t = E[k][1]; if (s === t) continue;
      var ux = X[t] - X[s], uy = Y[t] - Y[s], d = Math.sqrt(ux * ux + uy * uy) + 0.01;
      var f = (d - K) / d * 0.05;
      VX[s] += ux * f; VY[s] += uy * f; VX[t] -= ux * f; VY[t] -= uy * f;
    }
    for (var i = 0; i < n; i++) {
      VX[i] -= X[i] * 0.002; VY[i] -= Y[i] * 0.002;
      var v = Math.sqrt(VX[i] * VX[i] + VY[i] * VY[i]), lim = 30 * alpha + 1;
      if (v > lim) { VX[i] *= lim / v; VY[i] *= lim / v; }
      X[i] += VX[i] * alpha; Y[i] += VY[i] * alpha; VX[i] *= 0.5; VY[i] *= 0.5;
    }
    alpha = Math.max(0.02, alpha * 0.985); iter++;
  }

  // view transform
  var scale = 1, ox = 0, oy = 0, W = 0, H = 0, dpr = window.devicePixelRatio || 1;
  function resize() {
    W = canvas.clientWidth || 800; H = canvas.clientHeight || 600;
    canvas.width = W * dpr; canvas.height = H * dpr;
  }
  function fit() {
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (var i = 0; i < n; i++) {
      if (X[i] < minX) minX = X[i]; if (X[i] > maxX) maxX = X[i];
      if (Y[i] < minY) minY = Y[i]; if (Y[i] > maxY) maxY = Y[i];
    }
    if (!n) { scale = 1; ox = W / 2; oy = H / 2; return; }
    var w = Math.max(1, maxX - minX), h = Math.max(1, maxY - minY);
    scale = Math.min(W / (w + 80), H / (h + 80), 2);
    ox = W / 2 - (minX + maxX) / 2 * scale; oy = H / 2 - (minY + maxY) / 2 * scale;
  }
  var selected = -1, matches = null;
  function draw() {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.save(); ctx.translate(ox, oy); ctx.scale(scale, scale);
    ctx.lineWidth = 1 / scale;
    ctx.strokeStyle = "rgba(120,120,120,0.35)";
    ctx.beginPath();
    for (var k = 0; k < E.length; k++) {
      var e = E[k]; if (!e[3]) continue;
      ctx.moveTo(X[e[0]], Y[e[0]]); ctx.lineTo(X[e[1]], Y[e[1]]);
    }
    ctx.stroke();
    ctx.setLineDash([4 / scale, 4 / scale]); ctx.strokeStyle = "rgba(180,120,120,0.35)";
    ctx.beginPath();
    for (var k = 0; k < E.length; k++) {
      var e = E[k]; if (e[3]) continue;
      ctx.moveTo(X[e[0]], Y[e[0]]); ctx.lineTo(X[e[1]], Y[e[1]]);
    }
    ctx.stroke(); ctx.setLineDash([]);
    var r = Math.max(3, 4 / Math.sqrt(scale));
    for (var i = 0; i < n; i++) {
      var dim = matches && !matches.has(i);
      ctx.globalAlpha = dim ? 0.15 : (N[i].valid ? 1 : 0.45);
      ctx.fillStyle = typeColor[N[i].type || "(none)"];
      ctx.beginPath();
      ctx.arc(X[i], Y[i], r + Math.min(6, Math.sqrt(deg[i])), 0, 6.2832);
      ctx.fill();
    }
    ctx.globalAlpha = 1;
    var showLabels = scale > 0.6 || n < 200;
    ctx.fillStyle = "#222"; ctx.font = (11 / scale) + "px system-ui, sans-serif";
    if (showLabels) {
      for (var i = 0; i < n; i++) {
        if (matches && !matches.has(i)) continue;
        var sx = X[i] * scale + ox, sy = Y[i] * scale + oy;
        if (sx < -50 || sy < -20 || sx > W + 50 || sy > H + 20) continue;
        ctx.fillText(N[i].label, X[i] + r + 2, Y[i] + 3 / scale);
      }
      // edge labels (relation types) at midpoints
      ctx.fillStyle = "#777"; ctx.font = (9 / scale) + "px system-ui, sans-serif";
      if (scale > 1.2 || E.length < 300) {
        for (var k = 0; k < E.length; k++) {
          var e = E[k], mx = (X[e[0]] + X[e[1]]) / 2, my = (Y[e[0]] + Y[e[1]]) / 2;
          var sx = mx * scale + ox, sy = my * scale + oy;
          if (sx < 0 || sy < 0 || sx > W || sy > H) continue;
          ctx.fillText(e[2], mx, my);
        }
      }
    }
    if (selected >= 0) {
      ctx.strokeStyle = "#000"; ctx.lineWidth = 2 / scale;
      ctx.beginPath(); ctx.arc(X[selected], Y[selected], r + 6, 0, 6.2832); ctx.stroke();
      ctx.fillStyle = "#000"; ctx.font = "bold " + (12 / scale) + "px system-ui, sans-serif";
      ctx.fillText(N[selected].label, X[selected] + r + 8, Y[selected]);
      ctx.fillStyle = "#444"; ctx.font = (10 / scale) + "px system-ui, sans-serif";
      outE[selected].concat(inE[selected]).forEach(function (k) {
        var e = E[k]; ctx.fillText(e[2], (X[e[0]] + X[e[1]]) / 2, (Y[e[0]] + Y[e[1]]) / 2);
      });
    }
    ctx.restore();
  }

  function relRow(k, outgoing) {
    var e = E[k], other = outgoing ? e[1] : e[0], row = el("div", "rel");
    var head = el("div", e[3] ? "" : "superseded");
    var arrow = outgoing ? "→ " + e[2] + " " : "← " + e[2] + " from ";
    head.appendChild(document.createTextNode(arrow));
    var b = el("button", "", N[other].label + " (" + N[other].id + ")");
    b.addEventListener("click", function () { select(other, true); });
    head.appendChild(b); row.appendChild(head);
    if (e[4]) { row.appendChild(el("pre", "body", e[4])); }
    return row;
  }
  function select(i, center) {
    selected = i;
    panel.textContent = "";
    if (i < 0) { draw(); return; }
    var d = N[i];
    panel.appendChild(el("h2", d.valid ? "" : "superseded", d.label));
    panel.appendChild(el("div", "meta", "id: " + d.id + " · type: " + (d.type || "-") +
      (d.updated ? " · updated " + d.updated : "") + (d.valid ? "" : " · superseded")));
    if (d.aliases.length) {
      panel.appendChild(el("div", "meta", "aliases: " + d.aliases.join(", ")));
    }
    if (d.sources) { panel.appendChild(el("div", "meta", "sources: " + d.sources)); }
    if (d.body) { panel.appendChild(el("pre", "body", d.body)); }
    if (outE[i].length) { panel.appendChild(el("h3", "", "Relations (" + outE[i].length + ")")); }
    outE[i].forEach(function (k) { panel.appendChild(relRow(k, true)); });
    if (inE[i].length) { panel.appendChild(el("h3", "", "Referenced by (" + inE[i].length + ")")); }
    inE[i].forEach(function (k) { panel.appendChild(relRow(k, false)); });
    if (center) { ox = W / 2 - X[i] * scale; oy = H / 2 - Y[i] * scale; }
    draw();
  }

  function search(q) {
    q = q.trim().toLowerCase();
    resultsEl.textContent = "";
    if (!q) { matches = null; resultsEl.style.display = "none"; draw(); return []; }
    var hits = [];
    for (var i = 0; i < n; i++) {
      var d = N[i];
      var head = (d.id + "\u001f" + d.label + "\u001f" + d.aliases.join("\u001f")).toLowerCase();
      if (head.indexOf(q) >= 0) { hits.push(i); }
    }
    for (var i = 0; i < n && hits.length < 5000; i++) {
      if (hits.indexOf(i) < 0 && N[i].body.toLowerCase().indexOf(q) >= 0) { hits.push(i); }
    }
    matches = new Set(hits);
    hits.slice(0, 50).forEach(function (i) {
      var b = el("button", "", N[i].label + " (" + N[i].id + ")");
      b.addEventListener("click", function () { select(i, true); });
      var row = el("div"); row.appendChild(b); resultsEl.appendChild(row);
    });
    if (!hits.length) { resultsEl.appendChild(el("div", "meta", "no match")); }
    resultsEl.style.display = "block";
    draw();
    return hits;
  }
  qEl.addEventListener("input", function () { search(qEl.value); });
  qEl.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { var h = search(qEl.value); if (h.length) { select(h[0], true); } }
  });

  // pan / zoom / click
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, moved: false };
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
    ox += dx; oy += dy; drag.x = ev.clientX; drag.y = ev.clientY; draw();
  });
  window.addEventListener("mouseup", function (ev) {
    if (drag && !drag.moved) {
      var rect = canvas.getBoundingClientRect();
      var wx = (ev.clientX - rect.left - ox) / scale, wy = (ev.clientY - rect.top - oy) / scale;
      var best = -1, bd = (12 / scale) * (12 / scale);
      for (var i = 0; i < n; i++) {
        var dx = X[i] - wx, dy = Y[i] - wy, d2 = dx * dx + dy * dy;
        if (d2 < bd) { bd = d2; best = i; }
      }
      select(best, false);
    }
    drag = null;
  });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = canvas.getBoundingClientRect();
    var mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
    var f = Math.exp(-ev.deltaY * 0.0015);
    ox = mx - (mx - ox) * f; oy = my - (my - oy) * f; scale *= f; draw();
  }, { passive: false });
  window.addEventListener("resize", function () { resize(); draw(); });

  function initialSelection() {
    var m = /^#node=(.+)$/.exec(window.location.hash);
    if (m) { var k = byId[decodeURIComponent(m[1])]; if (k !== undefined) select(k, true); }
  }
  resize();
  var started = Date.now();
  function tick() {
    var t0 = Date.now();
    while (iter < maxIter && Date.now() - t0 < 30) step();
    fit(); draw();
    if (selected >= 0) { select(selected, true); }
    if (iter < maxIter && Date.now() - started < 8000) { requestAnimationFrame(tick); }
    else { statusEl.textContent = n + " entities, " + E.length + " relations · " + D.branch; }
  }
  statusEl.textContent = n + " entities, " + E.length + " relations · laying out…";
  document.body.setAttribute("data-nodes", String(n));
  document.body.setAttribute("data-edges", String(E.length));
  draw();
  initialSelection();
  document.body.setAttribute("data-rendered", String(n));
  requestAnimationFrame(tick);
})();
</script>
</body>
</html>
"""

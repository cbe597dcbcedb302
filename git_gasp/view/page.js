"use strict";
// git gasp view: every string from the log reaches the DOM through textContent (or as
// a data-* attribute value), never as markup. Lists render only their visible rows.
(function () {
  var errors = 0;
  window.addEventListener("error", function (ev) {
    errors += 1;
    document.body.setAttribute("data-errors", String(errors));
    var s = document.getElementById("counts");
    if (s) { s.textContent = "error: " + (ev && ev.message ? ev.message : "unknown"); }
  });
  var D = JSON.parse(document.getElementById("view-data").textContent);
  var N = D.nodes, RELS = D.rels, RUNS = D.runs, ROWS = D.rows;
  var $ = function (id) { return document.getElementById(id); };
  var ROW_H = 40, PAGE = 150, SHOWN_EVENTS = 200, SHOWN_RELS = 200;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function shortId(id, tail) {
    if (!tail) { return id; }
    var k = id.indexOf("_");
    return (k >= 0 ? id.slice(0, k + 1) : "") + "..." + id.slice(id.length - tail);
  }
  function when(ms) {
    if (typeof ms !== "number") { return "-"; }
    var d = new Date(ms);
    return isNaN(d.getTime()) ? String(ms) : d.toISOString().replace("T", " ").slice(0, 19);
  }
  function dur(ms) {
    if (typeof ms !== "number") { return "-"; }
    if (ms < 1000) { return ms + " ms"; }
    var s = ms / 1000;
    if (s < 120) { return s.toFixed(1) + " s"; }
    if (s < 7200) { return (s / 60).toFixed(1) + " min"; }
    return (s / 3600).toFixed(1) + " h";
  }
  function badge(kind) {
    var b = el("span", "badge", kind);
    b.setAttribute("data-kind", kind);
    return b;
  }

  // --- ids: a unique prefix, the part after the kind, or kind_...tail (protocol.idmatch)
  function startsWith(s, p) { return s.lastIndexOf(p, 0) === 0; }
  function endsWith(s, p) { return p.length <= s.length && s.indexOf(p, s.length - p.length) >= 0; }
  function gapOf(q) {
    var gaps = ["...", "\u2026"];
    for (var i = 0; i < gaps.length; i++) {
      var k = q.indexOf(gaps[i]);
      if (k >= 0 && k + gaps[i].length < q.length) { return [q.slice(0, k), q.slice(k + gaps[i].length)]; }
    }
    return null;
  }
  function idMatches(q, id) {
    if (startsWith(id, q)) { return true; }
    var g = gapOf(q);
    if (g) { return endsWith(id, g[1]) && startsWith(id, g[0]) && id.length >= g[0].length + g[1].length; }
    if (q.indexOf("_") >= 0) { return false; }
    var k = id.indexOf("_");
    return k >= 0 && startsWith(id.slice(k + 1), q);
  }

  // --- indexes -------------------------------------------------------------------
  var byId = new Map(), runById = new Map(), adj = [], lower = [], nodeTs = [];
  N.forEach(function (n, i) {
    byId.set(n.id, i); adj.push([]);
    lower.push((n.l || "").toLowerCase());
    nodeTs.push(n.e.length ? ROWS[n.e[0]][2] : 0);
  });
  RUNS.forEach(function (r, i) { runById.set(r.id, i); });
  RELS.forEach(function (r, k) { adj[r[0]].push(k); if (r[2] !== r[0]) { adj[r[2]].push(k); } });
  function other(k, i) { var r = RELS[k]; return r[0] === i ? r[2] : r[0]; }
  function title(i) { var n = N[i]; return n.l || (n.s && !n.missing ? n.s + " " + n.k : n.id); }

  // --- filters and search ------------------------------------------------------------
  var qEl = $("q"), kindEl = $("kind"), statusEl = $("status");
  function fillSelect(sel, counts) {
    Object.keys(counts).sort().forEach(function (k) {
      var o = el("option", "", k + " (" + counts[k] + ")"); o.value = k; sel.appendChild(o);
    });
  }
  (function () {
    var kinds = {}, statuses = {};
    N.forEach(function (n) {
      if (n.missing) { return; }
      kinds[n.k] = (kinds[n.k] || 0) + 1;
      if (n.s) { statuses[n.s] = (statuses[n.s] || 0) + 1; }
    });
    RUNS.forEach(function (r) {
      if (!byId.has(r.id)) { kinds.run = (kinds.run || 0) + 1; }
      var s = r.outcome || r.status;
      if (s && !(r.node >= 0)) { statuses[s] = (statuses[s] || 0) + 1; }
    });
    fillSelect(kindEl, kinds); fillSelect(statusEl, statuses);
  })();

  var nodeView = [], runView = [];
  function matchNode(i, q, ql, kind, status) {
    var n = N[i];
    if (n.missing && !q) { return false; }
    if (kind && n.k !== kind) { return false; }
    if (status && n.s !== status) { return false; }
    if (!q) { return true; }
    return idMatches(q, n.id) || lower[i].indexOf(ql) >= 0;
  }
  function matchRun(r, q, ql, kind, status) {
    if (kind && kind !== "run") { return false; }
    if (status && r.status !== status && r.outcome !== status) { return false; }
    if (!q) { return true; }
    return idMatches(q, r.id) || (r.task || "").toLowerCase().indexOf(ql) >= 0;
  }
  function applyFilters() {
    var q = qEl.value.trim(), ql = q.toLowerCase(), kind = kindEl.value, status = statusEl.value;
    nodeView = [];
    for (var i = 0; i < N.length; i++) { if (matchNode(i, q, ql, kind, status)) { nodeView.push(i); } }
    var exact = q ? byId.get(q) : undefined;
    nodeView.sort(function (a, b) {
      if (a === exact) { return -1; }
      if (b === exact) { return 1; }
      return nodeTs[b] - nodeTs[a] || (a - b);
    });
    runView = [];
    for (var j = RUNS.length - 1; j >= 0; j--) {
      if (matchRun(RUNS[j], q, ql, kind, status)) { runView.push(j); }
    }
    $("tab-nodes").textContent = "Nodes (" + nodeView.length + ")";
    $("tab-runs").textContent = "Runs (" + runView.length + ")";
    if (tab === "nodes" && !nodeView.length && runView.length) { setTab("runs"); }
    else if (tab === "runs" && !runView.length && nodeView.length) { setTab("nodes"); }
    runMatch = q || kind || status ? new Set(runView) : null;
    drawList(true); drawTimeline();
    document.body.setAttribute("data-matches", String(nodeView.length + runView.length));
  }
  var timer = 0;
  qEl.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilters, 120); });
  qEl.addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter") { return; }
    clearTimeout(timer); applyFilters();
    if (tab === "nodes" && nodeView.length) { selectNode(nodeView[0]); }
    else if (runView.length) { selectRun(runView[0]); }
  });
  kindEl.addEventListener("change", applyFilters);
  statusEl.addEventListener("change", applyFilters);

  // --- the side list (virtual: only visible rows exist) ------------------------------
  var tab = "nodes", listEl = $("list"), spacer = $("spacer"), selNode = -1, selRun = -1;
  function setTab(t) {
    tab = t;
    $("tab-nodes").className = t === "nodes" ? "on" : "";
    $("tab-runs").className = t === "runs" ? "on" : "";
    drawList(true);
  }
  $("tab-nodes").addEventListener("click", function () { setTab("nodes"); });
  $("tab-runs").addEventListener("click", function () { setTab("runs"); });
  function nodeRow(i) {
    var n = N[i], row = el("div", "row" + (i === selNode ? " sel" : ""));
    add(row, badge(n.k));
    add(row, el("span", "", title(i)));
    add(row, el("div", "sub", (n.s ? n.s + " · " : "") + shortId(n.id, n.t)));
    row.addEventListener("click", function () { selectNode(i); });
    return row;
  }
  function runRow(j) {
    var r = RUNS[j], row = el("div", "row" + (j === selRun ? " sel" : ""));
    add(row, badge("run"));
    add(row, el("span", "", r.task || r.id));
    add(row, el("div", "sub", when(r.start) + " · " + who(r) + " · " + (r.outcome || r.status) + " · " +
      dur(r.dur)));
    row.addEventListener("click", function () { selectRun(j); });
    return row;
  }
  function drawList(reset) {
    var items = tab === "nodes" ? nodeView : runView;
    if (reset) { listEl.scrollTop = 0; }
    spacer.textContent = "";
    spacer.style.height = Math.max(items.length * ROW_H, 1) + "px";
    if (!items.length) { add(spacer, el("div", "empty muted", "nothing matches")); return; }
    var first = Math.floor(listEl.scrollTop / ROW_H);
    var last = Math.min(items.length, first + Math.ceil((listEl.clientHeight || 600) / ROW_H) + 5);
    for (var p = Math.max(0, first - 5); p < last; p++) {
      var row = tab === "nodes" ? nodeRow(items[p]) : runRow(items[p]);
      row.style.top = (p * ROW_H) + "px";
      spacer.appendChild(row);
    }
  }
  var scrolling = false;
  listEl.addEventListener("scroll", function () {
    if (scrolling) { return; }
    scrolling = true;
    requestAnimationFrame(function () { scrolling = false; drawList(false); });
  });

  // --- the timeline of runs (one canvas): a lane per person and agent, a time axis ----
  var canvas = $("tl"), ctx = canvas.getContext("2d"), tip = $("tip");
  var t0 = Infinity, t1 = -Infinity, lanes = [], laneKeys = [], runMatch = null;
  var LANE_H = 22, TOP = 4, AXIS_H = 34, PAD = 10, MAX_LANES = 8, LABEL_W = 120;
  RUNS.forEach(function (r) {
    if (typeof r.start === "number") { t0 = Math.min(t0, r.start); t1 = Math.max(t1, r.end || r.start); }
  });
  if (!(t1 > t0)) { t0 = isFinite(t0) ? t0 - 1000 : 0; t1 = t0 + 2000; }
  function who(r) { return (r.person || "unknown person") + " · " + (r.agent || "unknown agent"); }
  function models(r) { return Object.keys(r.models || {}); }
  (function () {  // a lane per person and agent, in order of their first run; then "others"
    var laneOf = new Map();
    RUNS.forEach(function (r) {
      var key = who(r);
      if (!laneOf.has(key)) {
        if (laneKeys.length < MAX_LANES) { laneOf.set(key, laneKeys.length); laneKeys.push(key); }
        else { laneOf.set(key, MAX_LANES); if (laneKeys.length === MAX_LANES) { laneKeys.push("others"); } }
      }
      lanes.push(laneOf.get(key));
    });
    if (!laneKeys.length) { laneKeys.push("no runs"); }
  })();
  canvas.style.height = (TOP + laneKeys.length * LANE_H + AXIS_H) + "px";
  var v0 = t0, v1 = t1, W = 0, H = 0, dpr = window.devicePixelRatio || 1;
  function outcomeColour(r) {
    var o = String(r.outcome || "").toLowerCase();
    if (/fail|error|abort|crash|timeout|reject|cancel/.test(o)) { return "#cf222e"; }
    if (!r.outcome && r.status === "running") { return "#0969da"; }
    return r.outcome ? "#1a7f37" : "#8c959f";
  }
  var STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5,
    6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5, 2592e6, 31536e6];
  function iso(t) { var d = new Date(t); return isNaN(d.getTime()) ? "" : d.toISOString(); }
  function tickLabel(t, step, withDate) {  // as precise as the step needs; the date when it changes
    var s = iso(t);
    if (!s) { return String(t); }
    if (step >= 864e5) { return s.slice(0, 10); }
    var clock = step < 1e3 ? s.slice(11, 23) : step < 6e4 ? s.slice(11, 19) : s.slice(11, 16);
    return withDate ? s.slice(0, 10) + " " + clock : clock;
  }
  function xOf(t) { return LABEL_W + PAD + (t - v0) / (v1 - v0) * (W - LABEL_W - 2 * PAD); }
  function tOf(x) { return v0 + (x - LABEL_W - PAD) / (W - LABEL_W - 2 * PAD) * (v1 - v0); }
  function fit(text, width) {  // `text` cut with an ellipsis to `width` pixels
    if (ctx.measureText(text).width <= width) { return text; }
    var lo = 0, hi = text.length;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (ctx.measureText(text.slice(0, mid) + "…").width <= width) { lo = mid; } else { hi = mid - 1; } }
    return lo ? text.slice(0, lo) + "…" : "";
  }
  function drawTimeline() {
    W = canvas.clientWidth || 800; H = canvas.clientHeight || 120;
    canvas.width = W * dpr; canvas.height = H * dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px system-ui, sans-serif";
    var widest = 0;
    laneKeys.forEach(function (k) { widest = Math.max(widest, ctx.measureText(k).width); });
    LABEL_W = Math.min(Math.max(90, widest + 16), Math.round(W * 0.22));
    var bottom = TOP + laneKeys.length * LANE_H;
    laneKeys.forEach(function (k, lane) {  // lane stripes and their labels: person · agent
      ctx.fillStyle = lane % 2 ? "#ffffff" : "#f6f8fa";
      ctx.fillRect(0, TOP + lane * LANE_H, W, LANE_H);
      ctx.fillStyle = "#1f2328";
      ctx.fillText(fit(k, LABEL_W - 12), 8, TOP + lane * LANE_H + 15);
    });
    // the time axis: a tick every step that leaves room for its label, the date where it changes
    var span = v1 - v0, plot = W - LABEL_W - 2 * PAD, step = STEPS[STEPS.length - 1];
    for (var i = 0; i < STEPS.length; i++) { if (plot / (span / STEPS[i]) >= 110) { step = STEPS[i]; break; } }
    ctx.strokeStyle = "#d0d7de"; ctx.beginPath();
    ctx.moveTo(LABEL_W, bottom + 0.5); ctx.lineTo(W, bottom + 0.5); ctx.stroke();
    ctx.strokeStyle = "#eaeef2"; ctx.fillStyle = "#57606a"; ctx.font = "11px system-ui, sans-serif";
    var lastDay = "", first = true, ticks = [], right = -Infinity;
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      var x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, TOP); ctx.lineTo(x, bottom + 4); ctx.stroke();
      var day = iso(t).slice(0, 10), label = tickLabel(t, step, first || day !== lastDay);
      var lw = ctx.measureText(label).width, lx = Math.min(Math.max(LABEL_W, x - lw / 2), W - lw - 2);
      if (lx < right + 10) { continue; }  // no room after the label before (one with a date)
      lastDay = day; first = false; ticks.push(label); right = lx + lw;
      ctx.fillText(label, lx, bottom + 16);
    }
    ctx.fillStyle = "#656d76";
    ctx.fillText("time (UTC)", 8, bottom + 16);
    document.body.setAttribute("data-axis", ticks.join(" | "));  // what the canvas shows, as text
    document.body.setAttribute("data-lanes", laneKeys.join(" | "));
    ctx.fillStyle = "#1f2328"; ctx.strokeStyle = "#d0d7de";
    ctx.beginPath(); ctx.moveTo(LABEL_W + 0.5, TOP); ctx.lineTo(LABEL_W + 0.5, bottom); ctx.stroke();
    ctx.save(); ctx.beginPath(); ctx.rect(LABEL_W, 0, W - LABEL_W, H); ctx.clip();
    ctx.font = "11px system-ui, sans-serif";
    for (var j = 0; j < RUNS.length; j++) {  // a bar per run, coloured by outcome, naming its model
      var r = RUNS[j];
      if (typeof r.start !== "number") { continue; }
      var xa = xOf(r.start), xb = xOf(Math.max(r.end || r.start, r.start)), y = TOP + lanes[j] * LANE_H + 3;
      if (xb < LABEL_W || xa > W) { continue; }
      var bw = Math.max(3, xb - xa);
      ctx.globalAlpha = runMatch && !runMatch.has(j) ? 0.15 : 1;
      ctx.fillStyle = outcomeColour(r);
      ctx.fillRect(xa, y, bw, LANE_H - 6);
      var name = (models(r).join(", ") || "model unknown") + " · " + (r.outcome || r.status);
      var visible = Math.min(xb, W) - Math.max(xa, LABEL_W) - 8;
      if (visible > 24) {
        ctx.fillStyle = "#ffffff";
        ctx.fillText(fit(name, visible), Math.max(xa, LABEL_W) + 4, y + 12);
      }
    }
    ctx.globalAlpha = 1;
    if (selRun >= 0 && typeof RUNS[selRun].start === "number") {
      var s = RUNS[selRun], sa = xOf(s.start), sb = xOf(Math.max(s.end || s.start, s.start));
      ctx.strokeStyle = "#1f2328"; ctx.lineWidth = 2;
      ctx.strokeRect(sa - 2, TOP + lanes[selRun] * LANE_H + 1, Math.max(3, sb - sa) + 4, LANE_H - 2);
      ctx.lineWidth = 1;
    }
    ctx.restore();
  }
  function runAt(x, y) {
    var lane = Math.floor((y - TOP) / LANE_H), best = -1, bd = 5;
    if (x < LABEL_W) { return -1; }
    for (var j = 0; j < RUNS.length; j++) {
      var r = RUNS[j];
      if (lanes[j] !== lane || typeof r.start !== "number") { continue; }
      var xa = xOf(r.start), xb = Math.max(xa + 3, xOf(Math.max(r.end || r.start, r.start)));
      var d = x < xa ? xa - x : (x > xb ? x - xb : 0);
      if (d < bd) { bd = d; best = j; }
    }
    return best;
  }
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, moved: false }; });
  window.addEventListener("mouseup", function (ev) {
    if (drag && !drag.moved) {
      var b = canvas.getBoundingClientRect(), j = runAt(ev.clientX - b.left, ev.clientY - b.top);
      if (j >= 0) { selectRun(j); }
    }
    drag = null;
  });
  canvas.addEventListener("mousemove", function (ev) {
    var b = canvas.getBoundingClientRect();
    if (drag) {
      var dx = ev.clientX - drag.x;
      if (Math.abs(dx) > 2) { drag.moved = true; }
      var dt = dx / (W - LABEL_W - 2 * PAD) * (v1 - v0);
      v0 -= dt; v1 -= dt; drag.x = ev.clientX; drawTimeline(); return;
    }
    var j = runAt(ev.clientX - b.left, ev.clientY - b.top);
    if (j < 0) { tip.hidden = true; return; }
    var r = RUNS[j];
    tip.textContent = (r.task || r.id) + "\n" + who(r) + " · " + (models(r).join(", ") || "model unknown") +
      "\n" + when(r.start) + " UTC · " + dur(r.dur) + " · " + (r.outcome || r.status) + "\n" +
      r.n.tool_calls + " tool calls, " + r.n.model_calls + " model calls";
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX - b.left + 12, W - 300) + "px";
    tip.style.top = (ev.clientY - b.top + 12) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var b = canvas.getBoundingClientRect(), t = tOf(ev.clientX - b.left), f = Math.exp(ev.deltaY * 0.0015);
    var span = Math.max((v1 - v0) * f, 1);
    v0 = t - (t - v0) * span / (v1 - v0); v1 = v0 + span; drawTimeline();
  }, { passive: false });
  canvas.addEventListener("dblclick", function () { v0 = t0; v1 = t1; drawTimeline(); });
  window.addEventListener("resize", function () { drawTimeline(); drawList(false); drawLinks(); markClipped(); });
  function markClipped() {  // the regions whose content is wider than they show (none, by design)
    var out = [];
    [["header", document.querySelector("header")], ["timeline", $("timeline")], ["list", $("list")],
     ["lineage", $("lin-scroll")], ["detail", detail]].forEach(function (p) {
      if (p[1] && p[1].scrollWidth > p[1].clientWidth + 1) { out.push(p[0]); }
    });
    document.querySelectorAll("#lin-inner .col").forEach(function (c) {
      var b = c.getBoundingClientRect(), box = $("lin-scroll").getBoundingClientRect();
      if (b.right > box.right + 1 && out.indexOf("lineage") < 0) { out.push("lineage"); }
    });
    document.body.setAttribute("data-clipped", out.join(" "));
  }

  // --- lineage: goal -> tasks -> runs -> patches -> evals -> decisions, and why --------
  var COLS = [["goal", "Goal"], ["task", "Tasks"], ["run", "Runs"], ["patch", "Patches"],
              ["eval", "Evals"], ["decision", "Decisions"], ["why", "Failures, observations"]];
  var RANK = { goal: 0, task: 1, run: 2, patch: 3, eval: 4, decision: 5 };
  function rank(i) { var r = RANK[N[i].k]; return r === undefined ? 9 : r; }
  function goalOf(i) {  // the nearest goal (breadth first, a few hops) or -1
    if (N[i].k === "goal") { return i; }
    var seen = new Set([i]), frontier = [i];
    for (var hop = 0; hop < 4 && frontier.length && seen.size < 5000; hop++) {
      var next = [];
      for (var f = 0; f < frontier.length; f++) {
        var a = adj[frontier[f]];
        for (var k = 0; k < a.length; k++) {
          var o = other(a[k], frontier[f]);
          if (seen.has(o)) { continue; }
          if (N[o].k === "goal") { return o; }
          seen.add(o); next.push(o);
        }
      }
      frontier = next;
    }
    return -1;
  }
  function lineage(root) {  // node -> [column, depth of context]
    var got = new Map([[root, [rank(root) === 9 ? 6 : rank(root), 0]]]), queue = [root];
    while (queue.length) {
      var cur = queue.shift(), r = rank(cur), ctxDepth = got.get(cur)[1], a = adj[cur];
      for (var k = 0; k < a.length; k++) {
        var rel = RELS[a[k]], o = other(a[k], cur);
        if (got.has(o) || N[o].missing) { continue; }
        var ro = rank(o);
        if (N[o].k === "goal") {
          if (r === 0 && rel[0] === o && rel[1] === "serves") { got.set(o, [0, 0]); queue.push(o); }
        } else if (ro !== 9) {
          if (r !== 9 && ro > r) { got.set(o, [ro, 0]); queue.push(o); }
        } else if (ctxDepth < 2) {
          got.set(o, [6, ctxDepth + 1]); queue.push(o);
        }
      }
      if (got.size > 20000) { break; }
    }
    return got;
  }
  function commitOf(n) {
    var p = n.p || {}, m = p.metadata || {};
    var c = p.references_commit || p.commit || m.commit || "";
    (n.a || []).forEach(function (a) { if (!c && a && /commit/.test(String(a.kind))) { c = a.uri || a.hash || ""; } });
    return typeof c === "string" ? c : "";
  }
  function cardMeta(i) {
    var n = N[i], p = n.p || {}, bits = [n.k];
    if (n.s) { bits.push(n.s); }
    var c = commitOf(n);
    if (c) { bits.push("commit " + c.slice(0, 12)); }
    if (n.k === "eval" && typeof p.score === "number") { bits.push("score " + p.score); }
    if (n.run !== undefined) { var r = RUNS[n.run]; bits.push(dur(r.dur), r.n.tool_calls + " tools"); }
    if (n.stale) { bits.push("stale"); }
    if (n.tomb) { bits.push("tombstoned"); }
    return bits.join(" · ") + " · " + shortId(n.id, n.t);
  }
  var linRunCards = new Map(), linRoot = -1, linCards = new Map(), linShown = [], linMembers = null, svgNS = "http://www.w3.org/2000/svg";
  function showLineage(root) {
    linRoot = root;
    var inner = $("lin-inner");
    inner.textContent = ""; linCards = new Map();
    if (root < 0) { $("lin-title").textContent = "Lineage: pick a goal"; linMembers = null; return; }
    $("lin-title").textContent = (N[root].k === "goal" ? "Lineage of goal: " : "Around " + N[root].k + ": ") + title(root);
    linMembers = lineage(root);
    var cols = COLS.map(function () { return []; });
    linMembers.forEach(function (v, i) { cols[v[0]].push(i); });
    linShown = COLS.map(function () { return PAGE; });
    cols.forEach(function (list) { list.sort(function (a, b) { return nodeTs[a] - nodeTs[b] || a - b; }); });
    RUNS.forEach(function (r, j) {  // runs the log has no node for, started by a goal shown
      if (r.node < 0 && r.goal >= 0 && linMembers.has(r.goal)) { cols[2].push(-1 - j); }
    });
    linRunCards = new Map();
    cols.forEach(function (list, c) {
      if (!list.length) { return; }
      var col = add(inner, el("div", "col"));
      add(col, el("h3", "", COLS[c][1] + " (" + list.length + ")"));
      var body = add(col, el("div"));
      function fill() {
        body.textContent = "";
        list.slice(0, linShown[c]).forEach(function (i) {
          if (i < 0) { linRunCards.set(-1 - i, add(body, runCard(-1 - i))); return; }
          var card = add(body, el("div", "card" + (i === selNode ? " sel" : "")));
          card.setAttribute("data-kind", N[i].k);
          card.title = title(i);
          add(card, el("div", "t", title(i)));
          add(card, el("div", "m", cardMeta(i)));
          card.addEventListener("click", function () { selectNode(i, true); });
          linCards.set(i, card);
        });
        if (list.length > linShown[c]) {
          var more = add(body, el("button", "more", "show " + Math.min(PAGE, list.length - linShown[c]) +
            " more of " + (list.length - linShown[c])));
          more.type = "button";
          more.addEventListener("click", function () {
            list.slice(linShown[c], linShown[c] + PAGE).forEach(function (i) { linCards.delete(i); });
            linShown[c] += PAGE; fill(); drawLinks();
          });
        }
      }
      fill();
    });
    document.body.setAttribute("data-lineage", String(linMembers.size + linRunCards.size));
    drawLinks();
  }
  function runCard(j) {
    var r = RUNS[j], card = el("div", "card" + (j === selRun ? " sel" : ""));
    card.setAttribute("data-kind", "run");
    add(card, el("div", "t", r.task || r.id));
    add(card, el("div", "m", ["run", r.outcome || r.status, who(r), models(r).join(", "),
      r.dur === null ? "" : dur(r.dur),
      r.n.tool_calls + " tools", shortId(r.id, r.t)].filter(Boolean).join(" · ")));
    card.addEventListener("click", function () { selectRun(j); });
    return card;
  }
  function drawLinks() {
    var inner = $("lin-inner"), old = inner.querySelector("svg");
    if (old) { old.remove(); }
    if (!linCards.size && !linRunCards.size) { return; }
    var svg = document.createElementNS(svgNS, "svg");
    svg.setAttribute("width", String(inner.scrollWidth)); svg.setAttribute("height", String(inner.scrollHeight));
    var drawn = 0, base = inner.getBoundingClientRect();
    function box(e) {
      var b = e.getBoundingClientRect();
      return { left: b.left - base.left, right: b.right - base.left, top: b.top - base.top, bottom: b.bottom - base.top };
    }
    linCards.forEach(function (card, i) {
      var a = adj[i];
      for (var k = 0; k < a.length && drawn < 4000; k++) {
        if (RELS[a[k]][0] !== i) { continue; }  // each relation once, from its source
        var o = RELS[a[k]][2], oc = linCards.get(o);
        if (!oc || o === i) { continue; }
        var ra = box(card), rb = box(oc), left = ra.left <= rb.left ? ra : rb, right = left === ra ? rb : ra;
        var x1 = left.right, y1 = (left.top + left.bottom) / 2;
        var x2 = right.left, y2 = (right.top + right.bottom) / 2;
        if (x2 <= x1) { x1 = (left.left + left.right) / 2; x2 = x1 + 8; }
        var path = document.createElementNS(svgNS, "path"), mid = (x1 + x2) / 2;
        path.setAttribute("d", "M" + x1 + " " + y1 + " C" + mid + " " + y1 + " " + mid + " " + y2 + " " + x2 + " " + y2);
        var hot = selNode === i || selNode === o;
        path.setAttribute("stroke", hot ? "#0969da" : "#afb8c1");
        path.setAttribute("stroke-width", hot ? "2" : "1");
        path.setAttribute("fill", "none");
        svg.appendChild(path); drawn++;
      }
    });
    linRunCards.forEach(function (card, j) {  // a run to its goal: no relation, its start
      var gc = linCards.get(RUNS[j].goal);
      if (!gc) { return; }
      var a = box(gc), b = box(card), path = document.createElementNS(svgNS, "path"), mid = (a.right + b.left) / 2;
      path.setAttribute("d", "M" + a.right + " " + (a.top + a.bottom) / 2 + " C" + mid + " " + (a.top + a.bottom) / 2 +
        " " + mid + " " + (b.top + b.bottom) / 2 + " " + b.left + " " + (b.top + b.bottom) / 2);
      path.setAttribute("stroke", j === selRun ? "#0969da" : "#afb8c1");
      path.setAttribute("stroke-dasharray", "4 3");
      path.setAttribute("fill", "none");
      svg.appendChild(path);
    });
    inner.insertBefore(svg, inner.firstChild);
  }

  // --- details -----------------------------------------------------------------------
  var detail = $("detail");
  // a value as fields a person reads: objects as nested tables, lists as items, times and
  // durations spelled out; never the raw JSON
  var SHOWN_ITEMS = 50;
  function scalar(v) { return v === null || v === undefined || typeof v !== "object"; }
  function show(td, k, v, depth) {
    if (v === null || v === undefined || v === "") { td.textContent = "-"; td.className = "muted"; return; }
    if (typeof v === "boolean") { td.textContent = v ? "yes" : "no"; return; }
    if (typeof v === "number") {
      td.textContent = /_ts_ms$|^ts_ms$|expires_at_ms$/.test(k) ? when(v) + " UTC" : /(^|_)duration_ms$/.test(k) ? dur(v) : String(v);
      return;
    }
    if (typeof v === "string") { td.textContent = v; if (v.indexOf("\n") >= 0) { td.className = "multi"; } return; }
    var list = Array.isArray(v), keys = list ? null : Object.keys(v), n = list ? v.length : keys.length;
    if (!n) { td.textContent = list ? "(none)" : "(empty)"; td.className = "muted"; return; }
    if (list && v.every(scalar)) { td.textContent = v.map(function (x) { return x === null ? "-" : String(x); }).join(", "); return; }
    td.textContent = n + (list ? " items" : " fields"); td.className = "muted";  // deeper than kv shows
  }
  function kv(table, k, v, depth) {  // a field; an object or a list of objects: a group of rows
    depth = depth || 0;
    var name = String(k).replace(/_/g, " "), tr = add(table, el("tr"));
    var group = v !== null && typeof v === "object" && depth < 3 &&
      (Array.isArray(v) ? v.length && !v.every(scalar) : Object.keys(v).length);
    if (!group) {
      add(tr, el("td", "k d" + depth, name));
      show(add(tr, el("td")), String(k), v, depth);
      return;
    }
    var head = add(tr, el("td", "k grp d" + depth, name));
    head.colSpan = 2;
    var keys = Array.isArray(v) ? null : Object.keys(v).sort(), n = keys ? keys.length : v.length;
    for (var i = 0; i < Math.min(n, SHOWN_ITEMS); i++) {
      if (keys) { kv(table, keys[i], v[keys[i]], depth + 1); } else { kv(table, "#" + (i + 1), v[i], depth + 1); }
    }
    if (n > SHOWN_ITEMS) { var more = add(add(table, el("tr")), el("td", "muted d" + (depth + 1), (n - SHOWN_ITEMS) + " more")); more.colSpan = 2; }
  }
  function nodeLink(i, prefix) {
    var b = el("button", "link", (prefix || "") + title(i) + " (" + shortId(N[i].id, N[i].t) + ")");
    b.type = "button";
    b.addEventListener("click", function () { selectNode(i); });
    return b;
  }
  function eventsBlock(list, heading) {
    add(detail, el("h3", "", heading + " (" + list.length + ")"));
    var box = add(detail, el("div")), shown = 0;
    function more() {
      list.slice(shown, shown + SHOWN_EVENTS).forEach(function (k) {
        var row = ROWS[k], div = add(box, el("div", "ev"));
        var head = add(div, el("div"));
        add(head, el("strong", "", row[3]));
        head.appendChild(document.createTextNode("  " + when(row[2]) + " UTC"));
        add(div, el("div", "muted", shortId(row[0], row[1]) + " · by " + row[4].replace(":", " ")));
        if (row[5]) { add(div, el("div", "line", row[5])); }
      });
      shown += SHOWN_EVENTS;
      if (shown < list.length) {
        var b = add(box, el("button", "more", "show more (" + (list.length - shown) + " left)"));
        b.type = "button";
        b.addEventListener("click", function () { b.remove(); more(); });
      }
    }
    more();
  }
  function runBlock(r) {
    var t = add(detail, el("table"));
    kv(t, "run", r.id); kv(t, "short id", shortId(r.id, r.t));
    kv(t, "person", r.person || "-"); kv(t, "agent", r.agent || "-");
    kv(t, "status", r.status); kv(t, "outcome", r.outcome || "-");
    kv(t, "started", when(r.start) + " UTC"); kv(t, "ended", when(r.end) + " UTC"); kv(t, "duration", dur(r.dur));
    if (r.error) { kv(t, "error", r.error); }
    var models = Object.keys(r.models);
    kv(t, "model", models.length ? models.map(function (m) { return m + (r.models[m] ? " ×" + r.models[m] : ""); }).join(", ") : "-");
    var tok = Object.keys(r.tokens);
    kv(t, "tokens", tok.length ? tok.map(function (k) { return k + " " + r.tokens[k]; }).join(", ") : "-");
    kv(t, "tool calls", r.n.tool_calls + (r.n.tool_failed ? " (" + r.n.tool_failed + " failed)" : ""));
    kv(t, "model calls", r.n.model_calls + (r.n.model_failed ? " (" + r.n.model_failed + " failed)" : ""));
    var tools = Object.keys(r.tools);
    if (tools.length) { kv(t, "tools", tools.map(function (k) { return k + " ×" + r.tools[k]; }).join(", ")); }
    kv(t, "events", r.n.events);
    if (r.goal >= 0) { add(add(detail, el("div")), nodeLink(r.goal, "serves goal: ")); }
    if (r.calls.length) {
      add(detail, el("h3", "", "Calls (first " + r.calls.length + " of " + (r.n.tool_calls + r.n.model_calls) + ")"));
      r.calls.forEach(function (c) {
        var div = add(detail, el("div", "ev"));
        add(div, el("div", "", when(c[5]) + "  " + c[0] + ": " + c[1] + " · " + c[2] + (c[3] !== null ? " · " + dur(c[3]) : "")));
        if (c[4]) { add(div, el("div", "line", c[4])); }
      });
    }
  }
  function showNode(i) {
    detail.textContent = "";
    var n = N[i];
    add(detail, el("h2", "", title(i)));
    var meta = add(detail, el("div", "muted"));
    add(meta, badge(n.k));
    meta.appendChild(document.createTextNode([n.s, n.stale ? "stale" : "", n.tomb ? "tombstoned" : "",
      n.missing ? "not in the graph (a relation names it)" : ""].filter(Boolean).join(" · ")));
    var t = add(detail, el("table"));
    kv(t, "id", n.id); kv(t, "short id", shortId(n.id, n.t));
    if (n.run !== undefined) { add(detail, el("h3", "", "Run")); runBlock(RUNS[n.run]); }
    var keys = Object.keys(n.p || {});
    if (keys.length) {
      add(detail, el("h3", "", "Fields"));
      var ft = add(detail, el("table"));
      keys.sort().forEach(function (k) { kv(ft, k, n.p[k]); });
    }
    if (n.a && n.a.length) {
      add(detail, el("h3", "", "Artifacts (" + n.a.length + ")"));
      n.a.forEach(function (a) { var at = add(detail, el("table", "sub")); Object.keys(a || {}).sort().forEach(function (k) { kv(at, k, a[k]); }); });
    }
    var a = adj[i];
    if (a.length) {
      add(detail, el("h3", "", "Relations (" + a.length + ")"));
      a.slice(0, SHOWN_RELS).forEach(function (k) {
        var r = RELS[k], div = add(detail, el("div", "ev")), out = r[0] === i;
        add(div, nodeLink(out ? r[2] : r[0], out ? "→ " + r[1] + " " : "← " + r[1] + " from "));
        if (r[3]) { var rt = add(div, el("table", "sub")); Object.keys(r[3]).sort().forEach(function (k) { kv(rt, k, r[3][k]); }); }
      });
      if (a.length > SHOWN_RELS) { add(detail, el("div", "muted", (a.length - SHOWN_RELS) + " more relations")); }
    }
    eventsBlock(n.e, "Events");
  }
  function showRun(j) {
    detail.textContent = "";
    var r = RUNS[j];
    add(detail, el("h2", "", r.task || r.id));
    var meta = add(detail, el("div", "muted"));
    add(meta, badge("run"));
    meta.appendChild(document.createTextNode((r.outcome || r.status) +
      (r.person ? " · by " + r.person : "")));
    runBlock(r);
    eventsBlock(r.e, "Events");
  }
  function markSelection() {
    linCards.forEach(function (card, i) {
      var near = false;
      if (selNode >= 0 && i !== selNode) { adj[i].forEach(function (k) { if (other(k, i) === selNode) { near = true; } }); }
      card.className = "card" + (i === selNode ? " sel" : "") + (near ? " near" : "");
    });
    linRunCards.forEach(function (card, j) { card.className = "card" + (j === selRun ? " sel" : ""); });
    drawLinks(); drawList(false); drawTimeline();
  }
  function selectNode(i, keepLineage) {
    selNode = i; selRun = N[i].run !== undefined ? N[i].run : -1;
    document.body.setAttribute("data-selected", N[i].id);
    showNode(i);
    if (!(keepLineage && linMembers && linMembers.has(i))) {
      var g = goalOf(i), root = g >= 0 && lineage(g).has(i) ? g : i;
      if (root !== linRoot || !linMembers) { showLineage(root); }
    }
    markSelection();
  }
  function selectRun(j) {
    var r = RUNS[j];
    if (r.node >= 0) { selectNode(r.node); return; }
    selRun = j; selNode = -1;
    document.body.setAttribute("data-selected", r.id);
    showRun(j);
    var g = r.goal >= 0 ? goalOf(r.goal) : -1;
    if (g >= 0 && g !== linRoot) { showLineage(g); }
    markSelection();
  }

  // --- start -------------------------------------------------------------------------
  var scope = D.scope || {};
  $("agent").textContent = D.agent + " · " + D.log + (scope.since ? " · since " + scope.since : "") +
    (scope.run ? " · run " + scope.run : "");
  var listed = N.filter(function (n) { return !n.missing; }).length;
  $("counts").textContent = D.count.text + " · " + RUNS.length + (RUNS.length === 1 ? " run" : " runs") + " · listed: " + listed +
    " nodes, " + ROWS.length + " events" + (scope.since || scope.run ? " (in scope)" :
    " (and, counted in their runs, " + D.raw_nodes + " tool and model call nodes, " + D.raw_events + " events)");
  var params = new URLSearchParams(window.location.hash.slice(1));
  if (params.get("q")) { qEl.value = params.get("q"); }
  if (params.get("kind")) { kindEl.value = params.get("kind"); }
  if (params.get("status")) { statusEl.value = params.get("status"); }
  applyFilters();
  var wanted = params.get("node"), wantedRun = params.get("run") || scope.run;
  if (wanted && byId.has(wanted)) { selectNode(byId.get(wanted)); }
  else if (wantedRun && runById.has(wantedRun)) { selectRun(runById.get(wantedRun)); }
  else {
    var start = -1;
    for (var j = RUNS.length - 1; j >= 0 && start < 0; j--) { if (RUNS[j].goal >= 0) { start = goalOf(RUNS[j].goal); } }
    for (var i = N.length - 1; i >= 0 && start < 0; i--) { if (N[i].k === "goal") { start = i; } }
    if (start >= 0) { selectNode(start); } else { showLineage(-1); drawTimeline(); }
  }
  markClipped();
  document.body.setAttribute("data-nodes", String(N.length));
  document.body.setAttribute("data-runs", String(RUNS.length));
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-rendered", "1");
})();

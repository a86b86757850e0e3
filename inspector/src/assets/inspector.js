// The inspector's page: plain JavaScript, no dependencies. Reads the JSON API, follows the
// live stream (Server-Sent Events), and draws machines and trees as SVG.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const LOG_LIMIT = 400;
const token = new URLSearchParams(location.search).get("token");

const state = {
  agents: [],          // from /api/agents
  selected: null,      // index of the agent on screen
  detail: null,        // /api/agents/{n} of the selected agent
  lastState: {},       // agent index -> the machine state last seen
  paused: false,
  held: [],            // events received while paused
  allowSignals: false,
};

function api(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

async function getJson(path) {
  const response = await fetch(api(path));
  if (!response.ok) throw new Error(path + ": " + response.status);
  return response.json();
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(value) {
  if (value === undefined || value === null) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 160 ? text.slice(0, 160) + "…" : text;
}

// ---- agents ------------------------------------------------------------------------------

async function loadAgents() {
  const answer = await getJson("/api/agents");
  state.agents = answer.agents;
  state.allowSignals = answer.allow_signals;
  renderAgents();
  if (state.selected === null && state.agents.length > 0) select(0);
}

function renderAgents() {
  const list = document.getElementById("agents");
  list.replaceChildren(...state.agents.map((agent) =>
    el("li", {
      class: "agent" + (agent.index === state.selected ? " selected" : ""),
      "data-index": agent.index,
      onclick: () => select(agent.index),
    },
    el("span", { class: "status status-" + agent.status }, agent.status),
    el("span", { class: "name" }, agent.name),
    el("span", { class: "kind" }, agent.kind + " · " + agent.id))));
}

async function select(index) {
  state.selected = index;
  renderAgents();
  const detail = await getJson("/api/agents/" + index);
  state.detail = detail;
  document.getElementById("title").replaceChildren(
    el("strong", {}, detail.name), " ", el("span", { class: "kind" }, detail.id));
  document.getElementById("snapshot").textContent = JSON.stringify(detail.snapshot, null, 2);
  document.getElementById("send").hidden = !state.allowSignals;
  if (detail.progress && detail.progress.kind === "machine" && state.lastState[index] === undefined) {
    state.lastState[index] = detail.progress.state;
  }
  renderView(detail.shape, detail.progress, null);
  const history = await getJson("/api/agents/" + index + "/events");
  document.getElementById("log").replaceChildren();
  for (const event of history.events) logEvent(event);
}

// ---- views -------------------------------------------------------------------------------

function renderView(shape, progress, fired) {
  const view = document.getElementById("view");
  view.dataset.kind = shape.kind;
  if (shape.kind === "machine") drawMachine(view, shape, progress, fired);
  else if (shape.kind === "tree") drawTree(view, shape, progress);
  else if (shape.kind === "conversation") drawConversation(view, shape, progress);
  else view.replaceChildren(el("p", { class: "hint" }, "This strategy describes no diagram; see its snapshot below."));
}

// Columns by distance from the initial state; unreachable states in a last column.
function layoutMachine(shape) {
  const column = {};
  column[shape.initial] = 0;
  const queue = [shape.initial];
  while (queue.length > 0) {
    const from = queue.shift();
    for (const t of shape.transitions) {
      if (t.from === from && column[t.to] === undefined) {
        column[t.to] = column[from] + 1;
        queue.push(t.to);
      }
    }
  }
  const deepest = Math.max(0, ...Object.values(column));
  const rows = {};
  const place = {};
  for (const s of shape.states) {
    const c = column[s.name] !== undefined ? column[s.name] : deepest + 1;
    const r = rows[c] || 0;
    rows[c] = r + 1;
    place[s.name] = { x: 30 + c * 200, y: 70 + r * 110, end: s.end };
  }
  return place;
}

// Where the line from a state box's centre towards (tx, ty) leaves the box (120 × 36).
function boxEdge(cx, cy, tx, ty) {
  const dx = tx - cx, dy = ty - cy;
  const t = Math.min(dx ? 60 / Math.abs(dx) : Infinity, dy ? 18 / Math.abs(dy) : Infinity);
  return [cx + dx * t, cy + dy * t];
}

function drawMachine(view, shape, progress, fired) {
  const place = layoutMachine(shape);
  const width = Math.max(...Object.values(place).map((p) => p.x)) + 170;
  const height = Math.max(...Object.values(place).map((p) => p.y)) + 80;
  const root = svg("svg", { class: "machine", viewBox: `0 0 ${width} ${height}`, width, height });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z" }));
  defs.append(marker);
  root.append(defs);
  const current = progress && progress.state;
  const last = state.lastEdge && state.lastEdge.agent === state.selected ? state.lastEdge : null;
  const pairs = {};
  shape.transitions.forEach((t, i) => {
    const a = place[t.from], b = place[t.to];
    if (!a || !b) return;
    const key = t.from + "→" + t.to;
    const nth = (pairs[key] = (pairs[key] || 0) + 1) - 1;
    let d, lx, ly;
    if (t.from === t.to) {
      d = `M${a.x + 40},${a.y} C${a.x + 20},${a.y - 50 - nth * 15} ${a.x + 100},${a.y - 50 - nth * 15} ${a.x + 80},${a.y}`;
      lx = a.x + 60; ly = a.y - 42 - nth * 15;
    } else {
      const ax = a.x + 60, ay = a.y + 18, bx = b.x + 60, by = b.y + 18;
      const mx = (ax + bx) / 2, my = (ay + by) / 2;
      // Edges between neighbours bend little, longer ones more; each extra edge between the
      // same two states bends further out.
      const bend = (Math.abs(bx - ax) > 220 || Math.abs(by - ay) > 100 ? 70 : 40) + nth * 24;
      const nx = -(by - ay), ny = bx - ax;
      const len = Math.hypot(nx, ny) || 1;
      const cx = mx + (nx / len) * bend, cy = my + (ny / len) * bend;
      const [sx, sy] = boxEdge(ax, ay, cx, cy);
      const [ex, ey] = boxEdge(bx, by, cx, cy);
      d = `M${sx},${sy} Q${cx},${cy} ${ex},${ey}`;
      lx = (sx + 2 * cx + ex) / 4; ly = (sy + 2 * cy + ey) / 4 + (ny >= 0 ? 12 : -4);
    }
    let cls = "edge";
    if (last && last.index === i) cls += " last";
    if (fired && fired.index === i) cls += " fired";
    const group = svg("g", { class: cls, "data-from": t.from, "data-to": t.to });
    group.append(svg("path", { d, "marker-end": "url(#arrow)" }));
    group.append(svg("text", { x: lx, y: ly, "text-anchor": "middle" }, t.label));
    root.append(group);
  });
  const start = place[shape.initial];
  if (start) root.append(svg("circle", { class: "start", cx: start.x - 14, cy: start.y + 18, r: 6 }));
  for (const s of shape.states) {
    const p = place[s.name];
    let cls = "state";
    if (s.end) cls += " end-" + s.end;
    if (s.name === current) cls += " current";
    const group = svg("g", { class: cls, "data-state": s.name });
    group.append(svg("rect", { x: p.x, y: p.y, width: 120, height: 36, rx: 10 }));
    if (s.end) group.append(svg("rect", { class: "inner", x: p.x + 3, y: p.y + 3, width: 114, height: 30, rx: 8 }));
    group.append(svg("text", { x: p.x + 60, y: p.y + 23, "text-anchor": "middle" }, s.name));
    root.append(group);
  }
  view.replaceChildren(root);
}

// A node's colour: running now, else what it returned the last time it was ticked (dimmed
// when that was before the last tick; a node halted while running is idle again).
function nodeStatus(i, running, last, ticks) {
  if (running.has(i)) return { status: "running", stale: false };
  const seen = last[i];
  if (!seen || seen.status === "running") return { status: "idle", stale: false };
  return { status: seen.status, stale: seen.tick < ticks, tick: seen.tick };
}

function drawTree(view, shape, progress) {
  const running = new Set((progress && progress.running) || []);
  const last = (progress && progress.last) || [];
  const ticks = progress ? progress.ticks : 0;
  const rowHeight = 30;
  const width = Math.max(...shape.nodes.map((n) => n.depth * 26 + n.label.length * 7.5 + 60), 300);
  const root = svg("svg", { class: "tree", width, height: shape.nodes.length * rowHeight + 20 });
  const parents = [];
  shape.nodes.forEach((node, i) => {
    const x = 10 + node.depth * 26, y = 10 + i * rowHeight;
    parents[node.depth] = { x, y };
    if (node.depth > 0) {
      const parent = parents[node.depth - 1];
      root.append(svg("path", { class: "link", d: `M${parent.x + 8},${parent.y + 22} V${y + 11} H${x}` }));
    }
    const shown = nodeStatus(i, running, last, ticks);
    const group = svg("g", { class: "node " + shown.status + (shown.stale ? " stale" : ""), "data-node": i, "data-status": shown.status });
    const title = shown.tick ? `${shown.status} on tick ${shown.tick}` : shown.status;
    group.append(svg("title", {}, title));
    group.append(svg("rect", { x, y, width: node.label.length * 7.5 + 20, height: 22, rx: 5 }));
    group.append(svg("text", { x: x + 10, y: y + 15 }, node.label));
    root.append(group);
  });
  view.replaceChildren(el("p", { class: "hint" }, `tick ${ticks} · running in amber, success in green, failure in red: what each node returned the last time it was ticked (faded: on an earlier tick)`), root);
}

function drawConversation(view, shape, progress) {
  const items = [];
  const messages = (progress && progress.messages) || [];
  if (progress && progress.omitted_messages) items.push(el("li", { class: "hint" }, `… ${progress.omitted_messages} earlier messages`));
  for (const m of messages) {
    let role = m.role;
    if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) role = "act";
    else if (m.role === "assistant") role = "reason";
    else if (m.role === "tool") role = "observe";
    const body = el("div", { class: "content" }, m.content || "");
    for (const call of m.tool_calls || []) {
      body.append(el("div", { class: "tool-call" }, "→ " + call.name + "(" + short(call.arguments) + ")"));
    }
    items.push(el("li", { class: "message " + role }, el("span", { class: "role" }, role), body));
  }
  const step = progress ? progress.step : 0;
  view.replaceChildren(
    el("p", { class: "hint" }, `${shape.strategy} on model \`${shape.model}\` · step ${step}`),
    el("ol", { class: "conversation" }, ...items));
}

// ---- the live stream ---------------------------------------------------------------------

function onEvent(event) {
  const agent = state.agents[event.agent];
  if (agent) {
    if (event.event === "step") agent.status = event.status;
    if (event.event === "stopped") { agent.status = "stopped"; agent.stopped = true; }
  }
  let fired = null;
  if (event.event === "step" && event.progress) fired = track(event.agent, event.progress);
  if (event.agent === state.selected && event.event === "step" && state.detail) {
    state.detail.progress = event.progress;
    renderView(state.detail.shape, event.progress, fired);
  }
  logEvent(event);
}

// Remembers each machine's state, to animate its transitions.
function track(index, progress) {
  if (progress.kind === "machine") {
    const before = state.lastState[index];
    state.lastState[index] = progress.state;
    const detail = state.detail;
    if (before !== undefined && before !== progress.state && detail && detail.index === index) {
      const i = detail.shape.transitions.findIndex((t) => t.from === before && t.to === progress.state);
      if (i >= 0) {
        state.lastEdge = { agent: index, index: i };
        return { index: i };
      }
    }
  }
  return null;
}

function logEvent(event) {
  if (event.event !== "step") {
    addLog(event, "meta", event.event, event.event === "lagged" ? `missed ${event.missed}` : event.reason || "");
    return;
  }
  if (event.skipped) addLog(event, "meta", "coalesced", `${event.skipped} steps not shown (the inspector's pace)`);
  const cause = event.cause || {};
  if (cause.kind === "signal") addLog(event, "in", cause.signal.type, short(cause.signal.data), cause.origin);
  else if (cause.kind === "tick") addLog(event, "tick", "tick", event.status);
  else addLog(event, "meta", cause.kind, cause.action || event.status);
  for (const out of event.emitted || []) addLog(event, "out", out.type, short(out.data));
  for (const error of event.errors || []) addLog(event, "error", "error", error);
}

function addLog(event, direction, type, text, origin) {
  const log = document.getElementById("log");
  const agent = state.agents[event.agent];
  const item = el("li", {
    class: "entry " + direction,
    "data-agent": event.agent,
    "data-direction": direction,
    "data-type": type,
  },
  el("span", { class: "direction" }, direction === "in" ? "→" : direction === "out" ? "←" : "·"),
  el("span", { class: "type" }, type),
  el("span", { class: "who" }, agent ? agent.name + (origin && origin !== "signal" ? " (" + origin + ")" : "") : ""),
  el("span", { class: "data" }, text || ""));
  item.hidden = !visible(item);
  log.prepend(item);
  while (log.children.length > LOG_LIMIT) log.lastElementChild.remove();
}

function visible(item) {
  const text = document.getElementById("filter-text").value.trim();
  const direction = item.dataset.direction;
  if (!document.getElementById("filter-all").checked && +item.dataset.agent !== state.selected) return false;
  if (direction === "in" && !document.getElementById("filter-in").checked) return false;
  if (direction === "out" && !document.getElementById("filter-out").checked) return false;
  if (direction === "tick" && !document.getElementById("filter-ticks").checked) return false;
  return !text || item.dataset.type.includes(text);
}

function refilter() {
  for (const item of document.getElementById("log").children) item.hidden = !visible(item);
}

function connect() {
  const status = document.getElementById("connection");
  const source = new EventSource(api("/api/stream"));
  source.onopen = () => { status.dataset.state = "live"; status.textContent = "live"; };
  source.onerror = () => { status.dataset.state = "lost"; status.textContent = "reconnecting…"; };
  const handle = (message) => {
    const event = JSON.parse(message.data);
    if (state.paused) { state.held.push(event); status.textContent = `paused (${state.held.length} held)`; return; }
    onEvent(event);
    throttledAgents();
  };
  source.addEventListener("step", handle);
  source.addEventListener("lagged", (message) => {
    addLog({ agent: state.selected }, "meta", "lagged", `the page fell behind: ${JSON.parse(message.data).missed} steps not shown`);
  });
}

let agentsTimer = null;
function throttledAgents() {
  if (agentsTimer) return;
  agentsTimer = setTimeout(() => { agentsTimer = null; renderAgents(); }, 250);
}

// ---- controls ----------------------------------------------------------------------------

document.getElementById("pause").addEventListener("change", (e) => {
  state.paused = e.target.checked;
  const status = document.getElementById("connection");
  if (!state.paused) {
    for (const event of state.held.splice(0)) onEvent(event);
    renderAgents();
    status.textContent = "live";
  }
});
document.addEventListener("keydown", (e) => {
  // While paused, `n` applies the next held step.
  if (state.paused && e.key === "n" && state.held.length > 0) {
    onEvent(state.held.shift());
    document.getElementById("connection").textContent = `paused (${state.held.length} held)`;
  }
});
for (const id of ["filter-text", "filter-in", "filter-out", "filter-ticks", "filter-all"]) {
  document.getElementById(id).addEventListener("input", refilter);
}
document.getElementById("send").addEventListener("submit", async (e) => {
  e.preventDefault();
  const result = document.getElementById("send-result");
  let data = null;
  const raw = document.getElementById("send-data").value.trim();
  try { data = raw ? JSON.parse(raw) : null; } catch (error) { result.textContent = "data is not JSON: " + error.message; return; }
  const response = await fetch(api("/api/agents/" + state.selected + "/signals"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: document.getElementById("send-type").value, data }),
  });
  const answer = await response.json();
  result.textContent = response.ok ? "sent: " + answer.snapshot.status : answer.error;
});

loadAgents().then(connect).catch((error) => {
  document.getElementById("connection").textContent = "failed: " + error.message;
});

// agentfootprint why explorer: plain modern JavaScript, no build step, no third-party code.
// Every value from the API reaches the page through textContent (never innerHTML).
"use strict";

const ROOT = document.body.dataset.root || "";
const main = document.getElementById("main");
const state = { query: { q: "", agent: "", since: "", until: "", paused: "any", failed: "any", offset: 0, limit: 50 }, picked: [], source: null, listing: 0 };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = String(v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k in node && typeof v !== "string") node[k] = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(path, options) {
  const res = await fetch(ROOT + path, options);
  const body = await res.json();
  if (!res.ok) {
    const err = new Error((body.error && body.error.message) || res.statusText);
    err.code = body.error && body.error.code;
    throw err;
  }
  return body;
}

function showError(where, err) {
  where.append(el("div", { class: "error", role: "alert", text: `${err.code ? err.code + ": " : ""}${err.message}` }));
}

function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function badge(kind) {
  return el("span", { class: `badge ${kind}`, text: kind });
}

function setNav(which) {
  for (const id of ["nav-runs", "nav-compare"]) document.getElementById(id).classList.toggle("active", id === which);
}

// ---------------------------------------------------------------------------------------------------------- runs
function queryString(q) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== "" && v !== "any" && v !== null) p.set(k, String(v));
  return p.toString();
}

async function showRuns() {
  setNav("nav-runs");
  main.replaceChildren();
  const q = state.query;
  const search = el("input", { type: "search", id: "q", placeholder: "Search run id, question, answer", value: q.q, "aria-label": "Search runs" });
  const agent = el("select", { id: "agent", "aria-label": "Agent" }, el("option", { value: "", text: "any agent" }));
  const since = el("input", { type: "date", id: "since", value: q.since, "aria-label": "From date" });
  const until = el("input", { type: "date", id: "until", value: q.until, "aria-label": "To date" });
  const tri = (id, label) => {
    const s = el("select", { id, "aria-label": label }, ...["any", "true", "false"].map((v) => el("option", { value: v, text: v === "any" ? "any" : v === "true" ? "yes" : "no" })));
    s.value = q[id];
    return s;
  };
  const paused = tri("paused", "Has a pause");
  const failed = tri("failed", "Has an error");
  const apply = () => {
    Object.assign(state.query, { q: search.value.trim(), agent: agent.value, since: since.value, until: until.value, paused: paused.value, failed: failed.value, offset: 0 });
    loadRuns();
  };
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 200); });
  search.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(timer); apply(); } });
  for (const c of [agent, since, until, paused, failed]) c.addEventListener("change", apply);
  const compareBtn = el("button", { id: "compare-picked", class: "secondary", disabled: state.picked.length !== 2, onclick: comparePicked, text: "Compare picked (0/2)" });
  const filters = el("section", { class: "filters", role: "search" },
    el("label", {}, "Search", search), el("label", {}, "Agent", agent), el("label", {}, "From", since), el("label", {}, "To", until),
    el("label", {}, "Has pause", paused), el("label", {}, "Has error", failed), compareBtn);
  const table = el("table", { id: "runs" }, el("thead", {}, el("tr", {}, ...["", "run", "agent", "when", "question", "answer", "status"].map((h) => el("th", { text: h })))), el("tbody"));
  const count = el("span", { id: "count", class: "muted" });
  const prev = el("button", { id: "prev", class: "secondary", text: "← Newer", onclick: () => { state.query.offset = Math.max(0, state.query.offset - state.query.limit); loadRuns(); } });
  const next = el("button", { id: "next", class: "secondary", text: "Older →", onclick: () => { state.query.offset += state.query.limit; loadRuns(); } });
  main.append(el("h1", { text: "Runs" }), filters, el("section", {}, table, el("div", { class: "pager" }, prev, next, count)));
  updatePicked();
  await loadRuns(agent);
}

function updatePicked() {
  const btn = document.getElementById("compare-picked");
  if (btn) { btn.textContent = `Compare picked (${state.picked.length}/2)`; btn.disabled = state.picked.length !== 2; }
}

function comparePicked() {
  if (state.picked.length === 2) location.hash = `#/compare/${encodeURIComponent(state.picked[0])}/${encodeURIComponent(state.picked[1])}`;
}

function togglePick(runId, row) {
  const i = state.picked.indexOf(runId);
  if (i >= 0) state.picked.splice(i, 1);
  else { state.picked.push(runId); if (state.picked.length > 2) state.picked.shift(); }
  for (const r of document.querySelectorAll("tr.run")) {
    const on = state.picked.includes(r.dataset.runId);
    r.classList.toggle("picked", on);
    const box = r.querySelector("input[type=checkbox]");
    if (box) box.checked = on;
  }
  updatePicked();
  if (row) row.focus();
}

async function loadRuns(agentSelect) {
  const tbody = document.querySelector("#runs tbody");
  const count = document.getElementById("count");
  if (!tbody) return;
  const ticket = ++state.listing;  // only the latest request may paint the list (answers can arrive out of order)
  let page;
  try {
    page = await api(`/api/runs?${queryString(state.query)}`);
  } catch (err) {
    if (ticket !== state.listing) return;
    tbody.replaceChildren();
    showError(count, err);
    return;
  }
  if (ticket !== state.listing || !tbody.isConnected) return;
  const select = agentSelect || document.getElementById("agent");
  if (select && select.options.length === 1) {
    for (const a of page.agents) select.append(el("option", { value: a, text: a }));
    select.value = state.query.agent;
  }
  tbody.replaceChildren(...page.runs.map((r) => {
    const open = () => { location.hash = `#/run/${encodeURIComponent(r.run_id)}`; };
    const box = el("input", { type: "checkbox", "aria-label": `Pick run ${r.run_id} to compare`, checked: state.picked.includes(r.run_id), tabindex: "-1" });
    box.addEventListener("click", (e) => { e.stopPropagation(); togglePick(r.run_id); });
    const status = r.failed ? "failed" : r.paused ? "paused" : "completed";
    const row = el("tr", { class: `run${state.picked.includes(r.run_id) ? " picked" : ""}`, tabindex: "0", "data-run-id": r.run_id, onclick: open },
      el("td", {}, box), el("td", { class: "mono", text: r.run_id.slice(0, 12) }), el("td", { text: r.agent }), el("td", { class: "mono", text: when(r.created_at) }),
      el("td", { class: "clip", text: r.question, title: r.question }), el("td", { class: "clip", text: r.answer, title: r.answer }), el("td", {}, badge(status)));
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") open();
      else if (e.key === "x" || e.key === " ") { e.preventDefault(); togglePick(r.run_id, row); }
    });
    return row;
  }));
  const last = page.offset + page.runs.length;
  count.textContent = page.total ? `${page.offset + 1}–${last} of ${page.total} runs` : "No runs match.";
  document.getElementById("prev").disabled = page.offset === 0;
  document.getElementById("next").disabled = page.next_offset === null;
}

// ----------------------------------------------------------------------------------------------------------- run
function hopsLine(s) {
  return s.hops.map((h) => h.kind.toUpperCase()).join(" ← ");
}

// Long lists (steps, calls, sources) show a first screenful at once; the rest is built in idle time once ``after``
// settles (the sources' trace first), one DocumentFragment per chunk, or sooner when the list's end scrolls near or
// the keyboard moves past it.
const FIRST_ITEMS = 40;
const CHUNK_ITEMS = 200;

function lazyList(container, items, make, after = Promise.resolve()) {
  let done = 0;
  const list = { container, total: items.length, get done() { return done; } };
  const watch = "IntersectionObserver" in window
    ? new IntersectionObserver((seen) => { if (seen.some((e) => e.isIntersecting)) list.more(CHUNK_ITEMS); }, { rootMargin: "400px" })
    : null;
  list.more = (n) => {
    const end = Math.min(items.length, done + n);
    if (end > done) {
      const frag = document.createDocumentFragment();
      for (; done < end; done++) frag.append(make(items[done], done));
      container.append(frag);
      if (watch) watch.disconnect();
      if (watch && done < items.length) watch.observe(container.lastElementChild);  // its end near: draw more
    }
    if (done >= items.length) container.dataset.complete = "true";
  };
  list.all = () => list.more(items.length - done);
  const idle = (deadline) => {
    if (done >= items.length || !container.isConnected) return;
    do list.more(CHUNK_ITEMS); while (done < items.length && deadline.timeRemaining() > 4);
    if (done < items.length) requestIdleCallback(idle, { timeout: 500 });
  };
  list.more(FIRST_ITEMS);
  if (done < items.length && typeof window.requestIdleCallback === "function") after.then(() => requestIdleCallback(idle, { timeout: 500 }));
  return list;
}

async function showRun(runId) {
  setNav("nav-runs");
  main.replaceChildren(el("p", { class: "muted", text: "Loading run…" }));
  const id = encodeURIComponent(runId);
  let run;
  try {
    run = await api(`/api/runs/${id}?sources=false&narrative=false`);
  } catch (err) {
    main.replaceChildren();
    showError(main, err);
    return;
  }
  const traced = api(`/api/runs/${id}/backtrack`).then((bt) => [bt, null], (err) => [null, err.message]);  // traced while the page is drawn
  main.replaceChildren();
  const head = el("section", { id: "run-head" },
    el("h1", {}, `Run `, el("span", { class: "mono", text: run.run_id }), " ", badge(run.status)),
    el("p", { class: "muted", text: `agent ${run.agent} · model ${run.model || "—"}${run.usage ? ` · ${run.usage.input_tokens || 0} in / ${run.usage.output_tokens || 0} out tokens` : ""}${run.cost != null ? ` · cost ${run.cost}` : ""}` }),
    el("h2", { text: "Question" }), el("div", { class: "question", id: "question", text: run.question ?? "(no question recorded)" }),
    el("h2", { text: "Answer" }), el("div", { class: "answer", id: "answer", text: run.answer ?? "(no answer)" }));
  const sources = el("section", { id: "sources-loading" }, el("h2", { text: "Sources that reached the answer" }), el("p", { class: "muted", text: "Tracing every source back to where it was born…" }));
  const hits = new Set();
  main.append(head, sources, proveSection(run), el("div", { class: "grid" }, stagesSection(run, hits, traced), timelineSection(run, traced)), narrativeSection(run));
  main.focus();
  const [bt, why] = await traced;
  if (sources.isConnected) sources.replaceWith(sourcesSection(run, bt ? bt.sources : [], why, hits));
}

function sourcesSection(run, trails, why, hits) {
  const sec = el("section", { id: "sources" }, el("h2", { text: `Sources that reached the answer (${trails.length}) — ANSWER ← READ ← LANDED ← ALLOWED ← BORN` }));
  if (!trails.length) sec.append(el("p", { class: "muted", text: why || "No source reached a model call." }));
  const box = el("div", { class: "source-list" });
  sec.append(box);
  lazyList(box, trails, (s) => {
    const item = el("div", { class: "source", "data-source-id": s.id });
    const toggle = el("button", { "aria-expanded": "false", class: "source-toggle" }, el("b", { text: `[${s.kind}] ` }), el("span", { class: "mono", text: s.id }), " — ", (s.text || "").slice(0, 140));
    item.append(toggle, el("div", { class: "chainline", text: hopsLine(s) }));
    toggle.addEventListener("click", () => openSource(run, s, item, toggle, hits));
    return item;
  });
  return sec;
}

async function openSource(run, s, box, toggle, hits) {
  const open = box.classList.toggle("open");
  toggle.setAttribute("aria-expanded", String(open));
  for (const d of box.querySelectorAll(".hops, .detail")) d.remove();
  hits.clear();
  for (const li of document.querySelectorAll("ol.steps li.hit")) li.classList.remove("hit");
  if (!open) return;
  const hops = el("ol", { class: "hops" }, ...s.hops.map((h) => el("li", {}, el("span", { class: "hop", text: h.kind.toUpperCase() }), el("span", { class: "mono", text: h.runtime_stage_id || "(definition)" }), " ", h.detail, h.note ? ` (${h.note})` : "")));
  box.append(hops);
  const detail = el("div", { class: "detail", text: "Loading where it was born and what it fed…" });
  box.append(detail);
  try {
    const info = await api(`/api/runs/${encodeURIComponent(run.run_id)}/sources/${encodeURIComponent(s.id)}`);
    const born = info.born ? `${info.born.detail}${info.born.runtime_stage_id ? ` at ${info.born.runtime_stage_id}` : " (declared before the run)"}` : "not recorded";
    detail.replaceChildren(el("div", { class: "born" }, el("b", { text: "Born: " }), born),
      el("div", { class: "slice" }, el("b", { text: `Forward slice (${info.forward_slice.length} stages that read it or what it fed): ` }), el("span", { class: "mono", text: info.forward_slice.join(" → ") || "none" })));
    for (const id of info.forward_slice) hits.add(id);  // steps not drawn yet are marked when they are
    for (const li of document.querySelectorAll("ol.steps li[data-stage]")) if (hits.has(li.dataset.stage)) li.classList.add("hit");
  } catch (err) {
    detail.replaceChildren();
    showError(detail, err);
  }
}

function stagesSection(run, hits, after) {
  const nodes = run.flow.nodes;
  const flow = el("div", { class: "flow", id: "flowchart", role: "img", "aria-label": "Stages taken" });
  nodes.forEach((n, i) => {
    if (i) flow.append(el("span", { class: "arrow", text: "→" }));
    flow.append(el("span", { class: `node${n.failed ? " failed" : ""}`, title: n.description ? `${n.id}: ${n.description}` : n.id }, n.name, el("span", { class: "n", text: `×${n.visits}` })));
  });
  const steps = el("ol", { class: "steps", id: "steps", tabindex: "0", "aria-label": "Steps taken: ↑↓ or j k move, Home End jump" });
  steps.lazy = lazyList(steps, run.steps, (s) => el("li", { class: `${s.failed ? "failed" : ""}${hits.has(s.id) ? " hit" : ""}`.trim() || null, "data-stage": s.id, tabindex: "-1" },
    el("span", { class: "mono", text: s.id }), ` ${s.name}`, s.chosen ? ` → ${s.chosen.join(", ")}` : "", s.paused ? " (paused)" : "", s.error ? ` (error: ${s.error})` : ""), after);
  return el("section", { id: "stages" }, el("h2", { text: `Stages taken (${run.steps.length})` }), flow, steps);
}

function moveInSteps(steps, key) {
  const lazy = steps.lazy;
  const items = steps.children;
  const at = document.activeElement && document.activeElement.parentElement === steps ? [...items].indexOf(document.activeElement) : -1;
  let to;
  if (key === "Home") to = 0;
  else if (key === "End") { lazy.all(); to = items.length - 1; }
  else if (key === "PageDown" || key === "PageUp") to = at + (key === "PageDown" ? 10 : -10);
  else to = at + (key === "ArrowDown" || key === "j" ? 1 : -1);
  if (to >= items.length - 1 && lazy.done < lazy.total) lazy.more(CHUNK_ITEMS);
  to = Math.min(items.length - 1, Math.max(0, to));
  if (items[to]) items[to].focus();
}

function timelineSection(run, after) {
  const row = (t) => t.kind === "model"
    ? el("tr", { class: "model" }, el("td", { text: "model" }), el("td", { class: "mono", text: t.at }), el("td", { text: t.model || "" }),
      el("td", { text: `${t.input_tokens ?? "—"} / ${t.output_tokens ?? "—"}` }), el("td", { text: t.latency_ms != null ? `${t.latency_ms.toFixed(1)} ms` : "—" }),
      el("td", { text: t.cost != null ? String(t.cost) : "—" }), el("td", { text: t.tool_calls.length ? `asks ${t.tool_calls.join(", ")}` : t.finish_reason || "" }))
    : el("tr", { class: `tool${t.failed ? " failed" : ""}` }, el("td", { text: "tool" }), el("td", { class: "mono", text: t.at }), el("td", { text: t.name || "" }),
      el("td", { text: "" }), el("td", { text: t.latency_ms != null ? `${t.latency_ms.toFixed(2)} ms` : "—" }), el("td", { text: "—" }), el("td", { text: t.failed ? `error ${t.error_code || ""}` : "ok" }));
  const body = el("tbody");
  lazyList(body, run.timeline, row, after);
  return el("section", { id: "timeline" }, el("h2", { text: `Model and tool calls (${run.timeline.length})` }),
    el("div", { class: "calls", tabindex: "0", role: "region", "aria-label": "Model and tool calls" },
      el("table", {}, el("thead", {}, el("tr", {}, ...["", "step", "model / tool", "tokens in / out", "latency", "cost", "result"].map((h) => el("th", { text: h })))), body)));
}

function narrativeSection(run) {
  const box = el("div", { class: "narrative", text: "Loading…" });
  const details = el("details", {}, el("summary", { text: "Narrative" }), box);
  let loaded = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      const n = await api(`/api/runs/${encodeURIComponent(run.run_id)}/narrative`);
      box.textContent = n.narrative.map((e) => "  ".repeat(e.depth) + e.text).join("\n") + (n.narrative_truncated ? "\n…" : "");
      details.querySelector("summary").textContent = `Narrative (${n.narrative.length} lines)`;
    } catch (err) {
      box.replaceChildren();
      showError(box, err);
    }
  });
  return el("section", { id: "narrative" }, details);
}

// --------------------------------------------------------------------------------------------------------- prove
function proveSection(run) {
  const sec = el("section", { id: "prove" }, el("h2", { text: "Prove: which sources caused this answer?" }));
  if (!run.can_prove) {
    sec.append(el("p", { class: "notice", id: "no-agent", text: "No agent factory was given, so this explorer cannot rerun: a recording alone cannot prove a culprit. Start it with `agentfootprint ui PATH --agent module:factory` (a no-argument function that builds the same agent) to prove culprits from here." }));
    return sec;
  }
  const mode = el("select", { id: "mode", "aria-label": "Search mode" }, ...["auto", "single", "group"].map((m) => el("option", { value: m, text: m })));
  const samples = el("input", { type: "number", id: "samples", min: "1", max: "50", value: "3", "aria-label": "Samples" });
  const confidence = el("input", { type: "number", id: "confidence", min: "0.5", max: "0.999", step: "0.01", value: "0.95", "aria-label": "Confidence" });
  const budget = el("input", { type: "number", id: "budget", min: "1", placeholder: "no cap", "aria-label": "Rerun budget" });
  const keyword = el("input", { type: "text", id: "keyword", placeholder: "e.g. APPROVED (default: answer differs)", "aria-label": "Outcome keyword" });
  const start = el("button", { id: "start-prove", text: "Start localization" });
  const cancel = el("button", { id: "cancel-prove", class: "secondary", text: "Cancel", disabled: true });
  const out = el("div", { id: "prove-out" });
  sec.append(el("div", { class: "filters" }, el("label", {}, "Mode", mode), el("label", {}, "Samples", samples), el("label", {}, "Confidence", confidence),
    el("label", {}, "Budget (reruns)", budget), el("label", {}, "Outcome changed when this text comes or goes", keyword), start, cancel), out);
  let source = null;
  let jobId = null;
  start.addEventListener("click", async () => {
    out.replaceChildren(el("p", { class: "muted", text: "Starting…" }));
    const body = { run_id: run.run_id, mode: mode.value, samples: Number(samples.value), confidence: Number(confidence.value) };
    if (budget.value) body.budget = Number(budget.value);
    if (keyword.value) body.keyword = keyword.value;
    let job;
    try {
      job = await api("/api/localize", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    } catch (err) {
      out.replaceChildren();
      showError(out, err);
      return;
    }
    jobId = job.job_id;
    start.disabled = true;
    cancel.disabled = false;
    renderProgress(out, job);
    source = new EventSource(`${ROOT}/api/localize/${jobId}/events`);
    source.addEventListener("progress", (e) => renderProgress(out, JSON.parse(e.data)));
    source.addEventListener("end", () => { source.close(); start.disabled = false; cancel.disabled = true; });
    source.onerror = () => { source.close(); start.disabled = false; cancel.disabled = true; };
  });
  cancel.addEventListener("click", async () => {
    if (!jobId) return;
    try {
      renderProgress(out, await api(`/api/localize/${jobId}/cancel`, { method: "POST" }));
    } catch (err) {
      showError(out, err);
    }
  });
  return sec;
}

function renderProgress(out, job) {
  const parts = [el("div", { class: "progress", id: "prove-state" },
    el("b", { text: job.state }), el("span", { id: "reruns", text: `${job.reruns} reruns done` }), el("span", { text: `${job.arms.length} arms sampled` }))];
  if (job.best.length) {
    parts.push(el("div", { id: "best" }, el("b", { text: "Flipping most so far: " }),
      ...job.best.map((b) => el("span", { class: "badge", text: `{${b.ids.join(", ")}} ${b.flips}/${b.samples}` }))));
  }
  if (job.error) parts.push(el("div", { class: "error", text: job.error }));
  const rep = job.report;
  if (rep) {
    const fmt = (p) => (p == null ? "—" : p < 0.001 ? p.toExponential(2) : p.toFixed(4));
    parts.push(el("p", { class: "muted", text: `${rep.mode} · search ${rep.search} · baseline ${rep.baseline_flips}/${rep.baseline_samples || rep.samples} flipped · ${rep.reruns} reruns · test ${rep.test || "majority"}` }));
    parts.push(el("table", { id: "verdicts" }, el("thead", {}, el("tr", {}, ...["source", "verdict", "flips", "p-value", "claim"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rep.suspects.map((s) => el("tr", { "data-source": s.id }, el("td", { class: "mono", text: `${s.kind} ${s.id}` }), el("td", { class: s.verdict || "", text: s.verdict || "—" }),
        el("td", { text: `${s.flips}/${s.samples}` }), el("td", { text: fmt(s.p_value) }), el("td", { text: s.claim }))))));
    parts.push(el("h2", { text: "Culprit sets" }));
    if (!rep.culprit_sets.length) parts.push(el("p", { class: "muted", text: "No culprit set was confirmed." }));
    else parts.push(el("table", { id: "culprits" }, el("thead", {}, el("tr", {}, ...["set", "verdict", "flips", "p-value", "claim"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rep.culprit_sets.map((c) => el("tr", { "data-set": c.ids.join(",") }, el("td", { class: "mono", text: `{${c.ids.join(", ")}}` }), el("td", { class: c.verdict, text: c.verdict }),
        el("td", { text: `${c.flips}/${c.samples}` }), el("td", { text: fmt(c.p_value) }), el("td", { text: c.claim }))))));
  }
  out.replaceChildren(...parts);
}

// ------------------------------------------------------------------------------------------------------- compare
async function showCompare(a, b) {
  setNav("nav-compare");
  main.replaceChildren(el("h1", { text: "Compare two runs" }));
  if (!a || !b) {
    main.append(el("p", { class: "notice", text: "Pick two runs on the Runs page (tick their boxes, or press x on each), then Compare picked." }));
    return;
  }
  let d;
  try {
    d = await api(`/api/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  } catch (err) {
    showError(main, err);
    return;
  }
  const pair = (p) => (p ? `${p[0] || "(none)"} ↔ ${p[1] || "(none)"}` : "—");
  const list = (xs) => (xs.length ? xs.join(", ") : "none");
  main.append(el("section", { id: "diff" },
    el("table", {}, el("tbody", {},
      el("tr", {}, el("th", { text: "Run A" }), el("td", {}, el("a", { href: `#/run/${encodeURIComponent(d.a.run_id)}`, class: "mono", text: d.a.run_id }), " — ", d.a.answer ?? "")),
      el("tr", {}, el("th", { text: "Run B" }), el("td", {}, el("a", { href: `#/run/${encodeURIComponent(d.b.run_id)}`, class: "mono", text: d.b.run_id }), " — ", d.b.answer ?? "")),
      el("tr", {}, el("th", { text: "First divergence" }), el("td", { id: "first-divergence", class: "mono", text: d.first_divergence ? `${pair(d.first_divergence)} (${d.divergence_keys.join(", ")})` : "none: the runs agree" })),
      el("tr", {}, el("th", { text: "First divergent model call" }), el("td", { class: "mono", text: pair(d.first_model_call) })),
      el("tr", {}, el("th", { text: "Sources removed (A only)" }), el("td", { id: "sources-removed", class: "mono", text: list(d.sources_removed) })),
      el("tr", {}, el("th", { text: "Sources added (B only)" }), el("td", { id: "sources-added", class: "mono", text: list(d.sources_added) })),
      el("tr", {}, el("th", { text: "Sources changed" }), el("td", { id: "sources-changed", class: "mono", text: list(d.sources_changed) })))),
    el("pre", { text: d.text })));
}

// -------------------------------------------------------------------------------------------- routing, keyboard
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "run" && parts[1]) return showRun(parts[1]);
  if (parts[0] === "compare") return showCompare(parts[1], parts[2]);
  return showRuns();
}

document.addEventListener("keydown", (e) => {
  const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement && document.activeElement.tagName);
  if (e.key === "Escape") {
    if (typing) document.activeElement.blur();
    else if (location.hash.startsWith("#/run/") || location.hash.startsWith("#/compare")) history.back();
    return;
  }
  if (typing) return;
  if (e.key === "/") {
    const q = document.getElementById("q");
    if (q) { e.preventDefault(); q.focus(); }
  } else if (document.activeElement && document.activeElement.closest && document.activeElement.closest("#steps")
    && ["ArrowDown", "ArrowUp", "j", "k", "Home", "End", "PageDown", "PageUp"].includes(e.key)) {
    e.preventDefault();
    moveInSteps(document.getElementById("steps"), e.key);
  } else if (["ArrowDown", "ArrowUp", "j", "k"].includes(e.key)) {
    const rows = [...document.querySelectorAll("tr.run")];
    if (!rows.length) return;
    e.preventDefault();
    const i = rows.indexOf(document.activeElement);
    const down = e.key === "ArrowDown" || e.key === "j";
    const next = i < 0 ? 0 : Math.min(rows.length - 1, Math.max(0, i + (down ? 1 : -1)));
    rows[next].focus();
  } else if (e.key === "c") {
    comparePicked();
  }
});

window.addEventListener("hashchange", route);
route();

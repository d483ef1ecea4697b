// keyplace visualizer: the ring or table of a snapshot, what a change moves, and where a key goes.
//
// Serving it: the page imports ./keyplace.mjs, which loads keyplace_wasm.mjs and keyplace_wasm.wasm
// from its own directory, and the build copies viz/* next to them, into build/gcc/wasm/. Serve that
// directory over http (browsers refuse ES modules and .wasm fetches from file://):
//   cd build/gcc/wasm && python3 -m http.server 8000 --bind 127.0.0.1
//   then open http://127.0.0.1:8000/index.html
// The server must send .mjs as text/javascript and .wasm as application/wasm (Python's does).
// index.html?script=ring-add (or maglev-remove, rendezvous-weight) runs a fixed scenario, then sets
// document.body.dataset.done and writes its result as JSON into <pre id="result">
// (tests/viz/viz_test.py checks it against keyplace-cli). viz.js also runs as its own module
// worker, which measures each change off the page's thread.

// Imported in main(), not statically: a page whose module is missing then says so, and a
// scripted run reports the error instead of never finishing.
let KeyplaceError = null;

const ARCS = 2048;  // samples of the hash space drawn around the circle
const SVG_NS = 'http://www.w3.org/2000/svg';
const SIZE = 640;   // the circle's box (the svg's viewBox adds room for the labels)
const R_OUTER = 288, R_MID = 226, R_MOVED = 216, R_INNER = 172;
// The failure domain levels of a document's replication.spread (doc/snapshots.md).
const SPREADS = ['node', 'rack', 'zone', 'region'];
// Per-node data the page has no editor for, and without which the library refuses a snapshot.
// Redis slots and partition tables are offered: without them the library splits the slots
// evenly and claims a fresh table.
const NEEDS_DATA = { tokens: 'tokens', points: 'points' };
// Distinct at a glance; nodes past these take golden-angle hues.
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948',
                 '#b07aa1', '#ff9da7', '#9c755f', '#86bc3a', '#3f51b5', '#d35400'];

const $ = (id) => document.getElementById(id);

const app = {
  kp: null,
  strategies: [],    // kp.strategies(): the menu and the parameter inputs
  model: null,       // what the controls describe: a document without digests
  live: null,        // the snapshot drawn
  prev: null,        // the snapshot before the last change
  change: null,      // what the last change moved
  colors: new Map(), // id -> color, kept while the id is on the page so a node keeps its color
};

// ---------------------------------------------------------------- the model and its snapshots

function rowOf(name) {
  return app.strategies.find((r) => r.name === name);
}

// The document of a model: its parameters as the user set them (the others take their
// defaults), the partition table's replicas and spread from the replication controls.
function documentOf(m) {
  const row = rowOf(m.strategy);
  const params = {};
  for (const p of row ? row.params : []) {
    if (p.fromCopies) {
      params[p.name] = p.kind === 'name' ? m.replication.spread : Math.max(1, m.replication.count);
    } else if (p.name in m.params) {
      params[p.name] = m.params[p.name];
    }
  }
  const doc = {
    format: 'keyplace.snapshot/1',
    cluster: 'viz',
    epoch: m.epoch,
    strategy: { name: m.strategy, contract: 1, params },
    replication: { count: m.replication.count, spread: m.replication.spread },
    nodes: m.nodes.map((n) => {
      const out = { id: n.id, weight: n.weight };
      for (const part of ['region', 'zone', 'rack']) {
        if (n[part]) out[part] = n[part];  // an empty part is left out: "" is not a name
      }
      return out;
    }),
  };
  if (m.epoch > 1) doc.parent_epoch = m.epoch - 1;
  return doc;
}

function errorText(e) {
  if (KeyplaceError && e instanceof KeyplaceError) return e.message;  // the library's words, naming the value
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function showError(e) {
  const box = $('error');
  box.textContent = errorText(e);
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
}

// Builds the first snapshot; nothing has moved yet.
function start(model) {
  const snap = app.kp.snapshot(documentOf(model));
  for (const s of [app.prev, app.live]) if (s) s.free();
  app.model = model;
  app.live = snap;
  app.prev = null;
  app.change = null;
  render();
}

// Applies edit to a copy of the model. A snapshot the library refuses leaves the page as it was
// (the controls go back to what is drawn) and shows the library's message; returns success.
function tryChange(edit) {
  const next = structuredClone(app.model);
  edit(next);
  next.epoch = app.model.epoch + 1;
  let snap;
  try {
    snap = app.kp.snapshot(documentOf(next));
  } catch (e) {
    showError(e);
    renderControls();
    return false;
  }
  clearError();
  if (app.prev) app.prev.free();
  app.prev = app.live;
  app.live = snap;
  app.model = next;
  app.change = measureChange(app.prev, app.live);
  render();
  requestAnalysis(app.change, app.prev, app.live);
  return true;
}

function byKeyBytes(s) {
  return !!rowOf(s.document.strategy.name)?.byKeyBytes;
}

// Whether an arc holds the same keys in both snapshots: both draw sample keys, or both put keys
// at the same points and draw the same space (a ring's 2^64 points and a Maglev table's
// residues share the key hash but not the picture; so do two tables of different sizes).
function sameKeyPoints(a, b) {
  if (byKeyBytes(a) || byKeyBytes(b)) return byKeyBytes(a) && byKeyBytes(b);  // both draw sample keys
  const sa = a.pictureSpace(), sb = b.pictureSpace();
  if (sa.modulus !== sb.modulus || sa.bits !== sb.bits) return false;
  for (let i = 0; i < 8; i++) {
    if (a.pointOf(`keyplace.sample.${i}`) !== b.pointOf(`keyplace.sample.${i}`)) return false;
  }
  return true;
}

// Owner ids at the ARCS sample points (by id: the two snapshots index different node lists).
function ownerIds(s) {
  const nodes = s.nodes;
  return Array.from(s.ownersAt(ARCS), (i) => nodes[i].id);
}

function measureChange(before, after) {
  const was = ownerIds(before);
  const now = ownerIds(after);
  // The arc comparison: which samples changed owner, and between whom.
  const byPair = new Map();
  for (let i = 0; i < ARCS; i++) {
    if (was[i] === now[i]) continue;
    const key = `${was[i]}\u0000${now[i]}`;
    byPair.set(key, (byPair.get(key) || 0) + 1);
  }
  const arcTotals = [...byPair].map(([key, n]) => {
    const [from, to] = key.split('\u0000');
    return { from, to, fraction: n / ARCS, arcs: n };
  });
  return { was, now, arcTotals, movement: { pending: true }, plan: { pending: true } };
}

// ---------------------------------------------------------------- movement and plan, in a worker

// Both can take seconds: the movement between two Maglev table sizes whose lcm is at most 2^24
// is exact over that many residues (65537 and 251: some 18 s in WebAssembly), the plan of a
// 65537-entry table some 6 s. So a worker computes them while the page shows the arcs. The
// worker is this file, run as a module worker: the page stays three files. A scripted run
// computes inline: headless Chrome's virtual time does not wait for a worker.
const analyst = { worker: null, busy: false, last: 0, inline: false };

// Measures a change: report('movement', ...), then report('plan', ...), each the result or
// {error}. The plan is reduced to its totals (tens of thousands of ranges are no use here).
function analyse(kp, a, b, report) {
  try {
    report('movement', kp.movement(a, b));
  } catch (e) {
    report('movement', { error: moduleError(e) });
  }
  const m = a.document.strategy.params['table-size'];
  const n = b.document.strategy.params['table-size'];
  if (a.document.strategy.name === b.document.strategy.name && m !== n) {
    // Two table sizes refine into lcm(M, M') residues, up to 2^24 ranges: minutes, and more
    // memory than the module may take.
    report('plan', { error: `not computed: the table size changed (${m} → ${n})` });
    return;
  }
  try {
    const p = kp.plan(a, b);
    report('plan', { exact: p.exact, space: p.space, moved: p.moved, ranges: p.ranges.length, totals: p.totals });
  } catch (e) {
    report('plan', { error: `failed: ${moduleError(e)}` });
  }
}

// An error out of the module: a C++ exception it does not catch arrives as a bare number.
function moduleError(e) {
  return typeof e === 'number' ? `the module failed (exception ${e}, probably out of memory)` : errorText(e);
}

function requestAnalysis(change, before, after) {
  const report = (kind, value) => {
    change[kind] = value;
    if (app.change === change) renderChange();
  };
  if (analyst.inline) {
    analyse(app.kp, before, after, report);
    return;
  }
  if (analyst.busy) {  // an older change's plan may run for minutes: drop it
    analyst.worker.terminate();
    analyst.worker = null;
  }
  if (!analyst.worker) analyst.worker = new Worker(import.meta.url, { type: 'module' });
  const worker = analyst.worker;
  const id = ++analyst.last;
  analyst.busy = true;
  const stop = () => {
    analyst.busy = false;
    worker.terminate();  // after an exception out of the module its memory may be inconsistent
    if (analyst.worker === worker) analyst.worker = null;
  };
  worker.onmessage = ({ data }) => {
    if (data.id !== id) return;
    report(data.kind, data.value);
    if (data.value.error && data.value.error.startsWith('failed')) stop();
    else if (data.kind === 'plan') analyst.busy = false;
  };
  worker.onerror = (e) => {
    stop();
    const error = { error: `failed: ${e.message || 'the worker stopped'}` };
    for (const kind of ['movement', 'plan']) if (change[kind].pending) report(kind, error);
  };
  worker.postMessage({ id, before: before.toJson(), after: after.toJson() });
}

// The worker's side: builds the two documents and analyses them.
function serveAnalyses() {
  const ready = import('./keyplace.mjs').then((api) => {
    KeyplaceError = api.KeyplaceError;
    return api.load();
  });
  self.onmessage = async ({ data }) => {
    const report = (kind, value) => self.postMessage({ id: data.id, kind, value });
    let a = null, b = null;
    try {
      const kp = await ready;
      a = kp.snapshot(data.before);
      b = kp.snapshot(data.after);
      analyse(kp, a, b, report);
    } catch (e) {
      for (const kind of ['movement', 'plan']) report(kind, { error: `failed: ${moduleError(e)}` });
    } finally {
      for (const s of [a, b]) if (s) s.free();
    }
  };
}

// ---------------------------------------------------------------- formatting

// A fraction as keyplace-cli prints it: a percentage with four decimals ("10.4894%").
function percent(f) {
  return `${(100 * f).toFixed(4)}%`;
}

function colorOf(id) {
  if (!app.colors.has(id)) {
    const used = new Set(app.colors.values());
    const free = PALETTE.find((c) => !used.has(c));
    const hue = Math.round((app.colors.size * 137.508) % 360);
    app.colors.set(id, free || `hsl(${hue} 60% 52%)`);
  }
  return app.colors.get(id);
}

// Colors of ids gone from both snapshots are released for the next new node (a removed node
// keeps its color while the last change is shown).
function pruneColors() {
  const present = new Set([...app.model.nodes, ...(app.prev ? app.prev.nodes : [])].map((n) => n.id));
  for (const id of app.colors.keys()) if (!present.has(id)) app.colors.delete(id);
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'style') e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// ---------------------------------------------------------------- rendering

function render() {
  pruneColors();
  renderControls();
  renderRing();
  renderChange();
  renderShares();
  renderKey();
}

function renderControls() {
  const m = app.model;
  const row = rowOf(m.strategy);
  $('strategy').value = m.strategy;
  $('strategy-summary').textContent = row ? row.summary : '';
  const notes = [];
  if (row && row.perNode === 'slots') notes.push('Nodes carry no slot ranges here: the library splits the 16384 slots evenly.');
  if (row && row.perNode === 'partitions') notes.push('Nodes carry no partition table here: each snapshot is a fresh claim, so a change moves what two fresh claims differ by, not what a planned transition moves.');
  if (row && row.nodeOrder === 'as_given') notes.push('Node order is part of this function: nodes are placed in the order listed.');
  if (row && !row.preferenceOrder) notes.push('No preference order: a key has its owner alone (copies 0).');
  if (row && row.wholeWeights) notes.push('Weights are whole numbers.');
  const without = app.strategies.filter((r) => NEEDS_DATA[r.perNode]).map((r) => `${r.name} (${NEEDS_DATA[r.perNode]})`);
  if (without.length) notes.push(`Not offered: ${without.join(', ')}, whose nodes need per-node data this page does not edit.`);
  $('strategy-note').textContent = notes.join(' ');

  // One input per parameter the user sets (the replication controls set the others).
  const box = $('params');
  box.replaceChildren();
  for (const p of row ? row.params : []) {
    if (p.fromCopies) continue;
    const value = p.name in m.params ? m.params[p.name] : p.default;
    let input;
    if (p.kind === 'name') {
      input = el('select');
      for (const n of p.names) input.append(el('option', { value: n }, n));
      input.value = value;
    } else if (p.kind === 'numbers') {
      input = el('input', { size: '14', placeholder: 'e.g. 3,1' });
      input.value = value.join(',');
    } else {
      input = el('input', { type: 'number', min: String(p.min), max: String(p.max), step: '1' });
      input.value = String(value);
    }
    input.id = `param-${p.name}`;
    input.title = p.meaning;
    input.addEventListener('change', () => setParam(p, input.value));
    box.append(el('div', { class: 'param' }, el('label', { title: p.meaning }, `${p.name} `, input), el('div', { class: 'note' }, p.meaning)));
  }

  $('copies').value = String(m.replication.count);
  $('spread').value = m.replication.spread;

  const body = $('nodes').tBodies[0];
  body.replaceChildren();
  const whole = row && row.wholeWeights;
  m.nodes.forEach((n) => {
    const weight = el('input', { type: 'number', min: '0', step: whole ? '1' : 'any', 'aria-label': `weight of ${n.id}` });
    weight.value = String(n.weight);
    weight.addEventListener('change', () => setWeight(n.id, Number(weight.value)));
    const parts = ['region', 'zone', 'rack'].map((part) => {
      const input = el('input', { size: '4', 'aria-label': `${part} of ${n.id}` });
      input.value = n[part] || '';
      input.addEventListener('change', () => setLocation(n.id, part, input.value.trim()));
      return el('td', {}, input);
    });
    const remove = el('button', { type: 'button', title: `remove ${n.id}` }, '×');
    remove.addEventListener('click', () => removeNode(n.id));
    body.append(el('tr', {},
      el('td', {}, el('span', { class: 'swatch', style: `background:${colorOf(n.id)}` })),
      el('td', { class: 'id' }, n.id), el('td', {}, weight), ...parts, el('td', {}, remove)));
  });
  if (!$('new-id').value || m.nodes.some((n) => n.id === $('new-id').value)) $('new-id').value = freeId();
}

// The next unused id of the form cache-<letter>, else node-<n>.
function freeId() {
  const ids = new Set(app.model.nodes.map((n) => n.id));
  for (let c = 97; c <= 122; c++) {
    const id = `cache-${String.fromCharCode(c)}`;
    if (!ids.has(id)) return id;
  }
  for (let i = 1; ; i++) if (!ids.has(`node-${i}`)) return `node-${i}`;
}

// An annulus sector from fraction a0 to a1 of a turn, 0 at the top, clockwise.
function sector(r0, r1, a0, a1) {
  const at = (r, a) => {
    const t = 2 * Math.PI * a - Math.PI / 2;
    return `${(SIZE / 2 + r * Math.cos(t)).toFixed(2)} ${(SIZE / 2 + r * Math.sin(t)).toFixed(2)}`;
  };
  const large = a1 - a0 > 0.5 ? 1 : 0;
  return `M${at(r1, a0)}A${r1} ${r1} 0 ${large} 1 ${at(r1, a1)}L${at(r0, a1)}A${r0} ${r0} 0 ${large} 0 ${at(r0, a0)}Z`;
}

// Runs of equal values: [{start, end, value}], end exclusive.
function runs(values, same = (a, b) => a === b) {
  const out = [];
  for (let i = 0; i < values.length; i++) {
    const last = out[out.length - 1];
    if (last && same(last.value, values[i])) last.end = i + 1;
    else out.push({ start: i, end: i + 1, value: values[i] });
  }
  return out;
}

// One path per run, with attrs(run) and a tooltip; a run of more than half a turn is drawn as
// two (an arc of a whole turn has no distinct end points).
function drawRuns(g, list, r0, r1, attrs, tooltip) {
  for (const run of list) {
    const a0 = run.start / ARCS, a1 = run.end / ARCS;
    const parts = a1 - a0 > 0.5 ? [[a0, (a0 + a1) / 2], [(a0 + a1) / 2, a1]] : [[a0, a1]];
    for (const [b0, b1] of parts) {
      const p = svg('path', { d: sector(r0, r1, b0, b1), ...attrs(run) });
      const title = svg('title');
      title.textContent = tooltip(run);
      p.append(title);
      g.append(p);
    }
  }
}

function superscript(n) {
  return String(n).replace(/\d/g, (d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[d]);
}

function renderRing() {
  const root = $('ring');
  root.replaceChildren();
  const s = app.live;
  const now = app.change ? app.change.now : ownerIds(s);
  const byBytes = byKeyBytes(s);
  // ownersAt draws a table's residues (modulus M) or points of `bits` bits.
  const { modulus, bits } = s.pictureSpace();
  const space = modulus ? BigInt(modulus) : 1n << BigInt(bits);

  const g = svg('g');
  root.append(g);
  const span = (run) => {
    const lo = (BigInt(run.start) * space) / BigInt(ARCS);
    const hi = (BigInt(run.end) * space) / BigInt(ARCS) - 1n;
    return byBytes ? `sample keys ${run.start}..${run.end - 1}` : `${modulus ? 'residues' : 'points'} ${lo}..${hi}`;
  };
  drawRuns(g, runs(now), R_MID, R_OUTER, (run) => ({ fill: colorOf(run.value) }), (run) => `${run.value}: ${span(run)}`);

  // The inner ring: the arcs the last change moved, in their new owner's color.
  const c = app.change;
  g.append(svg('circle', { cx: SIZE / 2, cy: SIZE / 2, r: (R_INNER + R_MOVED) / 2, class: 'track', 'stroke-width': R_MOVED - R_INNER }));
  if (c) {
    const pairs = c.now.map((id, i) => (id === c.was[i] ? null : [c.was[i], id]));
    const moved = runs(pairs, (a, b) => (a === null ? b === null : b !== null && a[0] === b[0] && a[1] === b[1]))
      .filter((r) => r.value !== null);
    drawRuns(g, moved, R_INNER, R_MOVED, (run) => ({ fill: colorOf(run.value[1]), class: 'moved' }),
      (run) => `moved ${run.value[0]} → ${run.value[1]}: ${span(run)}`);
  }

  // Quarter marks of the hash space.
  const quarter = modulus ? String(Math.floor(modulus / 4)) : `2${superscript(bits - 2)}`;
  const half = modulus ? String(Math.floor(modulus / 2)) : `2${superscript(bits - 1)}`;
  const three = modulus ? String(Math.floor((3 * modulus) / 4)) : `3·${quarter}`;
  for (const [a, label, anchor] of [[0, '0', 'middle'], [0.25, quarter, 'start'], [0.5, half, 'middle'],
    [0.75, three, 'end']]) {
    const t = 2 * Math.PI * a - Math.PI / 2;
    const x = SIZE / 2 + (R_OUTER + 8) * Math.cos(t), y = SIZE / 2 + (R_OUTER + 8) * Math.sin(t);
    const text = svg('text', { x: x.toFixed(1), y: (y + (a === 0 ? -2 : a === 0.5 ? 12 : 4)).toFixed(1), class: 'tick', 'text-anchor': anchor });
    text.textContent = byBytes ? '' : label;
    root.append(text);
  }

  const centre = svg('text', { x: SIZE / 2, y: SIZE / 2 - 8, class: 'centre' });
  centre.textContent = s.document.strategy.name;
  const sub = svg('text', { x: SIZE / 2, y: SIZE / 2 + 16, class: 'centre-sub' });
  sub.textContent = `${ownersCount(s)} nodes · epoch ${s.document.epoch}`;
  root.append(centre, sub);

  const keyMark = svg('g', { id: 'key-mark' });
  root.append(keyMark);

  $('ring-note').textContent = (byBytes
    ? `Each of the ${ARCS} arcs is a sample key "keyplace.sample.<i>" (this strategy places a key by its bytes, not by one point), colored by its owner.`
    : `Outer ring: the owner of each of ${ARCS} arcs of ${modulus ? `the table's ${modulus} entries (a key goes to entry point mod ${modulus})` : `the ${bits}-bit key hash space`} (0 at the top, clockwise).`) +
    ' Inner ring: the arcs the last change moved, in their new owner\'s color.';

  const legend = $('legend');
  legend.replaceChildren();
  for (const n of s.nodes) {
    legend.append(el('span', { class: 'item' }, el('span', { class: 'swatch', style: `background:${colorOf(n.id)}` }),
      `${n.id}`, el('span', { class: 'note' }, ` ${[n.zone, n.state && n.state !== 'active' ? n.state : ''].filter(Boolean).join(' ')}`)));
  }
}

function ownersCount(s) {
  return s.nodes.filter((n) => !n.state || n.state === 'active' || n.state === 'leaving' || n.state === 'read_only').length;
}

function renderChange() {
  const c = app.change;
  $('change-none').hidden = !!c;
  $('change').hidden = !c;
  if (!c) return;
  const m = c.movement;
  const known = !m.pending && !m.error;
  $('moved').textContent = known ? percent(m.moved) : m.pending ? '…' : '?';
  $('minimum').textContent = known ? percent(m.minimum) : m.pending ? '…' : '?';
  $('movement-basis').textContent = m.pending ? 'Measuring what moved…'
    : m.error ? `The movement could not be measured: ${m.error}`
    : 'Keys whose owner changed, beside the least any placement moves to reach the new shares; ' +
      (m.exact ? 'exact, over the whole hash space.' : `sampled over ${m.keys} keys.`);

  // The plan's totals where it has ranges; else the owners of the drawn arcs, compared.
  const plan = c.plan;
  const usePlan = plan && plan.totals && plan.space !== 'sampled' && plan.ranges > 0;
  const arcRows = c.arcTotals.map((t) => ({ ...t, detail: `${t.arcs} arc${t.arcs === 1 ? '' : 's'}` }));
  // With more than one copy a plan's row is a new copy and its source, not an owner change.
  const copies = app.live.document.replication.count > 1 || app.prev.document.replication.count > 1;
  if (usePlan) {
    const rows = plan.totals.map((t) => ({ from: t.from, to: t.to, fraction: t.fraction, detail: `${t.ranges} range${t.ranges === 1 ? '' : 's'}` }));
    $('flows-basis').textContent = `From the transfer plan (${plan.exact ? 'exact' : 'sampled'}, ${plan.space}, ${plan.ranges} ranges)` +
      (copies ? ': each row a new copy, from the node it is copied from to the node that gains it.' : ':');
    flowRows($('flows'), rows);
  } else {
    const why = !plan ? '' : plan.pending ? ' (the transfer plan is being computed)'
      : plan.error ? ` (transfer plan ${plan.error})`
      : plan.space === 'sampled' ? ' (the transfer plan is sampled: it has no ranges)'
      : ' (the transfer plan has no ranges: no copy set changed)';
    $('flows-basis').textContent = `Owner changes over the ${ARCS} drawn arcs${why}` +
      (sameKeyPoints(app.prev, app.live) ? ':' : '; the two strategies hash a key to different points, so an arc is a place on the circle, not the same keys:');
    flowRows($('flows'), arcRows);
  }
  const both = usePlan && copies;
  $('owner-flows-basis').hidden = !both;
  $('owner-flows').hidden = !both;
  if (both) flowRows($('owner-flows'), arcRows);
}

// Rows of "from → to : fraction", largest first.
function flowRows(table, rows) {
  rows.sort((a, b) => b.fraction - a.fraction || a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const r of rows) {
    body.append(el('tr', {},
      el('td', {}, el('span', { class: 'swatch', style: `background:${colorOf(r.from)}` }), r.from),
      el('td', {}, '→'),
      el('td', {}, el('span', { class: 'swatch', style: `background:${colorOf(r.to)}` }), r.to),
      el('td', { class: 'num', title: r.detail }, percent(r.fraction))));
  }
  if (rows.length === 0) body.append(el('tr', {}, el('td', { colspan: '4' }, 'nothing moved')));
}

function renderShares() {
  const own = app.live.ownership();
  const bound = own.errorBound ?? own.error_bound;  // the wrapper passes the library's report through
  const total = own.nodes.reduce((sum, n) => sum + n.weight, 0);
  const top = Math.max(...own.nodes.map((n) => Math.max(n.share, n.weight / total))) * 1.1;
  $('shares-basis').textContent = `Share of the hash space (${own.method}` +
    (bound ? `, ±${percent(bound)}` : '') + '); the mark is the fair share, weight / total weight.';
  const box = $('shares');
  box.replaceChildren();
  for (const n of own.nodes) {
    const fair = n.weight / total;
    const bar = el('div', { class: 'bar' },
      el('div', { class: 'fill', style: `width:${(100 * n.share / top).toFixed(2)}%;background:${colorOf(n.id)}` }),
      el('div', { class: 'fair', style: `left:${(100 * fair / top).toFixed(2)}%`, title: `fair ${percent(fair)}` }));
    box.append(el('div', { class: 'share' },
      el('span', { class: 'id' }, n.id), bar,
      el('span', { class: 'num' }, `${percent(n.share)}`), el('span', { class: 'num note' }, `fair ${percent(fair)}`)));
  }
}

function renderKey() {
  const key = $('key').value;
  const out = $('key-out');
  const mark = $('key-mark');
  out.replaceChildren();
  if (mark) mark.replaceChildren();
  if (!key) return;
  const s = app.live;
  const zoneOf = new Map(s.nodes.map((n) => [n.id, n.zone || '']));
  const point = s.pointOf(key);
  const owner = s.owner(key);
  const copies = s.copies(key);
  out.append(el('p', {}, 'owner ', el('span', { class: 'swatch', style: `background:${colorOf(owner)}` }), el('strong', {}, owner),
    el('span', { class: 'note' }, ` point ${point}`)));
  const list = el('ol', { class: 'copies' });
  for (const id of copies) {
    list.append(el('li', {}, el('span', { class: 'swatch', style: `background:${colorOf(id)}` }), id,
      el('span', { class: 'note' }, zoneOf.get(id) ? ` zone ${zoneOf.get(id)}` : ' (no zone)')));
  }
  out.append(el('p', {}, `copies (${copies.length}, owner first):`), list);
  const position = s.positionOf(key);  // where ownersAt's picture has the key, in turns
  if (position < 0) {
    out.append(el('p', { class: 'note' }, 'This strategy places a key by its bytes: the picture has no place for one key.'));
  }
  if (mark && position >= 0) {
    const t = 2 * Math.PI * position - Math.PI / 2;
    const at = (r) => [SIZE / 2 + r * Math.cos(t), SIZE / 2 + r * Math.sin(t)];
    const [x0, y0] = at(R_INNER - 12), [x1, y1] = at(R_OUTER + 4);
    mark.append(svg('line', { x1: x0, y1: y0, x2: x1, y2: y1, class: 'key-line' }),
      svg('circle', { cx: x1, cy: y1, r: 7, class: 'key-dot', fill: colorOf(owner) }));
  }
}

// ---------------------------------------------------------------- edits

function setParam(p, text) {
  let value;
  if (p.kind === 'name') value = text;
  else if (p.kind === 'numbers') value = text.split(/[\s,]+/).filter(Boolean).map(Number);
  else value = Number(text);
  tryChange((m) => { m.params[p.name] = value; });
}

function setStrategy(name) {
  const row = rowOf(name);
  tryChange((m) => {
    m.strategy = name;
    m.params = {};  // the new strategy's defaults
    if (!row.preferenceOrder) m.replication.count = 0;
    if (row.wholeWeights) for (const n of m.nodes) n.weight = Math.max(1, Math.round(n.weight));
  });
}

function setWeight(id, weight) {
  return tryChange((m) => { m.nodes.find((n) => n.id === id).weight = weight; });
}

function setLocation(id, part, value) {
  return tryChange((m) => { m.nodes.find((n) => n.id === id)[part] = value; });
}

function addNode(node) {
  return tryChange((m) => { m.nodes.push(node); });
}

function removeNode(id) {
  return tryChange((m) => { m.nodes = m.nodes.filter((n) => n.id !== id); });
}

function setReplication(count, spread) {
  return tryChange((m) => { m.replication = { count, spread }; });
}

function wire() {
  const menu = $('strategy');
  for (const row of app.strategies) {
    const need = NEEDS_DATA[row.perNode];
    const option = el('option', { value: row.name, title: row.summary }, need ? `${row.name} (needs per-node ${need})` : row.name);
    option.disabled = !!need;
    menu.append(option);
  }
  menu.addEventListener('change', () => setStrategy(menu.value));

  for (const level of SPREADS) $('spread').append(el('option', { value: level }, level));
  $('copies').addEventListener('change', () => setReplication(Number($('copies').value), app.model.replication.spread));
  $('spread').addEventListener('change', () => setReplication(app.model.replication.count, $('spread').value));

  $('add').addEventListener('click', () => {
    const node = { id: $('new-id').value.trim(), weight: Number($('new-weight').value) };
    for (const part of ['region', 'zone', 'rack']) {
      const v = $(`new-${part}`).value.trim();
      if (v) node[part] = v;
    }
    if (addNode(node)) $('new-id').value = freeId();
  });
  $('key').addEventListener('input', renderKey);
}

// ---------------------------------------------------------------- scenarios

function fleet(count, zones) {
  return Array.from({ length: count }, (_, i) => ({
    id: `cache-${String.fromCharCode(97 + i)}`, weight: 1, region: 'eu', zone: `z${(i % zones) + 1}`, rack: `r${i + 1}`,
  }));
}

function model(strategy, params, nodes, replication = { count: 3, spread: 'zone' }) {
  return { epoch: 1, strategy, params, replication, nodes };
}

// Each: the starting model, then one edit made as the controls make it.
const SCENARIOS = {
  'ring-add': {
    model: () => model('ring', { vnodes: 160 }, fleet(5, 3)),
    change: () => addNode({ id: 'cache-f', weight: 1, region: 'eu', zone: 'z3', rack: 'r6' }),
  },
  'maglev-remove': {
    model: () => model('maglev', { 'table-size': 251 }, fleet(6, 3)),
    change: () => removeNode('cache-c'),
  },
  'rendezvous-weight': {
    model: () => model('rendezvous', {}, fleet(5, 3)),
    change: () => setWeight('cache-b', 2),
  },
};

async function runScript(name) {
  const result = $('result');
  result.hidden = false;
  try {
    const scenario = SCENARIOS[name];
    if (!scenario) throw new Error(`no scenario '${name}' (there are ${Object.keys(SCENARIOS).join(', ')})`);
    analyst.inline = true;
    start(scenario.model());
    $('key').value = 'user:42';
    if (!scenario.change()) throw new Error($('error').textContent);
    renderKey();
    const m = app.change.movement;
    if (m.error) throw new Error(m.error);
    // The documents as the library wrote them, spliced in as text so no number is re-rounded.
    result.textContent = `{"strategy":${JSON.stringify(app.live.document.strategy.name)},` +
      `"before":${app.prev.toJson().trim()},"after":${app.live.toJson().trim()},` +
      `"shown_moved":${JSON.stringify($('moved').textContent)},` +
      `"moved":${JSON.stringify(m.moved)},"minimum":${JSON.stringify(m.minimum)}}`;
    document.body.dataset.done = '1';
  } catch (e) {
    result.textContent = errorText(e);
    document.body.dataset.done = 'error';
  }
}

// ---------------------------------------------------------------- start

async function main() {
  const script = new URLSearchParams(location.search).get('script');
  try {
    const api = await import('./keyplace.mjs');
    KeyplaceError = api.KeyplaceError;
    app.kp = await api.load();
    app.strategies = app.kp.strategies();
    $('version').textContent = `${app.kp.version}`;
    $('status').textContent = '';
    wire();
    if (script !== null) {
      await runScript(script);
      return;
    }
    start(model('ring', { vnodes: 160 }, fleet(5, 3)));
  } catch (e) {
    $('status').textContent = '';
    showError(e);
    if (script !== null) {
      $('result').hidden = false;
      $('result').textContent = errorText(e);
      document.body.dataset.done = 'error';
    }
  }
}

if (typeof document === 'undefined') serveAnalyses();  // loaded as the worker
else main();

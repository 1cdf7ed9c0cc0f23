// The wiring picture: virtual repositories to their members, in resolution
// order, with each repository's key on its node. Pure functions: a graph from
// the claim's entries (and the keys the function computed), then an SVG.

const SVG = 'http://www.w3.org/2000/svg';
const NODE_W = 210;
const NODE_H = 50;
const COL_GAP = 90;
const ROW_GAP = 16;
const PAD = 12;

/**
 * The graph of a claim: one node per entry (by name), one per external key,
 * and an edge from each virtual to each member in the order Artifactory
 * resolves them (`repositories`, then `externalRepositories`).
 *
 * @param entries spec.repositories of the claim
 * @param keys    entry index -> key, where the function computed one
 * @param flagged entry index -> 'problem' | 'warning'
 */
export function wiringGraph(entries, keys = new Map(), flagged = new Map()) {
  const nodes = [];
  const byName = new Map();
  entries.forEach((entry, index) => {
    if (!entry || typeof entry !== 'object') return;
    const name = typeof entry.name === 'string' ? entry.name : `#${index}`;
    if (byName.has(name)) return;
    const node = {
      id: `entry-${index}`, index, name, rclass: String(entry.rclass ?? '?'),
      packageType: String(entry.packageType ?? '?'), key: keys.get(index) ?? null,
      flag: flagged.get(index) ?? null, external: false,
    };
    byName.set(name, node);
    nodes.push(node);
  });
  const externals = new Map();
  const edges = [];
  for (const node of [...nodes]) {
    const entry = entries[node.index];
    if (node.rclass !== 'virtual') continue;
    const members = Array.isArray(entry.repositories) ? entry.repositories : [];
    const outside = Array.isArray(entry.externalRepositories) ? entry.externalRepositories : [];
    let order = 0;
    for (const member of members) {
      order += 1;
      const target = byName.get(String(member));
      if (!target) {
        // A member that names no entry: drawn as missing, the error is on the virtual.
        const missing = external(externals, nodes, String(member), true);
        edges.push({ from: node, to: missing, order, deploy: false });
        continue;
      }
      edges.push({ from: node, to: target, order, deploy: entry.defaultDeploymentRepo === member });
    }
    for (const key of outside) {
      order += 1;
      edges.push({ from: node, to: external(externals, nodes, String(key), false), order, deploy: false });
    }
  }
  layout(nodes, edges);
  return { nodes, edges };
}

function external(externals, nodes, key, missing) {
  const id = `${missing ? 'missing' : 'external'}-${key}`;
  if (!externals.has(id)) {
    const node = {
      id, index: null, name: missing ? key : null, rclass: missing ? 'missing' : 'external',
      packageType: '', key: missing ? null : key, flag: missing ? 'problem' : null, external: true,
    };
    externals.set(id, node);
    nodes.push(node);
  }
  return externals.get(id);
}

/** Columns by depth (a virtual's members one column right of it), rows in spec order. */
function layout(nodes, edges) {
  const depth = new Map(nodes.map((n) => [n, 0]));
  // Longest path from a root; bounded, so a cycle (an error the function reports) cannot loop.
  for (let round = 0; round < nodes.length; round++) {
    let changed = false;
    for (const e of edges) {
      if (e.from === e.to) continue;
      const d = depth.get(e.from) + 1;
      if (d > depth.get(e.to) && d < nodes.length) {
        depth.set(e.to, d);
        changed = true;
      }
    }
    if (!changed) break;
  }
  // Repositories no virtual aggregates sit with the members, where there is wiring at all.
  const maxDepth = Math.max(0, ...depth.values());
  const aggregated = new Set(edges.map((e) => e.to));
  for (const n of nodes) {
    if (n.rclass !== 'virtual' && !aggregated.has(n) && maxDepth > 0) depth.set(n, maxDepth);
  }
  const columns = new Map();
  for (const n of nodes) {
    const d = depth.get(n);
    if (!columns.has(d)) columns.set(d, []);
    columns.get(d).push(n);
  }
  // Left to right; in each column, members in the order their virtuals resolve them, so
  // edges cross as little as they can; repositories no virtual aggregates come last.
  const row = new Map();
  for (const d of [...columns.keys()].sort((a, b) => a - b)) {
    const rank = (n) => {
      const from = edges.filter((e) => e.to === n && e.from !== n && row.has(e.from));
      if (!from.length) return [Infinity, 0];
      return from.map((e) => [row.get(e.from), e.order]).sort((a, b) => a[0] - b[0] || a[1] - b[1])[0];
    };
    const column = columns.get(d)
      .map((n, i) => ({ n, i, r: rank(n) }))
      .sort((a, b) => a.r[0] - b.r[0] || a.r[1] - b.r[1] || a.i - b.i)
      .map((x) => x.n);
    column.forEach((n, i) => {
      row.set(n, i);
      n.x = PAD + d * (NODE_W + COL_GAP);
      n.y = PAD + i * (NODE_H + ROW_GAP);
    });
  }
}

/** The graph as an SVG element. */
export function wiringSvg(document, graph) {
  const { nodes, edges } = graph;
  const width = Math.max(...nodes.map((n) => n.x + NODE_W), 200) + PAD;
  const height = Math.max(...nodes.map((n) => n.y + NODE_H), 40) + PAD;
  const el = (name, attrs = {}, text) => {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svg = el('svg', {
    width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': 'virtual repositories and their members in resolution order',
  });
  const defs = el('defs');
  for (const [id, color] of [['arrow', '#7a8399'], ['arrow-deploy', '#2f5fd0']]) {
    const marker = el('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.append(el('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: color }));
    defs.append(marker);
  }
  svg.append(defs);

  // Edges first, under the nodes; a member's incoming edges spread over its left side.
  const incoming = new Map();
  for (const e of edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
  const seen = new Map();
  for (const e of edges) {
    const k = seen.get(e.to) ?? 0;
    seen.set(e.to, k + 1);
    const outCount = edges.filter((x) => x.from === e.from).length;
    const x1 = e.from.x + NODE_W;
    const y1 = e.from.y + (NODE_H * e.order) / (outCount + 1);
    const x2 = e.to.x;
    const y2 = e.to.y + (NODE_H * (k + 1)) / (incoming.get(e.to) + 1);
    const g = el('g', { class: `edge${e.deploy ? ' deploy' : ''}`, 'data-from': e.from.name, 'data-to': e.to.name ?? e.to.key, 'data-order': e.order });
    if (e.from === e.to) {
      // A virtual that lists itself: a loop above the node.
      g.append(el('path', {
        d: `M ${x1 - 30} ${e.from.y} C ${x1 - 30} ${e.from.y - 30}, ${x1 + 10} ${e.from.y - 30}, ${x1} ${e.from.y + 10}`,
        fill: 'none', stroke: '#c62828', 'stroke-width': 1.5, 'marker-end': 'url(#arrow)',
      }));
    } else {
      const back = x2 <= x1;
      const mid = back ? Math.max(x1, x2 + NODE_W) + 40 : (x1 + x2) / 2;
      const d = back
        ? `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2 - 60}, ${x2 + NODE_W / 2} ${e.to.y}`
        : `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`;
      g.append(el('path', {
        d, fill: 'none', stroke: e.deploy ? '#2f5fd0' : '#7a8399', 'stroke-width': e.deploy ? 2.2 : 1.3,
        'stroke-dasharray': e.to.rclass === 'missing' ? '4 3' : 'none',
        'marker-end': `url(#${e.deploy ? 'arrow-deploy' : 'arrow'})`,
      }));
    }
    // The resolution order next to the member, where the labels of one virtual cannot collide.
    const label = e.from === e.to
      ? el('text', { x: x1 - 30, y: e.from.y - 22, class: 'order' }, String(e.order))
      : el('text', { x: x2 - 12, y: y2 - 5, 'text-anchor': 'end', class: 'order' }, e.deploy ? `${e.order} · deploy` : String(e.order));
    g.append(label);
    svg.append(g);
  }

  for (const n of nodes) {
    const g = el('g', { class: `node ${n.rclass}`, 'data-name': n.name ?? '', 'data-key': n.key ?? '', transform: `translate(${n.x},${n.y})` });
    const stroke = n.flag === 'problem' ? '#c62828' : n.flag === 'warning' ? '#9a6700' : '#aab2c5';
    const fill = n.rclass === 'virtual' ? '#eef3ff' : n.external ? '#fafafa' : '#fff';
    g.append(el('rect', {
      width: NODE_W, height: NODE_H, rx: 6, fill, stroke, 'stroke-width': n.flag ? 2 : 1,
      'stroke-dasharray': n.external ? '5 3' : 'none',
    }));
    const title = n.external
      ? (n.rclass === 'missing' ? `${n.name} (no such entry)` : 'external repository')
      : n.name;
    g.append(el('text', { x: 10, y: 18, 'font-weight': 600 }, clip(title, 24)));
    if (!n.external) {
      g.append(el('text', { x: NODE_W - 10, y: 18, 'text-anchor': 'end', class: 'meta' }, clip(`${n.rclass} ${n.packageType}`, 16)));
    }
    g.append(el('text', { x: 10, y: 38, class: 'key' }, n.key ? `key: ${clip(n.key, 24)}` : n.external ? '' : 'key: (not computed)'));
    svg.append(g);
  }
  return svg;
}

function clip(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

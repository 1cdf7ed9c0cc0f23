// The playground: a claim in, the function (as WebAssembly, in this page) runs
// on every edit, and its answer comes out as managed resources, the problems
// next to the entries they belong to, and a picture of the wiring.
import init, { renderComposite, version } from 'function-artifactory';
import YAML from 'yaml';
import { wiringGraph, wiringSvg } from './wiring.js';

const $ = (id) => document.getElementById(id);
const claimBox = $('claim');
const inputBox = $('input');
const apiSelect = $('api');
const output = $('output');

// Without examples/cluster/composition.yaml to read the input from (served alone).
const FALLBACK_INPUT = '# The pipeline step\'s input, as in a Composition (providerApi is the menu above).\n';

/** A claim (namespaced, for a cluster-scoped composite) becomes the composite Crossplane makes of it. */
export function compositeOf(object, api) {
  const meta = object.metadata ?? {};
  if (!meta.namespace || api === 'namespaced' || api === 'auto') return object;
  const name = meta.name ?? 'claim';
  return {
    apiVersion: object.apiVersion,
    kind: object.kind?.startsWith('X') ? object.kind : `X${object.kind ?? 'Repositories'}`,
    metadata: {
      name: `${name}-x7k2p`,
      labels: {
        ...(meta.labels ?? {}),
        'crossplane.io/claim-name': name,
        'crossplane.io/claim-namespace': meta.namespace,
      },
    },
    spec: object.spec,
  };
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function parseYaml(text, what) {
  try {
    return { value: YAML.parse(text) };
  } catch (e) {
    return { error: `${what}: ${e.message}` };
  }
}

function render() {
  const started = performance.now();
  const api = apiSelect.value;
  const claim = parseYaml(claimBox.value, 'the claim is not valid YAML');
  const input = parseYaml(inputBox.value || '{}', 'the input is not valid YAML');
  const error = claim.error ?? input.error
    ?? (claim.value && typeof claim.value === 'object' && !Array.isArray(claim.value) ? null : 'the claim must be a YAML mapping (a Kubernetes object)');
  if (error) {
    showError('parse-error', error);
    return;
  }
  // The page previews what a claim settles to: without the create guard's first steps (new keys
  // under [Observe, Create], a new virtual waiting for its members: docs/lifecycle.md, "Phases"),
  // unless the input sets createGuard itself.
  const functionInput = {
    apiVersion: 'artifactory.fn.crossplane.io/v1beta1',
    kind: 'Input',
    createGuard: false,
    ...(input.value && typeof input.value === 'object' ? input.value : {}),
    providerApi: api,
  };
  try {
    const out = renderComposite({ composite: compositeOf(claim.value, api), input: functionInput });
    show(claim.value, out);
    $('timing').textContent = `rendered in ${(performance.now() - started).toFixed(1)} ms`;
    output.dataset.state = out.results.some((r) => r.severity === 'Fatal') ? 'fatal' : 'rendered';
  } catch (e) {
    showError('error', e.message);
  }
}

function showSummary(kind, children) {
  const summary = $('summary');
  summary.className = kind;
  summary.replaceChildren(...children);
}

/**
 * Nothing could be rendered: say why, and clear what the last render showed, so that no card,
 * wiring or resource of an earlier claim stays on the page as if it were this one's.
 */
function showError(state, message) {
  showSummary('fatal', [el('div', { class: 'parse-error' }, message)]);
  $('entries').replaceChildren();
  $('wiring').replaceChildren(el('span', { class: 'muted' }, 'nothing rendered'));
  $('resources').textContent = '# nothing rendered';
  $('status').textContent = '# no status';
  $('timing').textContent = '';
  output.dataset.state = state;
}

/** The function input of examples/cluster/composition.yaml, as the page's starting input. */
function compositionInput(text) {
  const step = YAML.parse(text)?.spec?.pipeline?.find((s) => s?.functionRef?.name === 'function-artifactory');
  if (!step?.input || typeof step.input !== 'object') return null;
  const { apiVersion, kind, providerApi, ...rest } = step.input;
  return Object.keys(rest).length ? YAML.stringify(rest) : null;
}

async function fetchText(path) {
  try {
    const response = await fetch(path);
    return response.ok ? await response.text() : '';
  } catch {
    // Served without the examples folder.
    return '';
  }
}

function show(claim, out) {
  const entries = Array.isArray(claim.spec?.repositories) ? claim.spec.repositories : [];
  const fatal = out.results.find((r) => r.severity === 'Fatal');
  const statusRepos = out.composite?.status?.repositories ?? [];

  // Summary: the fatal result's headline, or what was rendered; then other results.
  const lines = [];
  if (fatal) {
    lines.push(el('strong', {}, `${fatal.reason}: ${fatal.message.split('\n')[0]}`));
    lines.push(el('div', {}, 'Nothing is rendered; each problem is shown at its repository entry below.'));
  } else {
    const count = Object.keys(out.resources).length;
    lines.push(el('strong', {}, `${count} managed resource${count === 1 ? '' : 's'} rendered`));
    const condition = out.conditions[0];
    if (condition) lines.push(el('div', { class: 'muted' }, `${condition.type}: ${condition.status} (${condition.reason})`));
  }
  // On a fatal call the claim's Warning repeats the fatal result: shown once, above.
  const shown = out.results.filter((r) => r.severity !== 'Fatal' && !(fatal && r.reason === fatal.reason));
  for (const r of shown) {
    lines.push(el('div', { class: `result ${r.severity}` }, `${r.severity} ${r.reason ?? ''}: ${r.message}`));
  }
  showSummary(fatal ? 'fatal' : 'ok', lines);

  // Entries with their problems and warnings.
  const byEntry = (list, i) => list.filter((p) => p.entry === i);
  const cards = [];
  const general = out.problems.filter((p) => p.entry === null || p.entry >= entries.length);
  const generalWarnings = out.warnings.filter((w) => w.entry === null);
  if (general.length || generalWarnings.length) {
    cards.push(card({ title: 'composite and input', sub: '', key: null, problems: general, warnings: generalWarnings, index: 'composite' }));
  }
  const keys = new Map();
  const flagged = new Map();
  entries.forEach((entry, i) => {
    const status = statusRepos.find((s) => s.name === entry?.name);
    if (status?.key) keys.set(i, status.key);
    const problems = byEntry(out.problems, i);
    const warnings = byEntry(out.warnings, i);
    if (problems.length) flagged.set(i, 'problem');
    else if (warnings.length) flagged.set(i, 'warning');
    cards.push(card({
      title: entry?.name ?? `entry ${i}`,
      sub: `${entry?.rclass ?? '?'} ${entry?.packageType ?? '?'}`,
      key: status?.key ?? null,
      kind: status ? status.kind : null,
      problems, warnings, index: String(i),
    }));
  });
  $('entries').replaceChildren(...cards);

  // The wiring picture.
  const graph = wiringGraph(entries, keys, flagged);
  $('wiring').replaceChildren(graph.nodes.length ? wiringSvg(document, graph) : el('span', { class: 'muted' }, 'no repositories'));

  // Managed resources, sorted by name, as a YAML stream.
  const names = Object.keys(out.resources).sort();
  $('resources').textContent = names.length
    ? names.map((n) => `# ${n} (${out.ready[n] ? 'ready' : 'not ready'})\n${YAML.stringify(out.resources[n])}`).join('---\n')
    : '# nothing rendered';
  $('status').textContent = out.composite?.status ? YAML.stringify(out.composite.status) : '# no status';
}

function card({ title, sub, key, kind, problems, warnings, index }) {
  const classes = ['entry'];
  if (problems.length) classes.push('has-problems');
  if (warnings.length) classes.push('has-warnings');
  const list = el('ul');
  for (const p of problems) {
    list.append(el('li', { class: 'problem' },
      el('span', { class: 'path' }, `${p.path}: `), p.message,
      el('div', { class: 'fix' }, `fix: ${p.fix}`)));
  }
  for (const w of warnings) list.append(el('li', { class: 'warning' }, w.message));
  return el('div', { class: classes.join(' '), 'data-entry': index },
    el('div', { class: 'title' }, el('span', { class: 'name' }, title), el('span', { class: 'kind' }, sub)),
    key ? el('div', { class: 'key' }, `key: ${key}`) : null,
    kind ? el('div', { class: 'kind' }, kind) : null,
    problems.length || warnings.length ? list : null);
}

let timer = null;
function schedule() {
  clearTimeout(timer);
  timer = setTimeout(render, 120);
}

async function start() {
  await init();
  $('version').textContent = `v${version()}`;
  // The example the README installs: its claim, and its Composition's input (the menu sets
  // providerApi), so that the page renders what the cluster would.
  const [claim, composition] = await Promise.all([
    fetchText('../cluster/claim.yaml'), fetchText('../cluster/composition.yaml')]);
  claimBox.value = claim || 'apiVersion: platform.example.org/v1alpha1\nkind: Repositories\nmetadata:\n  name: team1-repos\n  namespace: team1\nspec:\n  repositories: []\n';
  inputBox.value = (composition && compositionInput(composition)) || FALLBACK_INPUT;
  for (const box of [claimBox, inputBox]) box.addEventListener('input', schedule);
  apiSelect.addEventListener('change', render);
  render();
}

start().catch((e) => {
  showSummary('fatal', [el('div', { class: 'parse-error' }, `cannot start: ${e.message}`)]);
  output.dataset.state = 'error';
});

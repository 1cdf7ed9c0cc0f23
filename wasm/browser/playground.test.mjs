// The playground end to end in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): load it, check the rendered output, edit the claim, check the error at
// its entry, switch the provider API. Saves wasm/artifacts/playground*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const artifacts = path.join(here, '..', 'artifacts');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';

let server;
let context;
let profile;
let page;
const consoleErrors = [];

before(async () => {
  server = await serve(0);
  mkdirSync(artifacts, { recursive: true });
  profile = mkdtempSync(path.join(os.tmpdir(), 'playground-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('response', (r) => { if (r.status() >= 400) consoleErrors.push(`${r.status()} ${r.url()}`); });
});

after(async () => {
  await context?.close();
  server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

const state = () => page.locator('#output').getAttribute('data-state');

async function editClaim(transform) {
  const text = await page.locator('#claim').inputValue();
  const next = transform(text);
  assert.notEqual(next, text, 'the edit changes the claim');
  await page.locator('#claim').fill(next);
}

test('the playground renders the example claim', async () => {
  const url = `http://127.0.0.1:${server.address().port}/examples/playground/`;
  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'rendered', null, { timeout: 30000 });
  const resources = await page.locator('#resources').textContent();
  assert.match(resources, /kind: MavenRepository/);
  assert.match(resources, /crossplane.io\/external-name: team1-libs-release/);
  // Keys as examples/cluster/composition.yaml makes them: its input is the page's.
  assert.match(resources, /repositories:\n\s+- team1-libs-release\n\s+- team1-libs-snapshot\n\s+- team1-maven-central\n/);
  assert.match(await page.locator('#input').inputValue(), /format: "\{claimNamespace\}-\{name\}"/);
  assert.match(await page.locator('#summary').textContent(), /4 managed resources rendered/);
  assert.match(await page.locator('#version').textContent(), /^v\d+\.\d+\.\d+/);
  // Namespaced kinds came with provider v0.8.0 (docs/provider-releases.md).
  assert.equal(await page.locator('#api option[value="namespaced"]').textContent(), 'namespaced (v0.8.0+, Crossplane v2)');
  // The wiring: the virtual's members in resolution order, keys on the nodes.
  const orders = await page.locator('#wiring svg g.edge[data-from="libs"]').evaluateAll(
    (edges) => edges.map((e) => `${e.dataset.order}:${e.dataset.to}`));
  assert.deepEqual(orders, ['1:libs-release', '2:libs-snapshot', '3:maven-central']);
  assert.equal(await page.locator('#wiring svg g.node[data-name="libs"]').getAttribute('data-key'), 'team1-libs');
  assert.equal(await page.locator('#wiring svg g.edge.deploy').getAttribute('data-to'), 'libs-snapshot');
  await page.screenshot({ path: path.join(artifacts, 'playground.png'), fullPage: true });
});

test('an edit that breaks a key shows the error at its entry', async () => {
  await editClaim((t) => t.replace('    - name: libs-snapshot\n', '    - name: libs-snapshot\n      key: libs-cache\n'));
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'fatal', null, { timeout: 10000 });
  const entry = page.locator('#entries [data-entry="1"]');
  assert.match(await entry.getAttribute('class'), /has-problems/);
  const problem = await entry.locator('.problem').textContent();
  assert.match(problem, /spec\.repositories\[1\]\.key: repository "libs-snapshot": key "libs-cache" \(from key\) ends in "-cache"/);
  assert.match(problem, /fix: choose another ending, such as "libs-cached"/);
  assert.equal(await page.locator('#entries [data-entry="0"] .problem').count(), 0);
  assert.match(await page.locator('#summary').textContent(), /InvalidKey/);
  assert.equal(await page.locator('#resources').textContent(), '# nothing rendered');
  assert.equal(await page.locator('#wiring svg g.node[data-name="libs-snapshot"] rect').getAttribute('stroke'), '#c62828');
  await page.screenshot({ path: path.join(artifacts, 'playground-error.png'), fullPage: true });
});

test('a claim that stops parsing leaves no card of the last render behind', async () => {
  // The key problem of the last test is on the page; now the YAML itself breaks.
  assert.equal(await page.locator('#entries .problem').count(), 1);
  await editClaim((t) => t.replace('spec:\n', 'spec:\n  : : broken\n'));
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'parse-error', null, { timeout: 10000 });
  assert.match(await page.locator('#summary').textContent(), /the claim is not valid YAML/);
  assert.equal(await page.locator('#entries .problem').count(), 0, 'no stale problem card');
  assert.equal(await page.locator('#entries .entry').count(), 0, 'no stale entry card');
  assert.equal(await page.locator('#resources').textContent(), '# nothing rendered');
  assert.equal(await page.locator('#wiring svg').count(), 0);
  // Fixed, both the YAML and the key: every card is this claim's, none has a problem.
  await editClaim((t) => t.replace('  : : broken\n', '').replace('      key: libs-cache\n', ''));
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'rendered', null, { timeout: 10000 });
  assert.equal(await page.locator('#entries .problem').count(), 0);
  assert.equal(await page.locator('#entries .entry').count(), 4);
});

test('another provider API: errors where it lacks a kind, resources where it has them', async () => {
  // The flat API (provider up to v0.6.0) has no federated kinds: the error is at that entry.
  await editClaim((t) => `${t}    - name: libs-federated\n      rclass: federated\n      packageType: maven\n`);
  await page.locator('#api').selectOption('flat');
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'fatal', null, { timeout: 10000 });
  const federated = page.locator('#entries [data-entry="4"] .problem');
  assert.match(await federated.textContent(), /the flat provider API has no federated repository of package type "maven"/);
  assert.equal(await page.locator('#entries .problem').count(), 1);
  // Without the federated entry, the flat API renders its own kinds.
  await editClaim((t) => t.replace(/    - name: libs-federated\n(      .*\n)*/, ''));
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'rendered', null, { timeout: 10000 });
  const resources = await page.locator('#resources').textContent();
  assert.match(resources, /apiVersion: artifactory.jfrog.crossplane.io\/v1alpha1\nkind: LocalMavenRepository/);
  assert.match(resources, /kind: RemoteMavenRepository/);
  assert.match(resources, /kind: VirtualMavenRepository/);
  await page.screenshot({ path: path.join(artifacts, 'playground-flat.png'), fullPage: true });
  // YAML that does not parse is reported as such.
  await editClaim((t) => t.replace('spec:\n', 'spec:\n  : : broken\n'));
  await page.waitForFunction(() => document.querySelector('#output').dataset.state === 'parse-error', null, { timeout: 10000 });
  assert.match(await page.locator('#summary').textContent(), /the claim is not valid YAML/);
  assert.deepEqual(consoleErrors, []);
});

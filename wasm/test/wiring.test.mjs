// The playground's wiring graph (examples/playground/wiring.js), without a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wiringGraph } from '../../examples/playground/wiring.js';

const entries = [
  { name: 'libs-release', rclass: 'local', packageType: 'maven' },
  { name: 'libs-snapshot', rclass: 'local', packageType: 'maven' },
  { name: 'maven-central', rclass: 'remote', packageType: 'maven' },
  {
    name: 'libs', rclass: 'virtual', packageType: 'maven',
    repositories: ['libs-release', 'libs-snapshot', 'maven-central'],
    externalRepositories: ['shared-maven-remote'], defaultDeploymentRepo: 'libs-snapshot',
  },
  { name: 'all', rclass: 'virtual', packageType: 'maven', repositories: ['libs', 'typo'] },
];

test('edges follow resolution order, with external and missing members', () => {
  const keys = new Map([[3, 'team1-libs']]);
  const { nodes, edges } = wiringGraph(entries, keys, new Map([[4, 'problem']]));
  const libs = edges.filter((e) => e.from.name === 'libs');
  assert.deepEqual(libs.map((e) => [e.order, e.to.name ?? e.to.key, e.deploy]), [
    [1, 'libs-release', false], [2, 'libs-snapshot', true], [3, 'maven-central', false], [4, 'shared-maven-remote', false],
  ]);
  assert.equal(nodes.find((n) => n.name === 'libs').key, 'team1-libs');
  assert.equal(nodes.find((n) => n.name === 'typo').rclass, 'missing');
  assert.equal(nodes.find((n) => n.name === 'all').flag, 'problem');
  // Columns: all -> libs -> members.
  const x = (name) => nodes.find((n) => n.name === name).x;
  assert.ok(x('all') < x('libs') && x('libs') < x('libs-release'));
  assert.equal(x('libs-release'), x('maven-central'));
});

test('cycles and self members do not loop', () => {
  const { nodes, edges } = wiringGraph([
    { name: 'v1', rclass: 'virtual', packageType: 'npm', repositories: ['v2'] },
    { name: 'v2', rclass: 'virtual', packageType: 'npm', repositories: ['v1', 'v2'] },
  ]);
  assert.equal(nodes.length, 2);
  assert.equal(edges.length, 3);
  for (const n of nodes) assert.ok(Number.isFinite(n.x) && Number.isFinite(n.y));
});

test('odd entries are drawn, not thrown', () => {
  const { nodes } = wiringGraph([null, 'x', { rclass: 'local' }, { name: 'a' }, { name: 'a' }]);
  assert.deepEqual(nodes.map((n) => n.name), ['#2', 'a']);
});

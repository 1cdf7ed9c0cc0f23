// The npm module after a failure inside the WebAssembly module, and under hostile CEL rules
// (issue 27, item 4): a trap left an instance unusable (every later call failed, even
// version()). The entries (wasm/wrapper/) turn such a failure into an Error and run the next
// call on a fresh instance, in Node and in the browser build; the rules that trapped before are
// refused or stopped by the limits instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const fa = require(path.join(root, 'pkg'));
const glue = require(path.join(root, 'pkg/function_artifactory_glue.js'));

const composite = {
  apiVersion: 'platform.example.org/v1alpha1', kind: 'XRepositories',
  metadata: { name: 'team-a-repos' },
  spec: { repositories: [{ name: 'libs', rclass: 'local', packageType: 'maven' }] },
};

/** A request with the live-schema capability, its schemas answered with `rule` at the root. */
function withRule(rule) {
  const request = {
    meta: { tag: 'cel', capabilities: ['CAPABILITY_REQUIRED_SCHEMAS'] },
    observed: { composite: { resource: composite } },
    input: { apiVersion: 'artifactory.fn.crossplane.io/v1beta1', kind: 'Input', providerApi: 'cluster' },
  };
  const asked = fa.runFunctionJson(request).requirements.schemas;
  assert.ok(Object.keys(asked).length > 0, 'live schemas are asked for');
  const schema = {
    type: 'object', 'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-validations': [{ rule }],
  };
  request.requiredSchemas = Object.fromEntries(Object.keys(asked).map((name) => [name, { openapiV3: schema }]));
  return request;
}

function fatal(response) {
  return response.results.find((r) => r.severity === 'SEVERITY_FATAL')?.message ?? '';
}

/** Asserts `call` throws the entry's Error for a failed instance. */
function assertFailsFreshly(call) {
  assert.throws(call, (error) => {
    assert.ok(error instanceof Error && !(error instanceof WebAssembly.RuntimeError), String(error));
    assert.match(error.message, /the next call runs on a fresh instance/);
    assert.ok(error.cause instanceof Error);
    return true;
  });
}

test('a trap throws an Error and the next call runs on a fresh instance', () => {
  const before = fa.version();
  assertFailsFreshly(() => fa.__failForTests('stack'));
  assert.equal(fa.version(), before);
  assert.ok(fa.renderComposite({ composite }).resources);
});

test('a panic throws an Error and the next call runs on a fresh instance', () => {
  assert.throws(() => fa.__failForTests('panic'), (error) => {
    assert.match(error.message, /the next call runs on a fresh instance/);
    assert.match(error.cause.message, /^function-artifactory failed unexpectedly \(a bug\)/);
    return true;
  });
  assert.ok(fa.renderComposite({ composite }).resources);
});

test('an error the module returns keeps the instance', () => {
  assert.throws(() => fa.runFunction(new Uint8Array([0xff, 0xff])), (error) => {
    assert.doesNotMatch(error.message, /fresh instance/);
    return true;
  });
  assert.equal(typeof fa.version(), 'string');
});

test('without the entry, a trap poisons the instance (what the entry is for)', () => {
  assert.throws(() => glue.__failForTests('stack'), WebAssembly.RuntimeError);
  assert.throws(() => glue.version(), WebAssembly.RuntimeError);
});

test('kinds(123) throws an Error', () => {
  assert.throws(() => fa.kinds(123), (error) => {
    assert.ok(!(error instanceof WebAssembly.RuntimeError), String(error));
    assert.match(error.message, /providerApi must be a string/);
    return true;
  });
  assert.ok(Array.isArray(fa.kinds('cluster')));
  assert.ok(fa.kinds().cluster);
});

test('the rules that trapped the module are refused or stopped, and it stays usable', () => {
  assert.match(fatal(fa.runFunctionJson(withRule('1 > 2'))), /failed rule: 1 > 2/, 'a root rule is reported');
  const chain = `${Array(1000).fill('1').join('+')} > 0`;
  assert.match(fatal(fa.runFunctionJson(withRule(chain))), /levels deep; at most 320 are evaluated/);
  assert.match(fatal(fa.runFunctionJson(withRule(`${Array(2000).fill('1').join('+')} > 0`))), /levels deep/);
  const ranges = 'lists.range(2000).all(a, lists.range(2000).all(b, true))';
  assert.match(fatal(fa.runFunctionJson(withRule(ranges))), /actual cost limit exceeded/);
  const replaced = "'a'.replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa')"
    + ".replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa').replace('a', 'aaaaaaaaaa')"
    + ".replace('a', 'aaaaaaaaaa').size() > 0";
  assert.match(fatal(fa.runFunctionJson(withRule(replaced))), /actual cost limit exceeded/);
  const patterns = "lists.range(2000).all(i, !'abc'.matches('^\\\\pL{60}x' + string(i) + '$'))";
  assert.match(fatal(fa.runFunctionJson(withRule(patterns))), /actual cost limit exceeded/);
  // The deepest rule evaluated fits the module's stack.
  const deepest = `${Array(318).fill('1').join('+')} > 0`;
  assert.equal(fatal(fa.runFunctionJson(withRule(deepest))), '');
  // So does the parse of the deepest nesting the parser accepts (95 brackets in the rule), and
  // one more is refused with words, not a trap.
  const nested = (open, inner, close, depth) => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
  for (const [open, inner, close] of [['(', '1', ')'], ['[', '1', ']'], ['{1: ', '1', '}'], ['x.map(y, ', 'y', ')']]) {
    assert.match(fatal(fa.runFunctionJson(withRule(`${nested(open, inner, close, 95)} == 1`))), /failed rule|evaluation failed|^$/);
    assert.match(fatal(fa.runFunctionJson(withRule(`${nested(open, inner, close, 96)} == 1`))), /nested more than 96 expressions deep/);
  }
  assert.equal(typeof fa.version(), 'string');
});

// The browser build, loaded in Node as a browser loads it (an ES module given the .wasm).
const webDir = path.join(root, 'pkg/web');
const wasmBytes = () => readFileSync(path.join(webDir, 'function_artifactory_bg.wasm'));
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test('the browser entry exports every function of its bindings', async () => {
  const web = await import(pathToFileURL(path.join(webDir, 'function_artifactory.js')).href);
  const bindings = await import(pathToFileURL(path.join(webDir, 'function_artifactory_glue.js')).href);
  const functions = (m) => Object.keys(m).filter((k) => typeof m[k] === 'function').sort();
  assert.deepEqual(functions(web), functions(bindings));
});

test('the browser entry runs the next call on a spare instance after a trap', async () => {
  const web = await import(pathToFileURL(path.join(webDir, 'function_artifactory.js')).href);
  await web.default({ module_or_path: wasmBytes() });
  const before = web.version();
  assertFailsFreshly(() => web.__failForTests('stack'));
  assert.equal(web.version(), before, 'at once, on the spare');
  assertFailsFreshly(() => web.__failForTests('panic'));
  // No spare is ready yet: the call is refused without touching the failed instance.
  assert.throws(() => web.version(), /being instantiated afresh/);
  await settle();
  assert.equal(web.version(), before);
  assert.ok(web.renderComposite({ composite }).resources);
  await settle();
  assertFailsFreshly(() => web.__failForTests('stack'));
  assert.equal(web.version(), before, 'a spare again');
});

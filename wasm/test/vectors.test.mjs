// The WebAssembly module (pkg/, built by scripts/build-wasm.sh) against the
// shared test vectors in tests/vectors/, which tests/function/vectors.rs holds the
// native core to: for every vector the Wasm bytes equal the native bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const fa = require(path.join(root, 'pkg/function_artifactory.js'));

const vectorsDir = path.join(root, 'tests/vectors');
const index = JSON.parse(readFileSync(path.join(vectorsDir, 'index.json'), 'utf8'));
const file = (name) => readFileSync(path.join(vectorsDir, name));
const json = (name) => JSON.parse(file(name).toString('utf8'));

test('the vectors cover every error class and the three APIs', () => {
  const reasons = new Set(index.map((v) => v.fatalReason).filter(Boolean));
  for (const reason of ['InvalidInput', 'InvalidComposite', 'InvalidKey', 'InvalidWiring',
    'InvalidProviderFields', 'UnsafeChange', 'KeyConflict']) {
    assert.ok(reasons.has(reason), reason);
  }
  for (const api of ['flat', 'cluster', 'namespaced']) {
    assert.ok(index.some((v) => v.name === `valid-${api}`), api);
  }
});

for (const vector of index) {
  test(`${vector.name}: runFunction gives the native bytes`, () => {
    const request = new Uint8Array(file(`${vector.name}.request.bin`));
    const expected = file(`${vector.name}.response.bin`);
    const actual = fa.runFunction(request);
    assert.ok(actual instanceof Uint8Array);
    assert.equal(Buffer.compare(Buffer.from(actual), expected), 0,
      `${vector.name}: ${actual.length} bytes, expected ${expected.length}`);
  });

  test(`${vector.name}: runFunctionJson gives the native JSON`, () => {
    const request = json(`${vector.name}.request.json`);
    const expected = json(`${vector.name}.response.json`);
    assert.deepEqual(fa.runFunctionJson(request), expected);
    // JSON text is accepted too.
    assert.deepEqual(fa.runFunctionJson(JSON.stringify(request)), expected);
    // The two mappings agree.
    assert.equal(Buffer.compare(Buffer.from(fa.encodeRequest(request)), file(`${vector.name}.request.bin`)), 0);
    assert.deepEqual(fa.decodeResponse(file(`${vector.name}.response.bin`)), expected);
    const fatal = expected.results?.find((r) => r.severity === 'SEVERITY_FATAL');
    assert.equal(fatal?.reason ?? null, vector.fatalReason);
  });
}

test('renderComposite gives the same resources as RunFunction, as plain objects', () => {
  for (const vector of index) {
    const request = json(`${vector.name}.request.json`);
    const composite = request.observed?.composite?.resource;
    // Only vectors that renderComposite can express: no desired state or required resources.
    if (!composite || request.requiredResources || Object.keys(request.desired?.resources ?? {}).length) continue;
    const expected = json(`${vector.name}.response.json`);
    // Nor the cheap first call, which only asks for the resources the check of
    // keys needs: renderComposite takes everything in one call and never asks.
    if (expected.requirements && !vector.fatalReason) continue;
    const observed = Object.fromEntries(Object.entries(request.observed.resources ?? {})
      .map(([name, r]) => [name, r.resource]));
    const out = fa.renderComposite({ composite, observed, input: request.input });
    const desired = Object.fromEntries(Object.entries(expected.desired?.resources ?? {})
      .map(([name, r]) => [name, r.resource]));
    assert.deepEqual(out.resources, desired, vector.name);
    assert.deepEqual(out.composite, expected.desired?.composite?.resource ?? null, vector.name);
    assert.deepEqual(out.results.map((r) => r.message), (expected.results ?? []).map((r) => r.message), vector.name);
    assert.equal(out.conditions.length, (expected.conditions ?? []).length, vector.name);
    for (const [name, r] of Object.entries(expected.desired?.resources ?? {})) {
      assert.equal(out.ready[name], r.ready === 'READY_TRUE', `${vector.name}/${name}`);
    }
    if (vector.fatalReason) {
      const fatal = out.results.find((r) => r.severity === 'Fatal');
      assert.equal(fatal.reason, vector.fatalReason);
      assert.ok(out.problems.length > 0);
      for (const p of out.problems) assert.ok(fatal.message.includes(`${p.path}: ${p.message}; fix: ${p.fix}`));
    } else {
      assert.deepEqual(out.problems, []);
    }
  }
});

test('renderComposite keeps the first 100 problems and counts the others, as the fatal message does', () => {
  const forProvider = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`unknown${i}`, i]));
  const composite = {
    apiVersion: 'platform.example.org/v1alpha1', kind: 'XRepositories', metadata: { name: 'x' },
    spec: { repositories: [{ name: 'libs', rclass: 'local', packageType: 'maven', forProvider }] },
  };
  const out = fa.renderComposite({ composite, input: { providerApi: 'cluster' } });
  assert.equal(out.problems.length, 100);
  assert.equal(out.problemsOmitted, 50);
  const fatal = out.results.find((r) => r.severity === 'Fatal');
  assert.ok(fatal.message.startsWith('cannot render the Artifactory repositories: 150 problems\n'), fatal.message);
  assert.ok(fatal.message.endsWith('\n- and 50 more (a call lists the first 100; fix these and run again)'), fatal.message);
});

test('renderComposite attaches problems and warnings to their entries', () => {
  const composite = {
    apiVersion: 'platform.example.org/v1alpha1', kind: 'XRepositories', metadata: { name: 'x' },
    spec: {
      projectKey: 'team1',
      repositories: [
        { name: 'ok', rclass: 'local', packageType: 'maven', key: '1libs' },
        { name: 'bad', rclass: 'local', packageType: 'maven', key: 'libs-cache' },
      ],
    },
  };
  const out = fa.renderComposite({ composite, input: { providerApi: 'cluster' } });
  assert.deepEqual(out.problems.map((p) => [p.entry, p.path, p.category]),
    [[1, 'spec.repositories[1].key', 'InvalidKey']]);
  assert.ok(out.problems[0].message.includes('"libs-cache"'));
  composite.spec.repositories.pop();
  const ok = fa.renderComposite({ composite });
  // Two about the key "1libs"; one about projectKey without projectEnvironments, for the
  // composite (it names the entries), not for an entry.
  assert.deepEqual(ok.warnings.map((w) => w.entry), [0, 0, null]);
  assert.equal(ok.warnings[2].path, 'spec.projectKey');
  assert.match(ok.warnings[2].message, /repository ok does not set forProvider\.projectEnvironments/);
  assert.equal(ok.resources.ok.metadata.annotations['crossplane.io/external-name'], '1libs');
  assert.deepEqual(ok.conditions[0], {
    type: 'RepositoriesReady', status: 'False', reason: 'Creating',
    message: ok.conditions[0].message, target: 'CompositeAndClaim',
  });
});

test('errors are JavaScript errors with the server\'s messages, never traps', () => {
  assert.throws(() => fa.runFunction(new Uint8Array([0x0a, 0xff])),
    (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError)
      && e.message.startsWith('failed to decode Protobuf message'));
  assert.throws(() => fa.runFunctionJson({ meta: { tag: 7 } }),
    { message: 'invalid RunFunctionRequest: meta.tag: expected a string, not a number' });
  assert.throws(() => fa.runFunctionJson('{not json'), /runFunctionJson: the argument is not JSON/);
  assert.throws(() => fa.runFunctionJson([]), /must be a JSON object, not a list/);
  assert.throws(() => fa.renderComposite({}), /`composite` must be an object/);
  assert.throws(() => fa.renderComposite({ composite: {}, observed: [{}] }), /observed\[0\]/);
  assert.throws(() => fa.decodeResponse(new Uint8Array([0xff])), /failed to decode Protobuf message/);
  assert.throws(() => fa.kinds('v2'), /use one of: flat, cluster, namespaced/);
  // The module still works after every error.
  const request = new Uint8Array(file('valid-flat.request.bin'));
  assert.equal(Buffer.compare(Buffer.from(fa.runFunction(request)), file('valid-flat.response.bin')), 0);
});

test('JSON nested too deep is refused, not a stack overflow', () => {
  let deep = {};
  for (let i = 0; i < 300; i++) deep = { a: [deep] };
  assert.throws(() => fa.runFunctionJson({ input: deep }), /runFunctionJson: the argument is not JSON: recursion limit exceeded/);
  const composite = { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'x' }, spec: { repositories: [], deep } };
  assert.throws(() => fa.renderComposite({ composite }), /renderComposite: the argument is not JSON: recursion limit exceeded/);
});

test('bytes that are no request throw the server\'s message', () => {
  const cases = json('undecodable.json');
  assert.ok(cases.length >= 4);
  for (const c of cases) {
    assert.throws(() => fa.runFunction(Buffer.from(c.requestBase64, 'base64')),
      (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && e.message === c.error,
      c.name);
  }
});

test('mangled requests never trap', () => {
  // A small deterministic generator: the same cases on every run.
  let seed = 42;
  const next = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed; };
  const base = file('valid-cluster.request.bin');
  let answered = 0;
  let refused = 0;
  for (let i = 0; i < 400; i++) {
    const bytes = new Uint8Array(base);
    const flips = 1 + (next() % 4);
    for (let f = 0; f < flips; f++) bytes[next() % bytes.length] = next() & 0xff;
    const cut = i % 5 === 0 ? next() % bytes.length : bytes.length;
    try {
      fa.runFunction(bytes.subarray(0, cut));
      answered++;
    } catch (e) {
      assert.ok(!(e instanceof WebAssembly.RuntimeError), `trap: ${e}`);
      assert.match(e.message, /^failed to decode Protobuf message/);
      refused++;
    }
  }
  assert.equal(answered + refused, 400);
});

test('version and kinds', () => {
  const cargo = readFileSync(path.join(root, 'Cargo.toml'), 'utf8');
  assert.equal(fa.version(), cargo.match(/^version = "([^"]+)"/m)[1]);
  const kinds = fa.kinds();
  assert.deepEqual(Object.keys(kinds), ['cluster', 'flat', 'namespaced']);
  for (const api of ['flat', 'cluster', 'namespaced']) {
    assert.ok(kinds[api].length > 90, api);
    assert.deepEqual(fa.kinds(api), kinds[api]);
  }
  assert.ok(kinds.flat.some((k) => k.kind === 'LocalMavenRepository' && k.rclass === 'local' && k.packageType === 'maven'));
  assert.ok(kinds.namespaced.every((k) => k.namespaced));
});

test('kinds() is documented, with its argument, in the TypeScript declarations', () => {
  const dts = readFileSync(path.join(root, 'pkg/function_artifactory.d.ts'), 'utf8');
  const declaration = 'export function kinds(providerApi?: string | null): Record<ProviderApi, Kind[]> | Kind[];';
  const at = dts.indexOf(declaration);
  assert.ok(at > 0, declaration);
  const doc = dts.slice(dts.lastIndexOf('/**', at), at);
  for (const said of ['`undefined` or `null`', '`"flat"`, `"cluster"` or `"namespaced"`', '`{flat: Kind[], cluster: Kind[], namespaced: Kind[]}`', 'throws a JavaScript `Error`']) {
    assert.ok(doc.includes(said), `the doc comment of kinds says ${said}`);
  }
});

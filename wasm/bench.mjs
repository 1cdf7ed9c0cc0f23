// Time per runFunction call of the WebAssembly module (pkg/) at 10, 100 and 1000
// repositories, and the size of the .wasm raw and gzipped. Prints figures; asserts nothing.
//   node wasm/bench.mjs
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const fa = require(path.join(root, 'pkg/function_artifactory.js'));

/** A composite with n repositories: locals, remotes, and virtuals over them, like a real team's. */
function request(n) {
  const types = ['maven', 'npm', 'docker', 'pypi', 'generic'];
  const repositories = [];
  for (let i = 0; repositories.length < n; i++) {
    const packageType = types[i % types.length];
    const group = [
      { name: `local-${i}`, rclass: 'local', packageType, description: `builds ${i}`, forProvider: { xrayIndex: true } },
      { name: `remote-${i}`, rclass: 'remote', packageType, url: `https://upstream-${i}.example.com/${packageType}` },
      { name: `virtual-${i}`, rclass: 'virtual', packageType, repositories: [`local-${i}`, `remote-${i}`], defaultDeploymentRepo: `local-${i}` },
    ];
    repositories.push(...group.slice(0, n - repositories.length));
  }
  // A virtual whose members were cut off by n would be invalid: drop its members.
  for (const r of repositories) {
    if (r.rclass === 'virtual') {
      r.repositories = r.repositories.filter((m) => repositories.some((x) => x.name === m));
      if (!r.repositories.includes(r.defaultDeploymentRepo)) delete r.defaultDeploymentRepo;
    }
  }
  return fa.encodeRequest({
    meta: { tag: 'bench', capabilities: ['CAPABILITY_CAPABILITIES', 'CAPABILITY_CONDITIONS'] },
    observed: {
      composite: {
        resource: {
          apiVersion: 'platform.example.org/v1alpha1', kind: 'XRepositories',
          metadata: { name: 'team1-repos-x7k2p' },
          spec: { projectKey: 'team1', repositories },
        },
      },
    },
    // Every repository rendered, as in the figures before the create guard: a first call would
    // leave the virtuals waiting for their members (docs/lifecycle.md, "Phases").
    input: { apiVersion: 'artifactory.fn.crossplane.io/v1beta1', kind: 'Input', providerApi: 'cluster', createGuard: false },
  });
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

/** Calls per batch so that one batch takes about `ms`. */
function calibrate(bytes, ms) {
  let calls = 0;
  const started = now();
  while (now() - started < ms) { fa.runFunction(bytes); calls++; }
  return Math.max(3, calls);
}

/** The median and fastest of 9 batches of about 100 ms each, in ms per call. */
function bench(n, bytes) {
  const response = fa.decodeResponse(fa.runFunction(bytes));
  const fatal = response.results?.find((r) => r.severity === 'SEVERITY_FATAL');
  if (fatal) throw new Error(`the benchmark request is invalid: ${fatal.message}`);
  const rendered = Object.keys(response.desired.resources).length;
  if (rendered !== n) throw new Error(`rendered ${rendered} of ${n}`);
  const calls = calibrate(bytes, 100);
  const perCall = [];
  for (let batch = 0; batch < 9; batch++) {
    const started = now();
    for (let i = 0; i < calls; i++) fa.runFunction(bytes);
    perCall.push((now() - started) / calls);
  }
  perCall.sort((a, b) => a - b);
  return { n, median: perCall[4], fastest: perCall[0], calls: calls * 9, requestBytes: bytes.length };
}

const wasm = readFileSync(path.join(root, 'pkg/function_artifactory_bg.wasm'));
console.log(`function-artifactory ${fa.version()} (wasm, Node ${process.version})`);
console.log(`wasm size: ${(wasm.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(1)} KiB gzipped`);
const requests = new Map([10, 100, 1000].map((n) => [n, request(n)]));
// Warm up: V8 compiles WebAssembly quickly first and optimizes it in the background.
for (const bytes of requests.values()) calibrate(bytes, 500);
for (const [n, bytes] of requests) {
  const r = bench(n, bytes);
  console.log(`runFunction, ${String(n).padStart(4)} repositories: ${r.median.toFixed(3)} ms per call `
    + `(median of 9 batches, fastest ${r.fastest.toFixed(3)}; ${r.calls} calls; request ${r.requestBytes} bytes)`);
}

// The advice for a claim too large for one composite, from the npm module (issue 47). On
// wasm32 `usize` is 32 bits, and the core multiplied a count of repositories by a size in it:
// the module advised "about 876 fit in one" where the server advised about 4,849. The claim and
// the words are those of tests/function/hostile_claims.rs
// (`the_advice_for_5000_repositories_is_the_one_every_face_gives`), which holds the native core
// to them; tests/component-host holds the component to the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
const fa = require(path.join(root, 'pkg'));

const DESCRIPTION = "Releases of the libraries of team one, built by CI from the main branch of each library's repository and promoted here once their tests pass; snapshots go to the snapshot repository, and nothing here is ever deleted by hand.";

const ADVICE = "- spec.repositories: the response would be about 4.6 MiB (4,840,000 bytes) for 5000 repositories: more than the 4.0 MiB (4,194,304 bytes) Crossplane reads (its function runner uses gRPC's default receive limit), so Crossplane would fail the call without saying why; fix: split the repositories over several composites: about 4332 fit in one";

test('5,000 repositories: the same advice as the server', () => {
  const repositories = Array.from({ length: 5000 }, (_, i) => ({
    name: `local-${String(i).padStart(5, '0')}`, rclass: 'local', packageType: 'maven', description: DESCRIPTION,
  }));
  const composite = {
    apiVersion: 'platform.example.org/v1alpha1',
    kind: 'XRepositories',
    metadata: {
      name: 'team1-repos-x7k2p',
      uid: '4f6c8f0e-0000-4000-8000-000000000001',
      labels: {
        'crossplane.io/claim-name': 'team1-repos',
        'crossplane.io/claim-namespace': 'team1',
        'crossplane.io/composite': 'team1-repos-x7k2p',
      },
    },
    spec: { repositories },
  };
  const response = fa.runFunctionJson({
    meta: { tag: 'test-tag', capabilities: ['CAPABILITY_CAPABILITIES', 'CAPABILITY_CONDITIONS'] },
    observed: { composite: { resource: composite } },
    desired: {},
  });
  const fatal = response.results.find((r) => r.severity === 'SEVERITY_FATAL');
  assert.ok(fatal, 'a fatal result');
  assert.equal(fatal.message.split('\n')[1], ADVICE);
});

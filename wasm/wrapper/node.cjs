// The npm module's entry for Node (pkg/function_artifactory.js, written by
// scripts/build-wasm.sh): the wasm-bindgen bindings (function_artifactory_glue.js), each call
// guarded. A failure inside the module (a WebAssembly trap, the engine's stack exhausted, a
// panic) leaves its instance unusable: every later call would fail ("memory access out of
// bounds"), even version(). After such a failure the call throws an Error and the next call
// runs on a fresh instance.
'use strict';

const glue = require.resolve('./function_artifactory_glue.js');
let bindings = require(glue);

/** A fresh instance: the bindings evaluated again, which instantiate the module anew. */
function reload() {
  delete require.cache[glue];
  bindings = require(glue);
}

/** Whether an error thrown by a call leaves the instance unusable: a trap; the engine's stack
 *  exhausted inside the module (a RangeError); or a panic, which the module's panic hook
 *  throws as an Error. The last two unwind the module's frames without restoring its own
 *  stack pointer. Errors the module returns (a request that does not decode, ...) leave it
 *  intact. */
function trapped(error) {
  return error instanceof WebAssembly.RuntimeError
    || error instanceof RangeError
    || (error instanceof Error && error.message.startsWith('function-artifactory failed unexpectedly'));
}

function guarded(name) {
  return function guardedCall(...args) {
    try {
      return bindings[name](...args);
    } catch (error) {
      if (!trapped(error)) throw error;
      reload();
      throw new Error(
        `function-artifactory: ${name} failed inside the WebAssembly module (${error.message}); ` +
          'the next call runs on a fresh instance',
        { cause: error },
      );
    }
  };
}

for (const [name, value] of Object.entries(bindings)) {
  module.exports[name] = typeof value === 'function' ? guarded(name) : value;
}

// The npm module's entry for browsers (pkg/web/function_artifactory.js, written by
// scripts/build-wasm.sh): the wasm-bindgen bindings (function_artifactory_glue.js), each call
// guarded. A failure inside the module (a WebAssembly trap, the engine's stack exhausted, a
// panic) leaves its instance unusable: every later call would fail ("memory access out of
// bounds"), even version(). After such a failure the call throws an Error and the next call
// runs on a spare instance, made ready beforehand from the same compiled module. An ES module
// is evaluated once, so the spare is a second copy of the bindings, imported under another URL
// (beside this file: a bundler that moves the bindings leaves no spare, and calls after a
// failure then throw until the page reloads).
import * as first from './function_artifactory_glue.js';

/** The bindings calls go to; undefined after a failure until a spare is ready. */
let current = first;
let spare;
/** Why the last spare instance could not be made, if it could not. */
let spareProblem;
let compiled;
let copies = 0;

/** The compiled module, from what the bindings' `init` takes (by default the .wasm file
 *  beside this one). */
async function compile(input) {
  let source = input;
  if (source !== null && typeof source === 'object' && Object.getPrototypeOf(source) === Object.prototype) {
    source = source.module_or_path;
  }
  if (source === undefined) source = new URL('./function_artifactory_bg.wasm', import.meta.url);
  if (source instanceof WebAssembly.Module) return source;
  if (typeof source === 'string' || source instanceof URL
    || (typeof Request === 'function' && source instanceof Request)) {
    source = fetch(source);
  }
  source = await source;
  if (typeof Response === 'function' && source instanceof Response) {
    if (!source.ok) throw new Error(`failed to fetch Wasm: ${source.status} ${source.url}`);
    source = await source.arrayBuffer();
  }
  return WebAssembly.compile(source);
}

/** Loads the module (as the bindings' `init`), then readies the spare instance. */
export default async function initialise(input) {
  compiled = await compile(input);
  const exports = first.initSync({ module: compiled });
  await readySpare();
  return exports;
}

/** As the bindings' `initSync`; the spare instance is readied in the background. */
export function initSync(input) {
  let source = input;
  if (source !== null && typeof source === 'object' && Object.getPrototypeOf(source) === Object.prototype) {
    source = source.module;
  }
  compiled = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
  const exports = first.initSync({ module: compiled });
  readySpare();
  return exports;
}

/** Readies a spare instance; when the current one failed meanwhile, the spare replaces it. */
async function readySpare() {
  if (compiled === undefined) return;
  copies += 1;
  const url = new URL(`./function_artifactory_glue.js?instance=${copies}`, import.meta.url);
  try {
    const bindings = await import(url.href);
    bindings.initSync({ module: compiled });
    if (current === undefined) {
      current = bindings;
      readySpare();
    } else {
      spare = bindings;
    }
  } catch (error) {
    spareProblem = error;
  }
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
  return (...args) => {
    if (current === undefined) {
      // A second failure before the spare was ready: a failed instance is never called.
      throw new Error(
        `function-artifactory: ${name}: the WebAssembly module is being instantiated afresh ` +
          'after a failure; call again shortly',
        { cause: spareProblem },
      );
    }
    try {
      return current[name](...args);
    } catch (error) {
      if (!trapped(error)) throw error;
      current = spare;
      spare = undefined;
      readySpare();
      throw new Error(
        `function-artifactory: ${name} failed inside the WebAssembly module (${error.message}); ` +
          'the next call runs on a fresh instance',
        { cause: error },
      );
    }
  };
}

// Every function of the bindings (wasm/test/traps.test.mjs checks that none is missing).
export const runFunction = guarded('runFunction');
export const runFunctionJson = guarded('runFunctionJson');
export const encodeRequest = guarded('encodeRequest');
export const decodeResponse = guarded('decodeResponse');
export const renderComposite = guarded('renderComposite');
export const version = guarded('version');
export const kinds = guarded('kinds');
export const start = guarded('start');
export const __failForTests = guarded('__failForTests');

//! A component host configured as function-wasm 1.x configures its engine (its `engine` crate,
//! read for this; docs/wasm-component.md, "Tested as the runtime runs it"): wasmtime with the
//! component model and its async ABI, the guest world checked when the component is
//! instantiated, WASI 0.3 and 0.2 both linked, nothing granted (no preopened directory, no
//! environment, no network), argv `["function"]`, standard output and error kept as the
//! runtime's log keeps them, a 512 KiB wasm stack, a memory ceiling, and an epoch deadline in
//! 10 ms ticks that covers instantiation as well as the call. A fresh store and instance for
//! every call. Fuel is turned on only to measure a call (about one unit per wasm instruction),
//! never to stop one: the runtime has none.
//!
//! [`Host::serve`] goes one step further and answers as the runtime's gRPC service does: a
//! response without `meta` gets one, and the guest's `err`, a trap or a missed deadline become
//! a fatal result.

use function_artifactory::proto::v1::{
    Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity,
};
use prost::Message;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{Accessor, Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

wasmtime::component::bindgen!({
    path: "wit/contract.wit",
    world: "function",
    imports: { default: trappable },
});

/// The repository's root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The component scripts/build-component.sh writes, or `COMPONENT` when set (relative to the
/// repository).
pub fn component_path() -> PathBuf {
    let path = std::env::var_os("COMPONENT").map_or_else(
        || PathBuf::from("target/wasmfn/function-artifactory.wasm"),
        PathBuf::from,
    );
    repository().join(path)
}

/// The memory a call may grow to, as the step's `limits.memory: 128Mi` in
/// docs/wasm-component.md narrows the runtime's ceiling.
pub const MEMORY_LIMIT: usize = 128 << 20;

/// The runtime's memory ceiling for a call when the step sets no `limits.memory`.
pub const RUNTIME_MEMORY_CEILING: usize = 512 << 20;

/// The runtime's wasm stack: wasmtime's default, which the runtime keeps.
pub const STACK_LIMIT: usize = 512 << 10;

/// The runtime's deadline for a call when the step sets no `limits.timeout`.
pub const RUNTIME_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the engine's epoch advances: a deadline is a whole number of these.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The arguments the runtime gives every guest.
pub const ARGV: [&str; 1] = ["function"];

/// The TTL the runtime puts in a response it makes or completes (its default `--ttl`).
pub const RUNTIME_TTL: Duration = Duration::from_secs(60);

/// What a step's `limits` give one call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The deadline, from before instantiation to the end of the call.
    pub timeout: Duration,
    /// The most memory the instance may grow to.
    pub memory: usize,
}

impl Limits {
    /// The step of docs/wasm-component.md: the runtime's default timeout, `memory: 128Mi`.
    pub const STEP: Limits = Limits {
        timeout: RUNTIME_TIMEOUT,
        memory: MEMORY_LIMIT,
    };

    /// A step without `limits`: the runtime's defaults.
    pub const RUNTIME_DEFAULTS: Limits = Limits {
        timeout: RUNTIME_TIMEOUT,
        memory: RUNTIME_MEMORY_CEILING,
    };

    /// The deadline in epoch ticks, at least one.
    fn ticks(self) -> u64 {
        let ticks = self
            .timeout
            .as_nanos()
            .div_ceil(EPOCH_TICK.as_nanos())
            .max(1);
        u64::try_from(ticks).unwrap_or(u64::MAX)
    }
}

/// One log line the guest wrote through the world's `log` import.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
    pub kv: Vec<(String, String)>,
}

/// What one call gave.
#[derive(Debug)]
pub struct Call {
    /// `run`'s answer: the response's bytes, or the guest's error string. A trap is an `Err`
    /// of [`Host::call`].
    pub answer: Result<Vec<u8>, String>,
    pub log: Vec<LogLine>,
    /// Fuel the call burnt, with instantiation for an instance's first call (one unit is about
    /// one wasm instruction).
    pub fuel: u64,
    /// Wall time to instantiate (zero for a later call on the same instance), and to run.
    pub instantiate: Duration,
    pub run: Duration,
    /// The most memory the instance held.
    pub peak_memory: usize,
    /// What the guest wrote to its standard output and error (the runtime's log).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The state of one store: WASI with nothing granted, the log lines, the memory limit.
struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
    log: Vec<LogLine>,
    memory: Memory,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl FunctionImports for Ctx {
    fn log(
        &mut self,
        level: LogLevel,
        message: String,
        kv: Vec<(String, String)>,
    ) -> wasmtime::Result<()> {
        self.log.push(LogLine { level, message, kv });
        Ok(())
    }
}

/// The memory limit, and the most memory the instance was granted.
struct Memory {
    limits: StoreLimits,
    peak: usize,
}

impl wasmtime::ResourceLimiter for Memory {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        if allowed {
            self.peak = self.peak.max(desired);
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }
}

/// A compiled component, the linker it is instantiated with, and the thread that advances the
/// engine's epoch.
pub struct Host {
    engine: Engine,
    component: Component,
    pre: FunctionPre<Ctx>,
    ticking: Arc<AtomicBool>,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::Relaxed);
    }
}

impl Host {
    /// Compiles the component and checks it against the world: its imports must be WASI (0.2
    /// or 0.3) and `log`, its export `run` of the contract's type.
    pub fn new(component: &[u8]) -> wasmtime::Result<Host> {
        let mut config = Config::new();
        config.wasm_component_model_async(true);
        config.concurrency_support(true);
        config.epoch_interruption(true);
        config.max_wasm_stack(STACK_LIMIT);
        config.native_unwind_info(false);
        config.wasm_backtrace_details(wasmtime::WasmBacktraceDetails::Disable);
        // A measurement only: every store gets more fuel than any call burns.
        config.consume_fuel(true);
        let engine = Engine::new(&config)?;
        let component = Component::new(&engine, component)?;
        let mut linker: Linker<Ctx> = Linker::new(&engine);
        // Both WASI generations, as the runtime links them: a guest's standard library may
        // import either.
        wasmtime_wasi::p3::add_to_linker(&mut linker)?;
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        Function::add_to_linker::<Ctx, HasSelf<Ctx>>(&mut linker, |ctx| ctx)?;
        let pre = FunctionPre::new(linker.instantiate_pre(&component)?)?;
        let ticking = Arc::new(AtomicBool::new(true));
        let ticker = (engine.clone(), Arc::clone(&ticking));
        std::thread::spawn(move || {
            let (engine, ticking) = ticker;
            while ticking.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        });
        Ok(Host {
            engine,
            component,
            pre,
            ticking,
        })
    }

    /// The names the component exports.
    pub fn export_names(&self) -> Vec<String> {
        self.component
            .component_type()
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    /// The component at [`component_path`], compiled once per test binary.
    pub fn shared() -> &'static Host {
        static HOST: std::sync::OnceLock<Host> = std::sync::OnceLock::new();
        HOST.get_or_init(|| {
            let path = component_path();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; build it with scripts/build-component.sh",
                    path.display()
                )
            });
            Host::new(&bytes).expect("the component compiles and satisfies the world")
        })
    }

    /// One call in a fresh store and instance under [`Limits::STEP`], as function-wasm makes
    /// one per request. A trap (a missed deadline is one) is an `Err`.
    pub fn call(&self, request: &[u8]) -> wasmtime::Result<Call> {
        self.call_with(request, Limits::STEP)
    }

    /// [`Host::call`] under other limits.
    pub fn call_with(&self, request: &[u8], limits: Limits) -> wasmtime::Result<Call> {
        let mut calls = self.run_on_one_instance(&[request], limits)?;
        Ok(calls.remove(0))
    }

    /// The response's bytes the runtime's gRPC service would answer for one call under
    /// `limits` of a module called `module` (see [`answer_as_the_runtime`]).
    pub fn serve(&self, module: &str, request: &[u8], limits: Limits) -> Vec<u8> {
        answer_as_the_runtime(module, request, limits, self.call_with(request, limits))
    }

    /// The requests called one after the other on one fresh instance, which function-wasm never
    /// does: a later call shows what a call costs once the instance holds what an earlier call
    /// built (the catalog, CEL's environment), the floor pre-initialisation aims at
    /// (BENCHMARKS.md). The first call's fuel and time include instantiation; a later call's
    /// `instantiate` is zero.
    pub fn calls_on_one_instance(&self, requests: &[&[u8]]) -> wasmtime::Result<Vec<Call>> {
        self.run_on_one_instance(requests, Limits::STEP)
    }

    fn run_on_one_instance(
        &self,
        requests: &[&[u8]],
        limits: Limits,
    ) -> wasmtime::Result<Vec<Call>> {
        // On a thread of its own: `render` calls this from inside its own async runtime.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .expect("a runtime on this thread");
                    runtime.block_on(self.call_async(requests, limits))
                })
                .join()
                .expect("the call's thread")
        })
    }

    async fn call_async(&self, requests: &[&[u8]], limits: Limits) -> wasmtime::Result<Vec<Call>> {
        // Nothing granted: no directory, no environment, no network; the runtime's argv; the
        // guest's standard output and error kept, as the runtime writes them to its log.
        let (stdout, stderr) = (
            MemoryOutputPipe::new(1 << 20),
            MemoryOutputPipe::new(1 << 20),
        );
        let wasi = WasiCtxBuilder::new()
            .args(&ARGV)
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .build();
        let ctx = Ctx {
            wasi,
            table: ResourceTable::new(),
            log: Vec::new(),
            memory: Memory {
                limits: StoreLimitsBuilder::new().memory_size(limits.memory).build(),
                peak: 0,
            },
        };
        let mut store = Store::new(&self.engine, ctx);
        store.limiter(|ctx| &mut ctx.memory);
        const FUEL: u64 = u64::MAX / 2;
        store.set_fuel(FUEL)?;
        // The deadline is set before the instance exists: instantiation counts against it.
        store.set_epoch_deadline(limits.ticks());

        let started = Instant::now();
        let instance = self.pre.instantiate_async(&mut store).await?;
        let mut instantiate = started.elapsed();
        let mut calls = Vec::with_capacity(requests.len());
        for request in requests {
            if !calls.is_empty() {
                store.set_epoch_deadline(limits.ticks());
            }
            let fuel_before = store.get_fuel()?;
            let started = Instant::now();
            let request = request.to_vec();
            let answer = store
                .run_concurrent(async |accessor: &Accessor<Ctx>| {
                    instance.call_run(accessor, request).await
                })
                .await??;
            let run = started.elapsed();
            let fuel = if calls.is_empty() { FUEL } else { fuel_before } - store.get_fuel()?;
            let data = store.data_mut();
            calls.push(Call {
                answer,
                log: std::mem::take(&mut data.log),
                fuel,
                instantiate: std::mem::take(&mut instantiate),
                run,
                peak_memory: data.memory.peak,
                stdout: stdout.contents().to_vec(),
                stderr: stderr.contents().to_vec(),
            });
        }
        Ok(calls)
    }
}

/// What the runtime's gRPC service answers for one call of module `module`: the guest's
/// response as it is, with `meta` (the request's tag and the runtime's TTL) added when the guest
/// left it out; and for the guest's `err`, a trap or a missed deadline, a response made from the
/// request (its desired state and context kept) with one fatal result that says which.
pub fn answer_as_the_runtime(
    module: &str,
    request: &[u8],
    limits: Limits,
    call: wasmtime::Result<Call>,
) -> Vec<u8> {
    let failure = match call {
        Ok(Call {
            answer: Ok(mut bytes),
            ..
        }) => {
            return match RunFunctionResponse::decode(bytes.as_slice()) {
                Ok(response) if response.meta.is_some() => bytes,
                Ok(_) => {
                    // Field 1, `meta`, appended: the guest's own bytes stay as they are.
                    let meta = response_meta(request);
                    prost::encoding::message::encode(1, &meta, &mut bytes);
                    bytes
                }
                Err(e) => fatal(
                    request,
                    format!("module {module} failed: cannot decode response: {e}"),
                ),
            };
        }
        Ok(Call {
            answer: Err(message),
            ..
        }) => format!("run returned an error: {message}"),
        Err(error) => match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => format!(
                "run failed: module exceeded its execution deadline ({:?})",
                limits.timeout
            ),
            Some(trap) => format!("run failed: trap: {trap}"),
            None => format!("run failed: {error}"),
        },
    };
    fatal(request, format!("module {module} failed: {failure}"))
}

fn response_meta(request: &[u8]) -> function_artifactory::proto::v1::ResponseMeta {
    let tag = RunFunctionRequest::decode(request)
        .ok()
        .and_then(|r| r.meta)
        .map(|m| m.tag)
        .unwrap_or_default();
    function_artifactory::proto::v1::ResponseMeta {
        tag,
        ttl: Some(prost_types::Duration {
            seconds: RUNTIME_TTL.as_secs() as i64,
            nanos: 0,
        }),
    }
}

/// The runtime's own response to `request`: its desired state and context kept, one fatal
/// result.
fn fatal(request: &[u8], message: String) -> Vec<u8> {
    let request = RunFunctionRequest::decode(request).unwrap_or_default();
    RunFunctionResponse {
        meta: Some(response_meta(&request.encode_to_vec())),
        desired: request.desired,
        context: request.context,
        results: vec![FnResult {
            severity: Severity::Fatal as i32,
            message,
            ..Default::default()
        }],
        ..Default::default()
    }
    .encode_to_vec()
}

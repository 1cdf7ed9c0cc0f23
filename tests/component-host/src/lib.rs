//! A component host as function-wasm is one: wasmtime with the component model and its async
//! ABI, the guest world checked when the component is instantiated, WASI 0.2 linked with
//! nothing granted (no preopened directory, no environment, no network, no arguments), a
//! fresh store and instance for every call, a memory limit and fuel.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::component::{Accessor, Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder};
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

/// The memory a call may grow to, as function-wasm's `limits.memory: 128Mi`.
pub const MEMORY_LIMIT: usize = 128 << 20;

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

/// A compiled component and the linker it is instantiated with.
pub struct Host {
    engine: Engine,
    component: Component,
    pre: FunctionPre<Ctx>,
}

impl Host {
    /// Compiles the component and checks it against the world: its imports must be WASI 0.2
    /// and `log`, its export `run` of the contract's type.
    pub fn new(component: &[u8]) -> wasmtime::Result<Host> {
        let mut config = Config::new();
        config.wasm_component_model_async(true);
        config.concurrency_support(true);
        config.consume_fuel(true);
        let engine = Engine::new(&config)?;
        let component = Component::new(&engine, component)?;
        let mut linker: Linker<Ctx> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        Function::add_to_linker::<Ctx, HasSelf<Ctx>>(&mut linker, |ctx| ctx)?;
        let pre = FunctionPre::new(linker.instantiate_pre(&component)?)?;
        Ok(Host {
            engine,
            component,
            pre,
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

    /// One call in a fresh store and instance, as function-wasm makes one per request. A trap,
    /// an exhausted memory limit or fuel is an `Err`.
    pub fn call(&self, request: &[u8]) -> wasmtime::Result<Call> {
        let mut calls = self.calls_on_one_instance(&[request])?;
        Ok(calls.remove(0))
    }

    /// The requests called one after the other on one fresh instance, which function-wasm never
    /// does: a later call shows what a call costs once the instance holds what an earlier call
    /// built (the catalog, CEL's environment), the floor pre-initialisation aims at
    /// (BENCHMARKS.md). The first call's fuel and time include instantiation; a later call's
    /// `instantiate` is zero.
    pub fn calls_on_one_instance(&self, requests: &[&[u8]]) -> wasmtime::Result<Vec<Call>> {
        // On a thread of its own: `render` calls this from inside its own async runtime.
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .expect("a runtime on this thread");
                    runtime.block_on(self.call_async(requests))
                })
                .join()
                .expect("the call's thread")
        })
    }

    async fn call_async(&self, requests: &[&[u8]]) -> wasmtime::Result<Vec<Call>> {
        let ctx = Ctx {
            // Nothing granted: no directory, no environment, no arguments, no network; stdio
            // goes nowhere.
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
            log: Vec::new(),
            memory: Memory {
                limits: StoreLimitsBuilder::new().memory_size(MEMORY_LIMIT).build(),
                peak: 0,
            },
        };
        let mut store = Store::new(&self.engine, ctx);
        store.limiter(|ctx| &mut ctx.memory);
        const FUEL: u64 = u64::MAX / 2;
        store.set_fuel(FUEL)?;

        let started = Instant::now();
        let instance = self.pre.instantiate_async(&mut store).await?;
        let mut instantiate = started.elapsed();
        let mut calls = Vec::with_capacity(requests.len());
        for request in requests {
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
            });
        }
        Ok(calls)
    }
}

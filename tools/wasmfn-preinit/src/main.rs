//! `wasmfn-preinit CORE OUT`: the core module of the component, pre-initialised.
//!
//! function-wasm makes a fresh instance for every call, so whatever a call builds before its
//! real work (the kind catalog, CEL's environment) every call builds again. This runs the
//! module's `wizer-initialize` export once, then writes the instance's memory and globals as
//! they are after it into the module's data (wasmtime-wizer's instrumentation and snapshot),
//! and removes the export: an instance of the output starts where the initialisation ended.
//!
//! The initialisation may call no import: every import is linked to a trap, so one that reads
//! the clock, a random seed or the environment fails the build, naming the import. That keeps
//! the output the same wherever and whenever it is built, and keeps a hash seed out of it: a
//! seed in the artifact would be the same in every instance, and anyone could build keys that
//! collide under it.
//!
//! It prints the fuel the initialisation burnt (about one unit a wasm instruction): what every
//! call no longer pays.

use std::future::Future;
use std::path::Path;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};
use wasmtime::error::Context;
use wasmtime::{bail, Config, Engine, Instance, Linker, Module, Result, Store, Val};
use wasmtime_wizer::{InstanceState, SnapshotVal, ValType, Wizer};

/// The export that prepares an instance (the component face, `src/component/mod.rs`).
const INIT_EXPORT: &str = "wizer-initialize";
/// The WASI reactor's constructor, which Wizer removes too: run first when a module has one.
const REACTOR_INIT: &str = "_initialize";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [core, out] = args.as_slice() else {
        bail!("usage: wasmfn-preinit CORE OUT");
    };
    let module = std::fs::read(core).with_context(|| format!("cannot read {core}"))?;
    let (prepared, fuel) =
        preinit(&module).with_context(|| format!("cannot pre-initialise {core}"))?;
    std::fs::write(out, &prepared).with_context(|| format!("cannot write {out}"))?;
    println!(
        "{}: {INIT_EXPORT} burnt {fuel} fuel; {} bytes, from {}",
        Path::new(out).display(),
        prepared.len(),
        module.len()
    );
    Ok(())
}

/// The module pre-initialised, and the fuel its initialisation burnt.
fn preinit(module: &[u8]) -> Result<(Vec<u8>, u64)> {
    let wizer = Wizer::new();
    let (context, instrumented) = wizer.instrument(module)?;

    let mut config = Config::new();
    config.consume_fuel(true);
    let engine = Engine::new(&config)?;
    let instrumented = Module::new(&engine, &instrumented)?;
    let mut linker: Linker<()> = Linker::new(&engine);
    linker.define_unknown_imports_as_traps(&instrumented)?;
    let mut store = Store::new(&engine, ());
    store.set_fuel(u64::MAX)?;
    let instance = linker.instantiate(&mut store, &instrumented)?;

    for name in [REACTOR_INIT, INIT_EXPORT] {
        let Some(func) = instance.get_func(&mut store, name) else {
            if name == INIT_EXPORT {
                bail!("the module does not export `{INIT_EXPORT}`");
            }
            continue;
        };
        func.typed::<(), ()>(&store)
            .with_context(|| format!("`{name}` is not a function without parameters or results"))?
            .call(&mut store, ())
            .with_context(|| {
                format!(
                    "`{name}` failed; it may call no import (the snapshot would keep what one \
                     gave: a time, a random seed)"
                )
            })?;
    }
    let fuel = u64::MAX - store.get_fuel()?;

    let mut initialised = Initialised {
        store: &mut store,
        instance,
    };
    let snapshot = ready(wizer.snapshot(&context, &mut initialised))??;
    Ok((snapshot, fuel))
}

/// The instance after initialisation, as Wizer reads it. Wizer asks only for the globals and
/// memories its instrumentation exported, so a missing one is a bug of Wizer's.
struct Initialised<'a> {
    store: &'a mut Store<()>,
    instance: Instance,
}

impl InstanceState for Initialised<'_> {
    async fn global_get(&mut self, name: &str, _: ValType) -> SnapshotVal {
        let global = self
            .instance
            .get_global(&mut *self.store, name)
            .unwrap_or_else(|| panic!("Wizer's instrumentation exports the global {name}"));
        match global.get(&mut *self.store) {
            Val::I32(value) => SnapshotVal::I32(value),
            Val::I64(value) => SnapshotVal::I64(value),
            Val::F32(bits) => SnapshotVal::F32(bits),
            Val::F64(bits) => SnapshotVal::F64(bits),
            Val::V128(value) => SnapshotVal::V128(value.as_u128()),
            other => panic!("Wizer snapshots numeric globals only, and {name} holds {other:?}"),
        }
    }

    async fn memory_contents(&mut self, name: &str, contents: impl FnOnce(&[u8]) + Send) {
        let memory = self
            .instance
            .get_memory(&mut *self.store, name)
            .unwrap_or_else(|| panic!("Wizer's instrumentation exports the memory {name}"));
        contents(memory.data(&*self.store));
    }
}

/// The value of a future that is ready at once: Wizer's snapshot is async for hosts that read
/// an instance asynchronously, and this one reads it synchronously.
fn ready<T>(future: impl Future<Output = T>) -> Result<T> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut TaskContext::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => Ok(value),
        Poll::Pending => bail!("the snapshot waited, yet this host reads the instance at once"),
    }
}

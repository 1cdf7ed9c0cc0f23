//! Helpers for the `render` tests: running the binary, golden files, and a
//! tiny gRPC function served on 127.0.0.1.
#![allow(dead_code)] // Each test file uses its own subset.

use function_artifactory::proto::v1::function_runner_service_server as v1_server;
use function_artifactory::proto::v1::{ResponseMeta, RunFunctionRequest, RunFunctionResponse};
use function_artifactory::proto::v1beta1::function_runner_service_server as v1beta1_server;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// What one run of the binary printed.
#[derive(Debug, Clone)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

/// Runs `function-artifactory render ARGS` in `dir`.
pub fn render_in(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_function-artifactory"))
        .arg("render")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().unwrap_or(-1),
    }
}

// ---- golden files ----

/// Every `*.args` file under `root`, sorted.
pub fn args_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "args") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The arguments in an `.args` file: whitespace-separated, `#` comments.
pub fn read_args(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("readable .args file");
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(|line| line.split_whitespace().map(str::to_string))
        .collect()
}

/// The golden file of a successful run (`<name>.golden.yaml`) and of a
/// failing one (`<name>.golden.stderr`).
pub fn golden_paths(args_file: &Path) -> (PathBuf, PathBuf) {
    let stem = args_file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("render");
    let folder = args_file.parent().unwrap_or(Path::new("."));
    (
        folder.join(format!("{stem}.golden.yaml")),
        folder.join(format!("{stem}.golden.stderr")),
    )
}

/// A failing run as its golden file holds it: the exit code, then stderr.
pub fn failure_text(run: &Run) -> String {
    format!("exit code: {}\n{}", run.code, run.stderr)
}

/// Runs one `.args` file and compares with (or, blessing, writes) its golden
/// file. Returns a description of the difference, if any.
pub fn check_golden(args_file: &Path, bless: bool) -> Option<String> {
    let folder = args_file.parent().expect("a folder");
    let args = read_args(args_file);
    let run = render_in(folder, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let (yaml, stderr) = golden_paths(args_file);
    let (path, actual, stale) = if run.code == 0 {
        (yaml, run.stdout.clone(), stderr)
    } else {
        if !run.stdout.is_empty() {
            return Some(format!(
                "{}: a failing run printed to stdout:\n{}",
                args_file.display(),
                run.stdout
            ));
        }
        (stderr, failure_text(&run), yaml)
    };
    if bless {
        std::fs::write(&path, &actual).expect("writable golden file");
        let _ = std::fs::remove_file(stale);
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    (expected != actual).then(|| {
        format!(
            "{} differs from {} (run with BLESS=1 to update)\n--- expected\n{expected}\n--- actual\n{actual}\n--- stderr\n{}",
            args_file.display(),
            path.display(),
            run.stderr
        )
    })
}

// ---- scenario folders ----

/// A fresh folder for one test's input files.
pub struct Scenario {
    pub dir: PathBuf,
}

impl Scenario {
    pub fn new(name: &str) -> Scenario {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("render")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scenario folder");
        Scenario { dir }
    }

    /// Writes a file into the folder.
    pub fn file(&self, name: &str, contents: &str) -> &Scenario {
        std::fs::write(self.dir.join(name), contents).expect("writable scenario file");
        self
    }

    pub fn render(&self, args: &[&str]) -> Run {
        render_in(&self.dir, args)
    }
}

// ---- a function served over gRPC ----

/// The `functions.yaml` of the pipeline scenarios: this function (run in process whatever its
/// runtime says) and `function-extra`, served by the test at `extra`'s address.
pub fn functions_yaml(extra: &TestFunction) -> String {
    format!(
        "\
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: function-artifactory
  annotations:
    render.crossplane.io/runtime: Development
spec:
  package: xpkg.example.io/org/function-artifactory:v0.1.0
---
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-extra
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: {}
spec:
  package: xpkg.example.io/org/function-extra:v1.0.0
",
        extra.address
    )
}

/// A response that starts from the request, as a well-behaved function's does: its tag, its
/// desired state and its context passed through.
pub fn respond_from(request: &RunFunctionRequest) -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request.meta.clone().unwrap_or_default().tag,
            ttl: None,
        }),
        desired: request.desired.clone(),
        context: request.context.clone(),
        ..Default::default()
    }
}

type Handler = Arc<dyn Fn(RunFunctionRequest) -> RunFunctionResponse + Send + Sync>;

/// A function served on 127.0.0.1 for the duration of a test; it answers
/// with `handler` and records every request.
pub struct TestFunction {
    pub address: SocketAddr,
    pub requests: Arc<Mutex<Vec<RunFunctionRequest>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Which protocol package the test function serves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Api {
    V1,
    V1beta1,
}

impl TestFunction {
    pub fn serve(
        handler: impl Fn(RunFunctionRequest) -> RunFunctionResponse + Send + Sync + 'static,
    ) -> TestFunction {
        TestFunction::serve_api(Api::V1, handler)
    }

    pub fn serve_api(
        api: Api,
        handler: impl Fn(RunFunctionRequest) -> RunFunctionResponse + Send + Sync + 'static,
    ) -> TestFunction {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let address = listener.local_addr().expect("an address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let service = Service {
            handler: Arc::new(handler),
            requests: requests.clone(),
        };
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                let router = match api {
                    Api::V1 => tonic::transport::Server::builder()
                        .add_service(v1_server::FunctionRunnerServiceServer::new(service)),
                    Api::V1beta1 => tonic::transport::Server::builder()
                        .add_service(v1beta1_server::FunctionRunnerServiceServer::new(service)),
                };
                let _ = router
                    .serve_with_incoming_shutdown(incoming, async {
                        let _ = stop.await;
                    })
                    .await;
            });
        });
        TestFunction {
            address,
            requests,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RunFunctionRequest> {
        self.requests.lock().expect("requests").clone()
    }
}

impl Drop for TestFunction {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Service {
    handler: Handler,
    requests: Arc<Mutex<Vec<RunFunctionRequest>>>,
}

impl Service {
    fn answer(&self, request: RunFunctionRequest) -> RunFunctionResponse {
        self.requests
            .lock()
            .expect("requests")
            .push(request.clone());
        (self.handler)(request)
    }
}

#[tonic::async_trait]
impl v1_server::FunctionRunnerService for Service {
    async fn run_function(
        &self,
        request: tonic::Request<RunFunctionRequest>,
    ) -> Result<tonic::Response<RunFunctionResponse>, tonic::Status> {
        Ok(tonic::Response::new(self.answer(request.into_inner())))
    }
}

#[tonic::async_trait]
impl v1beta1_server::FunctionRunnerService for Service {
    async fn run_function(
        &self,
        request: tonic::Request<RunFunctionRequest>,
    ) -> Result<tonic::Response<RunFunctionResponse>, tonic::Status> {
        Ok(tonic::Response::new(self.answer(request.into_inner())))
    }
}

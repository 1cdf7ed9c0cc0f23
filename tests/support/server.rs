//! The built server as a child process on loopback, clients for it, and certificates for mTLS.
#![allow(dead_code)] // Each test crate that includes `support` uses only some of these.

use super::requests::RequestBuilder;
use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use function_artifactory::proto::v1::{RequestMeta, RunFunctionRequest, RunFunctionResponse};
use prost::Message;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use serde_json::Value;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// The binary under test, built by cargo for the integration tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_function-artifactory");

/// How long a server may take to print its start line.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A running server. Dropping it kills the process if it is still running.
pub struct Server {
    child: Child,
    /// Where it listens: 127.0.0.1 and the port the kernel chose.
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts the server with `args` on 127.0.0.1, port 0, and waits for its start line. Port 0
    /// lets the kernel choose a free port, read back from the start line: no race with other
    /// tests for a port picked in advance.
    pub fn start(args: &[&str]) -> Server {
        Self::start_with_env(args, &[])
    }

    /// As [`Server::start`], with environment variables (TLS_SERVER_CERTS_DIR is unset unless
    /// given here, so the developer's environment cannot change the test).
    pub fn start_with_env(args: &[&str], env: &[(&str, &OsStr)]) -> Server {
        Self::start_program(Path::new(BIN), args, env)
    }

    /// As [`Server::start_with_env`], with another build of the function (such as the
    /// binary unpacked from the package image).
    pub fn start_program(program: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Server {
        Self::launch(&[program.as_os_str()], args, env)
    }

    /// As [`Server::start_program`], for a binary of another architecture run by a
    /// user-mode emulator (`qemu-aarch64 BINARY ARGS...`).
    pub fn start_emulated(emulator: &str, program: &Path, args: &[&str]) -> Server {
        Self::launch(&[OsStr::new(emulator), program.as_os_str()], args, &[])
    }

    /// As [`Server::start`], with the process's file descriptor limit (soft and hard) set to
    /// `limit` before it starts.
    pub fn start_with_fd_limit(args: &[&str], limit: u64) -> Server {
        use std::os::unix::process::CommandExt;
        let mut command = command(args, &[]);
        // SAFETY: between fork and exec only setrlimit runs, which is async-signal-safe and
        // touches no memory of the parent.
        unsafe {
            command.pre_exec(move || {
                let rlimit = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        Self::spawned(command)
    }

    /// Runs `launcher` (a program and the arguments that come before the server's own)
    /// and waits for the start line.
    fn launch(launcher: &[&OsStr], args: &[&str], env: &[(&str, &OsStr)]) -> Server {
        Self::spawned(command_for(launcher, args, env))
    }

    /// Spawns `command` with stderr collected and waits for the start line.
    fn spawned(mut command: Command) -> Server {
        let mut child = command
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the server");
        let log = collect_lines(child.stderr.take().expect("piped stderr"));
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log,
        };
        let start = server
            .wait_for_log(START_TIMEOUT, |line| line["message"] == "serving")
            .unwrap_or_else(|| panic!("no start line; log: {:#?}", server.log()));
        server.addr = start["address"]
            .as_str()
            .and_then(|a| a.parse().ok())
            .expect("the start line names the address");
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The CPU time the process has used, user and system, from /proc.
    pub fn cpu_time(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).expect("/proc stat");
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("a command name")
            .1
            .split_whitespace()
            .collect();
        // utime and stime, the 14th and 15th fields of the line (11th and 12th after the name).
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // SAFETY: sysconf reads a constant of the system.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        Duration::from_millis(ticks * 1000 / per_second)
    }

    /// The metrics listener's address, from the start line.
    pub fn metrics_address(&self) -> String {
        let start = self
            .wait_for_log(START_TIMEOUT, |line| line["message"] == "serving")
            .expect("the start line");
        start["metrics_address"]
            .as_str()
            .expect("a metrics address")
            .to_owned()
    }

    /// Sends a signal (libc::SIGTERM, libc::SIGINT) to this server only.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.pid()).expect("pid fits pid_t");
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        let result = unsafe { libc::kill(pid, signal) };
        assert_eq!(result, 0, "kill({pid}, {signal})");
    }

    /// The exit status, if the process ends within `within`.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The stderr lines so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// The first JSON log line that `matches`, waiting up to `within` for it.
    pub fn wait_for_log(
        &self,
        within: Duration,
        matches: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let found = self
                .log()
                .iter()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|line| matches(line));
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// `http://ADDR`, for an insecure server.
    pub fn http_uri(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs the server with `args` expecting it to stop on its own (a refused start); kills it and
/// panics if it is still running after 15 s. Returns the exit status and stderr.
pub fn run_to_exit(args: &[&str], env: &[(&str, &OsStr)]) -> (ExitStatus, String) {
    let mut child = command(args, env)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the server");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + START_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not stop on its own");
        }
        thread::sleep(Duration::from_millis(20));
    };
    (status, reader.join().expect("stderr reader"))
}

fn command(args: &[&str], env: &[(&str, &OsStr)]) -> Command {
    command_for(&[OsStr::new(BIN)], args, env)
}

fn command_for(launcher: &[&OsStr], args: &[&str], env: &[(&str, &OsStr)]) -> Command {
    let mut command = Command::new(launcher[0]);
    command
        .args(&launcher[1..])
        .args(["--address", "127.0.0.1:0"])
        .args(args)
        .env_remove("TLS_SERVER_CERTS_DIR")
        .env_remove("METRICS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // A port of its own for each server's metrics (the default, :8080, is one per machine).
    if !args.contains(&"--metrics-address") {
        command.args(["--metrics-address", "127.0.0.1:0"]);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// Reads lines in a thread (so the pipe never fills) into a shared list.
fn collect_lines(stream: impl Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

/// A RunFunction request with only a tag.
pub fn request(tag: &str) -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: tag.to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A plain-text channel to an insecure server.
pub async fn insecure_channel(server: &Server) -> Channel {
    endpoint(server.http_uri())
        .connect()
        .await
        .expect("connect to the insecure server")
}

/// The server on loopback (insecure) and a client for it: each call is also run through the
/// core, and the server must answer the core's bytes.
pub struct Function {
    _server: Server,
    client: FunctionRunnerServiceClient<Channel>,
}

impl Function {
    pub async fn start() -> Function {
        let server = Server::start(&["--insecure"]);
        let client = FunctionRunnerServiceClient::new(insecure_channel(&server).await);
        Function {
            _server: server,
            client,
        }
    }

    pub async fn call(&mut self, request: RequestBuilder) -> RunFunctionResponse {
        self.call_request(request.build()).await
    }

    /// [`Function::call`] of a request already built.
    pub async fn call_request(&mut self, request: RunFunctionRequest) -> RunFunctionResponse {
        let answered = self
            .client
            .run_function(request.clone())
            .await
            .expect("the server answers")
            .into_inner();
        let core = function_artifactory::run_function(&request);
        assert_eq!(
            answered.encode_to_vec(),
            core.encode_to_vec(),
            "the server answers the core's bytes"
        );
        answered
    }
}

/// A TLS channel trusting `ca_pem`, presenting `client` when given.
pub async fn tls_channel(
    server: &Server,
    ca_pem: &str,
    client: Option<&Pem>,
) -> Result<Channel, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca_pem));
    if let Some(client) = client {
        tls = tls.identity(Identity::from_pem(&client.cert, &client.key));
    }
    endpoint(format!("https://{}", server.addr))
        .tls_config(tls)?
        .connect()
        .await
}

fn endpoint(uri: String) -> Endpoint {
    Endpoint::from_shared(uri)
        .expect("a valid URI")
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
}

/// A certificate and its private key, PEM.
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// What an mTLS test needs: the server's directory (tls.crt, tls.key, ca.crt), the CA, a client
/// certificate of that CA, a client certificate of another CA, and an expired client certificate
/// of the CA.
pub struct Pki {
    pub dir: tempfile::TempDir,
    pub ca_pem: String,
    pub client: Pem,
    pub stranger: Pem,
    pub expired: Pem,
}

impl Pki {
    pub fn generate() -> Pki {
        let ca = issuer("function-artifactory test CA");
        let server = leaf(
            &ca,
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let client = leaf(&ca, &["crossplane"], ExtendedKeyUsagePurpose::ClientAuth);
        let other_ca = issuer("another CA");
        let stranger = leaf(
            &other_ca,
            &["crossplane"],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let expired = leaf_valid(
            &ca,
            &["crossplane"],
            ExtendedKeyUsagePurpose::ClientAuth,
            Some((2020, 2021)),
        );
        let dir = tempfile::tempdir().expect("a temporary directory");
        write(dir.path(), "tls.crt", &server.cert);
        write(dir.path(), "tls.key", &server.key);
        write(dir.path(), "ca.crt", &ca.pem());
        Pki {
            dir,
            ca_pem: ca.pem(),
            client,
            stranger,
            expired,
        }
    }
}

pub fn issuer(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().expect("a CA key");
    CertifiedIssuer::self_signed(params, key).expect("a self-signed CA")
}

pub fn leaf(
    ca: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> Pem {
    leaf_valid(ca, names, usage, None)
}

/// A leaf certificate, valid from the first of January of one year to that of another when
/// given (rcgen's default otherwise: 1975 to 4096).
fn leaf_valid(
    ca: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
    validity: Option<(i32, i32)>,
) -> Pem {
    let names: Vec<String> = names.iter().map(|&n| n.to_owned()).collect();
    let mut params = CertificateParams::new(names.clone()).expect("leaf parameters");
    if let Some((from, until)) = validity {
        params.not_before = rcgen::date_time_ymd(from, 1, 1);
        params.not_after = rcgen::date_time_ymd(until, 1, 1);
    }
    params
        .distinguished_name
        .push(DnType::CommonName, &names[0]);
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().expect("a leaf key");
    let cert = params.signed_by(&key, ca).expect("a leaf signed by the CA");
    Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

fn write(dir: &Path, name: &str, content: &str) {
    std::fs::write(dir.join(name), content).expect("write a certificate file");
}

/// GET `path` from the metrics listener over plain HTTP/1.1: the status code and the body.
pub async fn http_get(address: &str, path: &str) -> (u16, String) {
    http_get_within(address, path, Duration::from_secs(5)).await
}

/// [`http_get`], the answer required within `within`, on a connection of its own.
pub async fn http_get_within(address: &str, path: &str, within: Duration) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut text = String::new();
    tokio::time::timeout(within, stream.read_to_string(&mut text))
        .await
        .unwrap_or_else(|_| panic!("no answer within {within:?}"))
        .unwrap();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// Reads a raw HTTP/2 response body to its end, giving its flow-control window back as it goes.
pub async fn read_h2_body(body: &mut h2::RecvStream) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    data
}

/// Whether the server closes `connection` (end of stream or a reset) within `within`; what it
/// sent before is discarded. For the connections the server must drop: idle, slow or hostile.
pub async fn closed_within(connection: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 1024];
    let read_to_end = async {
        loop {
            match connection.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, read_to_end).await.is_ok()
}

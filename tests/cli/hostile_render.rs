//! Hostile files for `render` (issue 27, item 7): each gets a clear error in bounded time and
//! memory. The binary runs as a child process; its peak RSS comes from `wait4`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run of `render` gave: exit code, stderr, peak RSS, time.
struct Run {
    code: i32,
    stderr: String,
    peak_rss_kb: i64,
    took: Duration,
}

/// Generous bounds, in the debug build: each attack used to run for minutes or until memory ran
/// out, or to wait forever.
const TIME_BOUND: Duration = Duration::from_secs(20);
const MEMORY_BOUND_KB: i64 = 200 * 1024;

/// `function-artifactory render XR COMPOSITION FUNCTIONS` in `dir`; killed after [`TIME_BOUND`]
/// (the test then fails).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its peak RSS
fn render(dir: &Path, xr: &Path) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_function-artifactory"))
        .arg("render")
        .arg(xr)
        .args(["composition.yaml", "functions.yaml"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let started = Instant::now();
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, with pointers to the two locals above.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break (status, usage);
        }
        if started.elapsed() > TIME_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "render of {} still running after {TIME_BOUND:?}",
                xr.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Run {
        code,
        stderr: reader.join().expect("stderr reader"),
        peak_rss_kb: usage.ru_maxrss,
        took,
    }
}

/// A folder with the cluster example's Composition and Functions.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster");
    for file in ["composition.yaml", "functions.yaml"] {
        std::fs::copy(example.join(file), dir.path().join(file)).expect("copy an example file");
    }
    dir
}

/// Runs render on `xr` and checks the bounds and the error.
fn assert_refused(dir: &Path, xr: &Path, error: &str) {
    let run = render(dir, xr);
    println!(
        "{}: exit {} in {:.2} s, peak RSS {} kB\n{}",
        xr.display(),
        run.code,
        run.took.as_secs_f64(),
        run.peak_rss_kb,
        run.stderr
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains(error), "{}", run.stderr);
    assert!(
        run.peak_rss_kb < MEMORY_BOUND_KB,
        "peak RSS {} kB",
        run.peak_rss_kb
    );
}

/// Writes `name` in `dir`; its name, for `render` run in `dir`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::write(dir.join(name), text).expect("write a file");
    PathBuf::from(name)
}

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let dir = folder();
    // Ten levels of ten aliases each: 10^10 strings once expanded.
    let mut yaml =
        String::from("apiVersion: x/v1\nkind: X\nmetadata: {name: x}\nspec:\n  a0: &a0 [");
    yaml.push_str(&["\"lol\""; 10].join(","));
    yaml.push_str("]\n");
    for level in 1..10 {
        let aliases = vec![format!("*a{}", level - 1); 10].join(",");
        yaml.push_str(&format!("  a{level}: &a{level} [{aliases}]\n"));
    }
    let xr = write(dir.path(), "bomb.yaml", &yaml);
    // The YAML reader's alias rule: go-yaml's "document contains excessive aliasing".
    let run = render(dir.path(), &xr);
    println!("{}", run.stderr);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot load composite resource from \"bomb.yaml\""),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("yaml: document contains excessive aliasing"),
        "{}",
        run.stderr
    );
    assert!(run.peak_rss_kb < MEMORY_BOUND_KB, "{} kB", run.peak_rss_kb);
}

#[test]
fn dev_zero_given_as_a_file_is_refused() {
    let dir = folder();
    assert_refused(
        dir.path(),
        Path::new("/dev/zero"),
        "cannot load composite resource from \"/dev/zero\": cannot read composite resource file: /dev/zero is a character device: render reads YAML from regular files",
    );
}

#[test]
fn a_fifo_given_as_a_file_is_refused_without_waiting_for_a_writer() {
    let dir = folder();
    let fifo = dir.path().join("xr.yaml");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("a path");
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
    assert_refused(
        dir.path(),
        Path::new("xr.yaml"),
        "xr.yaml is a FIFO (named pipe): render reads YAML from regular files",
    );
}

#[test]
fn a_file_larger_than_16_mib_is_refused_unread() {
    let dir = folder();
    let huge = dir.path().join("huge.yaml");
    // Sparse: 1 GiB on paper, nothing on disk.
    std::fs::File::create(&huge)
        .and_then(|file| file.set_len(1 << 30))
        .expect("a sparse file");
    assert_refused(
        dir.path(),
        Path::new("huge.yaml"),
        "huge.yaml is 1073741824 bytes, more than the 16777216 bytes (16 MiB) render reads from one file",
    );
}

#[test]
fn a_deeply_nested_flow_sequence_is_refused_at_the_reader_s_depth_limit() {
    let dir = folder();
    // A million levels: the reader stops at its depth limit, after 129 of them, so neither the
    // parser's per-level work nor the nesting itself can take time or memory.
    let depth = 1_000_000;
    let yaml = format!(
        "apiVersion: x/v1\nkind: X\nspec: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let xr = write(dir.path(), "deep.yaml", &yaml);
    assert_refused(
        dir.path(),
        &xr,
        "collections nest more than 128 deep (render's limit)",
    );
}

#[test]
fn a_deeply_nested_flow_mapping_is_refused_in_bounded_time() {
    let dir = folder();
    let yaml = format!(
        "apiVersion: x/v1\nkind: X\nspec: {}{}\n",
        "{a: ".repeat(1_000),
        "}".repeat(1_000)
    );
    let xr = write(dir.path(), "deep.yaml", &yaml);
    assert_refused(
        dir.path(),
        &xr,
        "collections nest more than 128 deep (render's limit)",
    );
}

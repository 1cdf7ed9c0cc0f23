//! BENCHMARKS.md's top screen is what `scripts/bench-report.sh` wrote: the block between its
//! markers starts with the header the script writes (naming itself and the commit measured), and
//! holds every row of the report with a figure in each cell; the README's headline is the line
//! the script wrote with it.

use std::path::Path;

const BEGIN: &str = "<!-- bench-report: begin";
const END: &str = "<!-- bench-report: end";
const HEADER: &str = "Written by `scripts/bench-report.sh` at ";
/// What the block holds until the script first runs on a machine with CPU to spare: this one
/// line, which says so and which the script's first run replaces; the README's headline then
/// says so too.
const NOT_GENERATED: &str = "Not generated yet: ";
const HEADLINE_NOT_GENERATED: &str = "Measured: not yet (`scripts/bench-report.sh` has not run on this build; [BENCHMARKS.md](BENCHMARKS.md)).";

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines between the markers, or why there are none.
fn report_block(page: &str) -> Result<Vec<&str>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let begin = lines
        .iter()
        .position(|line| line.starts_with(BEGIN))
        .ok_or("no begin marker")?;
    let end = lines
        .iter()
        .position(|line| line.starts_with(END))
        .ok_or("no end marker")?;
    if end < begin {
        return Err("the end marker comes before the begin marker".into());
    }
    Ok(lines[begin + 1..end].to_vec())
}

/// Whether the block is the line that says the script has not run yet, alone.
fn not_generated(block: &[&str]) -> bool {
    matches!(block, [line] if line.starts_with(NOT_GENERATED))
}

/// What is wrong with a block, each problem once: an empty list when the script wrote it whole
/// or when it is the line that says the script has not run yet.
fn problems(block: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    if not_generated(block) {
        return problems;
    }
    match block.first().and_then(|line| line.strip_prefix(HEADER)) {
        Some(rest) => {
            let commit: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
            if commit.len() < 7 {
                problems.push(format!("the header names no commit: {rest}"));
            }
        }
        None => problems.push(format!("the block does not start with {HEADER:?}")),
    }
    let rows = [
        "| 10 | no |",
        "| 100 | no |",
        "| 10 | yes |",
        "| 100 | yes |",
        "| instructions per call, plain (callgrind) |",
        "| instructions per call, live schemas (callgrind) |",
        "| component (`scripts/build-component.sh`) |",
        "| npm module (`scripts/build-wasm.sh`) |",
    ];
    for row in rows {
        match block.iter().find(|line| line.starts_with(row)) {
            None => problems.push(format!("no row {row}")),
            Some(line) if line.split('|').any(|cell| cell.trim() == "-") => {
                problems.push(format!("a cell without a figure: {line}"))
            }
            Some(_) => {}
        }
    }
    if !block.iter().any(|line| line.starts_with("- ")) {
        problems.push("no goal line".into());
    }
    problems
}

#[test]
fn the_top_screen_is_the_report_script_s_whole() {
    let page = read("BENCHMARKS.md");
    let block = report_block(&page).unwrap_or_else(|why| panic!("BENCHMARKS.md: {why}"));
    let problems = problems(&block);
    assert!(
        problems.is_empty(),
        "BENCHMARKS.md's top screen was not written whole by scripts/bench-report.sh (run it):\n{}",
        problems.join("\n")
    );
    // The script writes the header the test reads.
    assert!(read("scripts/bench-report.sh").contains(HEADER));
}

#[test]
fn the_readme_headline_is_the_report_s() {
    let readme = read("README.md");
    let mut lines = readme.lines();
    lines
        .find(|line| line.starts_with("<!-- bench-report: headline"))
        .expect("README.md: no bench-report headline marker");
    let headline = lines.next().unwrap_or_default();
    let page = read("BENCHMARKS.md");
    if not_generated(&report_block(&page).unwrap_or_default()) {
        assert_eq!(
            headline, HEADLINE_NOT_GENERATED,
            "README.md's headline, before the first report"
        );
        return;
    }
    let commit = block_commit(&page);
    assert!(
        headline.starts_with("Measured: a call of 100 repositories takes ")
            && !headline.contains("  ")
            && headline.ends_with(&format!("([BENCHMARKS.md](BENCHMARKS.md), {commit})).")),
        "README.md's headline is not the one scripts/bench-report.sh wrote with BENCHMARKS.md's figures ({commit}): {headline}"
    );
}

/// The commit named by the block's header.
fn block_commit(page: &str) -> String {
    let block = report_block(page).unwrap_or_default();
    let header = block
        .first()
        .and_then(|line| line.strip_prefix(HEADER))
        .unwrap_or_default();
    header.split(',').next().unwrap_or_default().to_owned()
}

#[test]
fn a_block_written_by_hand_or_cut_short_fails() {
    assert!(report_block("no markers").is_err());
    assert!(report_block(&format!("{END}\n{BEGIN}")).is_err());
    let whole = [
        "Written by `scripts/bench-report.sh` at 3e5ca5e, 2026-11-29 08:10 UTC;",
        "| 10 | no | 30 us, 0.5 ms, 8.0 MB |",
        "| 100 | no | 200 us, 2.0 ms, 10.0 MB |",
        "| 10 | yes | 1 us, 1 ms, 1 MB |",
        "| 100 | yes | 1 us, 1 ms, 1 MB |",
        "| instructions per call, plain (callgrind) | 1 | 2 |",
        "| instructions per call, live schemas (callgrind) | 1 | 2 |",
        "| component (`scripts/build-component.sh`) | 1 | 1 | met |",
        "| npm module (`scripts/build-wasm.sh`) | 1 | 1 | met |",
        "- cold start <= 50 ms: at most 8.0 ms, met",
    ];
    assert_eq!(problems(&whole), Vec::<String>::new());
    let mut by_hand = whole.to_vec();
    by_hand[0] = "Figures of 3e5ca5e";
    assert_eq!(problems(&by_hand).len(), 1);
    let mut no_commit = whole.to_vec();
    no_commit[0] = "Written by `scripts/bench-report.sh` at HEAD";
    assert_eq!(problems(&no_commit).len(), 1);
    let missing_size: Vec<&str> = whole
        .iter()
        .copied()
        .filter(|l| !l.starts_with("| 100 | yes"))
        .collect();
    assert_eq!(problems(&missing_size), ["no row | 100 | yes |"]);
    let mut unmeasured = whole.to_vec();
    unmeasured[3] = "| 10 | yes | - | - |";
    assert_eq!(problems(&unmeasured).len(), 1);
    // The line that says the script has not run is accepted alone, never beside figures.
    let pending = ["Not generated yet: the machine was busy."];
    assert_eq!(problems(&pending), Vec::<String>::new());
    let mut pending_with_figures = whole.to_vec();
    pending_with_figures[0] = pending[0];
    assert_eq!(problems(&pending_with_figures).len(), 1);
}

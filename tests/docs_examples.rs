//! The examples in README.md and docs/*.md are run, so they cannot go stale.
//!
//! An example is a fenced block whose info string is `console`:
//!
//! ````text
//! ```console
//! $ ixbench run --size smoke --steps l.i0,l.x --out first
//! == l.i0: create tables (PK only), insert 10000 rows as fast as possible, 100 rows/commit
//! ...
//! results: first
//! ```
//! ````
//!
//! A line starting with `$ ` is a command (a trailing `\` continues it on the next line); the
//! lines after it, up to the next command or the end of the block, are what it printed (stdout
//! and stderr as a terminal shows them). Each block runs in a new temporary directory, its
//! commands one after the other through `sh` (so pipes and loops work), with the ixbench under
//! test first on the PATH. Every shown line must still be printed, in the order shown, compared
//! by its words: numbers are masked and white space is collapsed, so figures may change from run
//! to run but no word may. A shown line `...` stands for lines left out; a shown line that ends
//! in `...` must be the start of a printed line.
//!
//! What runs: every block calls ixbench (other commands beside it, such as `ls` or `head` of a
//! results file, are fine). A command that measures (`run`, `index`, `ddl`, `oltp`,
//! `timeseries`) must say `--size smoke` (or show the one-line error it is an example of), and
//! no `console` example may name a server target (`--target postgres`, `mysql://...`, `galera`,
//! ...; a one-line error such as a misspelt target is fine): a smoke run on a throwaway server
//! costs a minute and more on the 2-core CI machine, so such output is shown in ```` ```text ````
//! blocks, which say where it came from and are not run. The one exception is
//! `ixbench server start postgres|mariadb` (a few seconds): it runs when the server is
//! installed (skipped otherwise, a failure under CI=true), and every server an example started
//! is stopped and removed after its block, whatever happened. A command must exit 0 (3 is a
//! verdict of `compare` and `ab`, also accepted, and so is 5 of a `ddl` whose load missed its
//! rate: NO VERDICT), or non-zero when its shown output is an `ixbench: error:` line.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// The commands that measure, and so must run at `--size smoke` in an example.
const MEASURING: &[&str] = &["run", "index", "ddl", "oltp", "timeseries"];

/// Every command, each with a `console` example in the README and a page in docs/.
const COMMANDS: &[&str] = &[
    "run",
    "index",
    "ddl",
    "oltp",
    "timeseries",
    "pattern",
    "compare",
    "ab",
    "report",
    "merge",
    "server",
];

/// The longest a single example command may take before it is killed and reported.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);

/// One command of an example and the lines it is shown to print.
#[derive(Debug, Clone)]
struct Example {
    /// The command line as `sh` gets it (continuations joined).
    cmd: String,
    /// Where it is written (`docs/run.md:42`).
    place: String,
    /// The lines shown after it.
    shown: Vec<String>,
}

/// One `console` block: its commands run in order in one directory.
#[derive(Debug, Clone)]
struct Block {
    place: String,
    examples: Vec<Example>,
}

/// The `console` blocks of a Markdown text (`name` for the places).
fn blocks(name: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        if !(t.starts_with("```") && t.trim_start_matches('`').trim() == "console") {
            continue;
        }
        let mut block = Block {
            place: format!("{name}:{}", i + 1),
            examples: Vec::new(),
        };
        let mut continuing = false;
        for (j, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            if continuing {
                let ex = block.examples.last_mut().expect("a command goes on");
                let part = l.trim();
                continuing = part.ends_with('\\');
                ex.cmd.push(' ');
                ex.cmd.push_str(part.trim_end_matches('\\').trim_end());
            } else if let Some(cmd) = l.strip_prefix("$ ") {
                continuing = cmd.trim_end().ends_with('\\');
                block.examples.push(Example {
                    cmd: cmd.trim_end().trim_end_matches('\\').trim_end().to_string(),
                    place: format!("{name}:{}", j + 1),
                    shown: Vec::new(),
                });
            } else if let Some(ex) = block.examples.last_mut() {
                ex.shown.push(l.to_string());
            }
        }
        out.push(block);
    }
    out
}

/// A line's words: numbers not inside a word (`2200`, `0.036`, `3.46.0`, the `1` of `1s`)
/// become `#`, runs of white space one space; `qr100`, `p99`, `l.i0`, `pi1_pdc` stay as they
/// are.
fn words(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        let in_word = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i].is_ascii_digit() && !in_word {
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            while i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
                i += 1;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push('#');
        } else if c[i].is_whitespace() {
            while i < c.len() && c[i].is_whitespace() {
                i += 1;
            }
            out.push(' ');
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out.trim().to_string()
}

/// The first shown line not printed (in order), with the reason; `None` when all are.
fn first_missing(shown: &[String], printed: &str) -> Option<String> {
    let printed: Vec<String> = printed.lines().map(words).collect();
    let mut at = 0;
    for s in shown {
        let want = words(s);
        if want.is_empty() || want == "..." {
            continue;
        }
        let (want, prefix) = match want.strip_suffix("...") {
            Some(p) => (p.trim_end().to_string(), true),
            None => (want, false),
        };
        let found = printed[at..].iter().position(|p| {
            if prefix {
                p.starts_with(&want)
            } else {
                *p == want
            }
        });
        match found {
            Some(k) => at += k + 1,
            None => {
                let seen = printed[..at].iter().any(|p| {
                    if prefix {
                        p.starts_with(&want)
                    } else {
                        *p == want
                    }
                });
                let why = if seen {
                    "printed, but earlier than shown"
                } else {
                    "not printed"
                };
                return Some(format!("{why}: {s:?} (its words: {want:?})"));
            }
        }
    }
    None
}

/// The subcommands of ixbench a command line calls (`ixbench run ...`, `ab ... -- index ...`).
fn subcommands(cmd: &str) -> Vec<String> {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let after_ixbench = *t == "ixbench" || t.ends_with("/ixbench");
        let after_ab = *t == "--" && toks[..i].contains(&"ab");
        if after_ixbench || after_ab {
            if let Some(next) = toks.get(i + 1) {
                out.push(next.to_string());
            }
        }
    }
    out
}

/// Why an example may not run here (`None`: it may).
fn refused(ex: &Example) -> Option<String> {
    let subs = subcommands(&ex.cmd);
    let shows_error = ex.shown.iter().any(|l| l.starts_with("ixbench: error:"));
    if subs.iter().any(|s| MEASURING.contains(&s.as_str()))
        && !ex.cmd.contains("--size smoke")
        && !shows_error
    {
        return Some("a command that measures must run with --size smoke".into());
    }
    let server_target = ex
        .cmd
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| {
            w[0] == "--target"
                && !(w[1] == "null" || w[1] == "sqlite" || w[1].starts_with("sqlite:"))
        })
        || ex.cmd.contains("--target=");
    if server_target && !shows_error {
        return Some("a server target (its output belongs in a ```text block)".into());
    }
    None
}

/// The server kind an example starts with `ixbench server start KIND`, if any.
fn server_started(cmd: &str) -> Option<String> {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    toks.windows(4)
        .find(|w| w[0].ends_with("ixbench") && w[1] == "server" && w[2] == "start")
        .map(|w| w[3].to_string())
}

/// Run one command line in `dir` through `sh`, stderr into stdout; (exit status, output).
fn sh(dir: &Path, cmd: &str) -> (Option<i32>, String) {
    use std::os::unix::process::CommandExt;
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ixbench"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("binary in a directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{cmd}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("IXBENCH_PROGRESS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("sh starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if t0.elapsed() > COMMAND_LIMIT {
            // The whole process group: sh and the ixbench processes it started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGTERM) };
            std::thread::sleep(Duration::from_secs(5));
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, reader.join().unwrap_or_default())
}

/// `printed` with the system temp dir (TMPDIR) written as the documented `/tmp`: ixbench puts
/// its default data directories (`ixbench-postgres-...`) there, and the docs show `/tmp`.
fn as_documented(printed: &str) -> String {
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    let tmp = tmp.trim_end_matches('/');
    if tmp.is_empty() || tmp == "/tmp" {
        return printed.to_string();
    }
    printed.replace(&format!("{tmp}/ixbench-"), "/tmp/ixbench-")
}

/// Run a block; the problems found (empty: it is up to date), or `Err` when it is skipped.
fn run_block(b: &Block) -> Result<Vec<String>, String> {
    for ex in &b.examples {
        if let Some(kind) = server_started(&ex.cmd) {
            let k = match kind.as_str() {
                "postgres" => ixbench::server::ServerKind::Postgres,
                "mariadb" => ixbench::server::ServerKind::Mariadb,
                other => {
                    return Ok(vec![format!(
                        "{}: starts a {other} cluster: too long for an example",
                        ex.place
                    )])
                }
            };
            if let Err(e) = ixbench::server::check_installed(k) {
                return Err(format!("{}: {e:#}", ex.place));
            }
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("ixbench-docs-")
        .tempdir()
        .expect("temp dir");
    let mut problems = Vec::new();
    let mut started = Vec::new();
    for ex in &b.examples {
        let (status, printed) = sh(dir.path(), &ex.cmd);
        for l in printed.lines() {
            if let Some(d) = l.strip_prefix("stop with: ixbench server stop ") {
                started.push(d.trim().to_string());
            }
        }
        let shows_error = ex.shown.iter().any(|l| l.starts_with("ixbench: error:"));
        let verdict = subcommands(&ex.cmd)
            .iter()
            .any(|s| s == "compare" || s == "ab");
        // `ddl` says NO VERDICT (exit 5) when its load missed its rate, as a busy machine may
        // make a smoke-sized one do: a measurement, not a stale example.
        let ddl_no_verdict = subcommands(&ex.cmd).iter().any(|s| s == "ddl")
            && printed.contains("ixbench: ddl: NO VERDICT (");
        let ok = match status {
            None => false,
            Some(0) => !shows_error,
            Some(3) if verdict => !shows_error,
            Some(5) if ddl_no_verdict => !shows_error,
            Some(_) => shows_error,
        };
        let tail: Vec<&str> = printed.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        if !ok {
            problems.push(format!(
                "{}: `{}` exited {status:?}{}; its last lines:\n{}",
                ex.place,
                ex.cmd,
                if shows_error {
                    " (an error was shown)"
                } else {
                    ""
                },
                tail.join("\n")
            ));
            break;
        }
        if let Some(m) = first_missing(&ex.shown, &as_documented(&printed)) {
            problems.push(format!(
                "{}: `{}`: {m}; its last lines:\n{}",
                ex.place,
                ex.cmd,
                tail.join("\n")
            ));
        }
    }
    for d in started {
        let _ = sh(dir.path(), &format!("ixbench server stop '{d}' --remove"));
    }
    Ok(problems)
}

/// README.md and docs/*.md with their text, README first.
fn doc_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| PathBuf::from("docs").join(p.file_name().unwrap()))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).expect("readable");
            (n.display().to_string(), text)
        })
        .collect()
}

#[test]
fn every_example_still_prints_what_it_shows() {
    let all: Vec<Block> = doc_files().iter().flat_map(|(n, t)| blocks(n, t)).collect();
    assert!(
        all.len() >= COMMANDS.len(),
        "too few examples: {}",
        all.len()
    );
    let mut problems: Vec<String> = all
        .iter()
        .flat_map(|b| b.examples.iter())
        .filter_map(|ex| refused(ex).map(|why| format!("{}: `{}`: {why}", ex.place, ex.cmd)))
        .collect();
    problems.extend(
        all.iter()
            .filter(|b| b.examples.iter().all(|e| subcommands(&e.cmd).is_empty()))
            .map(|b| format!("{}: a console block that runs no ixbench command", b.place)),
    );
    assert!(
        problems.is_empty(),
        "examples that cannot run here:\n{}",
        problems.join("\n")
    );
    // Two blocks at a time: the machine has two cores, and each block is one process at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(Vec::new());
    let skipped = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(b) = all.get(i) else { break };
                let t0 = Instant::now();
                match run_block(b) {
                    Ok(p) => {
                        eprintln!(
                            "{}: {} command(s), {:.1} s, {}",
                            b.place,
                            b.examples.len(),
                            t0.elapsed().as_secs_f64(),
                            if p.is_empty() { "up to date" } else { "STALE" }
                        );
                        found.lock().unwrap().extend(p);
                    }
                    Err(why) => skipped.lock().unwrap().push(why),
                }
            });
        }
    });
    for why in skipped.into_inner().unwrap() {
        common::skip::<()>("docs_examples", &why);
    }
    problems.extend(found.into_inner().unwrap());
    assert!(
        problems.is_empty(),
        "{} stale example(s) (update the doc with the command's real output):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

#[test]
fn every_command_has_an_example_in_the_readme_and_a_page() {
    let files = doc_files();
    let readme = blocks(&files[0].0, &files[0].1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for c in COMMANDS {
        let in_readme = readme
            .iter()
            .flat_map(|b| b.examples.iter())
            .any(|e| subcommands(&e.cmd).iter().any(|s| s == c));
        assert!(
            in_readme,
            "README.md has no console example of `ixbench {c}`"
        );
        let page = format!("docs/{c}.md");
        let text = std::fs::read_to_string(root.join(&page))
            .unwrap_or_else(|_| panic!("{page} is missing"));
        let ran = blocks(&page, &text)
            .iter()
            .flat_map(|b| b.examples.iter())
            .any(|e| subcommands(&e.cmd).iter().any(|s| s == c));
        assert!(ran, "{page} has no console example of `ixbench {c}`");
    }
}

#[test]
fn the_temp_dir_is_shown_as_the_documented_tmp() {
    let tmp = std::env::temp_dir();
    let printed = format!(
        "datadir: {}\n",
        tmp.join("ixbench-postgres-1-2-3").display()
    );
    assert_eq!(
        as_documented(&printed),
        "datadir: /tmp/ixbench-postgres-1-2-3\n"
    );
    assert_eq!(as_documented("/elsewhere/x\n"), "/elsewhere/x\n");
}

#[test]
fn words_mask_figures_and_keep_names() {
    assert_eq!(
        words("l.i0     0.1        119235          0   ok"),
        "l.i0 # # # ok"
    );
    assert_eq!(
        words("== qr100: 87 ins/s, p99 24.591"),
        "== qr100: # ins/s, p99 #"
    );
    assert_eq!(
        words("ixbench 0.1.0 · sqlite 3.46.0"),
        "ixbench # · sqlite #"
    );
    assert_eq!(words("[ 1.009s ] thds: 1"), words("[ 1s ] thds: 4"));
    assert_eq!(
        words("pi1_pdc=0.3MB cache_size=-2000"),
        "pi1_pdc=#MB cache_size=-#"
    );
}

#[test]
fn a_changed_word_or_order_is_stale_and_a_changed_figure_is_not() {
    let printed = "== l.i0: insert 10000 rows\n-- l.i0 done in 0.1 s: 119235 ins/s\n   checks: ok (3 passed)\n";
    let shown = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        first_missing(
            &shown(&["== l.i0: insert 5 rows", "...", "   checks: ok (11 passed)"]),
            printed
        ),
        None
    );
    assert_eq!(
        first_missing(&shown(&["-- l.i0 done in 2.0 s..."]), printed),
        None
    );
    assert!(first_missing(&shown(&["   checks: FAILED (3 passed)"]), printed).is_some());
    assert!(first_missing(&shown(&["-- l.i0 done in 0.1 s: 119235 rows/s"]), printed).is_some());
    let m = first_missing(
        &shown(&["   checks: ok (3 passed)", "== l.i0: insert 1 rows"]),
        printed,
    );
    assert!(m.is_some_and(|m| m.starts_with("printed, but earlier")));
}

#[test]
fn blocks_join_continuations_and_keep_shown_lines() {
    let md = "text\n```console\n$ ixbench run --size smoke \\\n    --steps l.i0\nline one\n...\n$ ixbench report r\nreport: r/report.html\n```\n```text\n$ ixbench run\n```\n";
    let b = blocks("x.md", md);
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].examples.len(), 2);
    assert_eq!(
        b[0].examples[0].cmd,
        "ixbench run --size smoke --steps l.i0"
    );
    assert_eq!(b[0].examples[0].shown, vec!["line one", "..."]);
    assert_eq!(b[0].examples[0].place, "x.md:3");
    assert_eq!(b[0].examples[1].shown, vec!["report: r/report.html"]);
    let refuse = |cmd: &str| {
        refused(&Example {
            cmd: cmd.into(),
            place: String::new(),
            shown: vec![],
        })
    };
    assert!(refuse("ixbench run").is_some());
    assert!(refuse("ixbench run --size smoke --target postgres").is_some());
    let typo = Example {
        cmd: "ixbench run --target postgress".into(),
        place: String::new(),
        shown: vec!["ixbench: error: unknown target".into()],
    };
    assert!(refused(&typo).is_none());
    assert!(refuse("ixbench ab --side a: -- index --size smoke").is_none());
    assert!(refuse("ixbench ab --side a: -- index").is_some());
    assert!(refuse("ixbench run --size smoke --target sqlite:t.db").is_none());
    assert!(refuse("ls r; head -3 r/run.json").is_none());
}

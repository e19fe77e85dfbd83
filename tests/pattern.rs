//! `ixbench pattern`: the geek code of specs, inference from files and stdin (seed 000's
//! examples, generated streams), and bad input as one-line errors with a non-zero exit.

use crate::common;

use common::*;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Run `ixbench ARGS` with `input` on stdin.
fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ixbench starts");
    let mut stdin = child.stdin.take().unwrap();
    // the command may fail before reading everything: ignore a broken pipe
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn ok_stdout(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(o.status.success(), "failed: {err}");
    out
}

/// Seed 000's examples: the array starts as 1.0 .. 9.0 (`--existing 9`), then the inserts.
#[test]
fn seed_000_examples_from_stdin() {
    let cases = [
        ("1.5, 6.5, 1.7, 8.1, 0.0, 4.5", "pk=(inf)"),
        ("10.0, 11.0, 12.0", "pk=(nAsc:1, nRHS:1)"),
        ("0.0, -1.0, -2.0", "pk=(nDesc:1, nLHS:1)"),
        (
            "10.0, 0.0, -1.0, 11.0, 12.0, -2.0",
            "pk=(nAsc:1, nDesc:1, nLHS:1, nRHS:1)",
        ),
        ("8.1, 8.11, 8.111, 8.1111", "pk=(nAsc:1)"),
        ("7.9, 7.89, 7.889, 7.8889", "pk=(nDesc:1)"),
        ("8.1, 7.9, 8.11, 7.89, 8.111, 7.889", "pk=(nAsc:1, nDesc:1)"),
        ("8.1, 6.1, 8.11, 6.11, 8.111, 6.111", "pk=(nAsc:2)"),
    ];
    for (seq, want) in cases {
        let input = format!("1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0\n{seq}\n");
        let out = ok_stdout(&with_stdin(
            &["pattern", "infer", "--existing", "9"],
            input.as_bytes(),
        ));
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some(want), "{seq}: {out}");
        assert!(lines.next().unwrap().starts_with("confidence "), "{out}");
    }
}

/// Round trip through the CLI: `pattern gen SPEC | pattern infer` gives `pattern code SPEC`.
#[test]
fn gen_then_infer_gives_the_code_of_the_spec() {
    for spec in [
        "asc",
        "desc",
        "lr",
        "inf",
        "streams:4",
        "streams:3asc+2desc",
        "asc+inf@5%",
    ] {
        let keys = ok_stdout(&ixbench(&[
            "pattern", "gen", spec, "-n", "20000", "--seed", "5",
        ]));
        assert_eq!(keys.lines().count(), 20000);
        let code = ok_stdout(&ixbench(&["pattern", "code", &format!("pdc={spec}")]));
        let out = ok_stdout(&with_stdin(
            &["pattern", "infer", "--name", "pdc", "--output", "json"],
            keys.as_bytes(),
        ));
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(
            v["geek_code"].as_str().unwrap(),
            code.trim(),
            "{spec}: {out}"
        );
        let c = v["confidence"].as_f64().unwrap();
        assert!(c > 0.5 && c <= 1.0, "{spec}: {out}");
        assert_eq!(v["keys"], 20000);
    }
}

#[test]
fn csv_files_with_a_header_and_a_column() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("keys.csv");
    let mut s = String::from("id,ts,device\n");
    for i in 0..300 {
        // id right growing, ts text ascending, device cycling over 3 values (3 streams)
        s.push_str(&format!(
            "{i},\"2026-11-23 10:{:02}:{:02}\",{}\n",
            i / 60,
            i % 60,
            i % 3
        ));
    }
    std::fs::write(&f, s).unwrap();
    let p = f.to_str().unwrap();
    let out = ok_stdout(&ixbench(&["pattern", "infer", p, "--header"]));
    assert!(out.starts_with("id=(nAsc:1, nRHS:1)\n"), "{out}");
    let out = ok_stdout(&ixbench(&[
        "pattern",
        "infer",
        p,
        "--header",
        "--column",
        "2",
        "--compare",
        "text",
    ]));
    assert!(out.starts_with("ts=(nAsc:1, nRHS:1)\n"), "{out}");
    let out = ok_stdout(&ixbench(&[
        "pattern", "infer", p, "--header", "--column", "3",
    ]));
    assert!(out.starts_with("device=(nAsc:3, nRHS:1)\n"), "{out}");
}

#[test]
fn codes_of_specs_and_of_the_insert_benchmark() {
    let out = ok_stdout(&ixbench(&[
        "pattern",
        "code",
        "pk=asc",
        "s1=inf",
        "s2=streams:3asc+2desc",
    ]));
    assert_eq!(out, "pk=(nAsc:1, nRHS:1) s1=(inf) s2=(nAsc:3, nDesc:2)\n");
    let out = ok_stdout(&ixbench(&["pattern", "code", "lr", "--long"]));
    assert_eq!(out, "pk=(nAsc:1, nDesc:1, nLHS:1, nRHS:1)\n");
    let out = ok_stdout(&ixbench(&["pattern", "code", "--iibench", "--rate", "100"]));
    assert_eq!(
        out,
        "pk=(nAsc:1, nRHS:1) marketsegment=(inf) registersegment=(inf) pdc=(nAsc:500, nRHS:1)\n"
    );
    let out = ok_stdout(&ixbench(&[
        "pattern",
        "code",
        "--iibench",
        "--rate",
        "5000",
        "--secondary-indexes",
        "1",
    ]));
    assert_eq!(out, "pk=(nAsc:1, nRHS:1) marketsegment=(inf)\n");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let missing = tmp.path().join("missing.txt");
    let cases: Vec<(Vec<&str>, &[u8], &str)> = vec![
        (vec!["pattern", "code", "up"], b"", "unknown part \"up\""),
        (vec!["pattern", "code", "asc+asc"], b"", "given twice"),
        (vec!["pattern", "code", "streams:0"], b"", "no streams"),
        (vec!["pattern", "code", "=asc"], b"", "empty index name"),
        (
            vec!["pattern", "gen", "streams:9", "-n", "5"],
            b"",
            "more than the 5 keys",
        ),
        (
            vec![
                "pattern",
                "gen",
                "streams:4",
                "-n",
                "1000",
                "--min",
                "0",
                "--max",
                "100",
            ],
            b"",
            "too small",
        ),
        (vec!["pattern", "infer"], b"", "empty input"),
        (vec!["pattern", "infer"], b"\n  \n", "empty input"),
        (
            vec!["pattern", "infer", empty.to_str().unwrap()],
            b"",
            "empty input",
        ),
        (
            vec!["pattern", "infer", missing.to_str().unwrap()],
            b"",
            "cannot read",
        ),
        (
            vec!["pattern", "infer"],
            b"1\n2\nabc\n4\n",
            "line 3: \"abc\" is not a number",
        ),
        (vec!["pattern", "infer"], b"1 2 NaN\n", "is not a number"),
        (
            vec!["pattern", "infer", "--existing", "3"],
            b"1 2 3\n",
            "existing",
        ),
        (
            vec!["pattern", "infer", "--column", "2"],
            b"1,2\n3\n",
            "line 2: no column 2",
        ),
        (
            vec!["pattern", "infer", "--format", "text", "--column", "2"],
            b"1\n",
            "needs CSV",
        ),
        (
            vec!["pattern", "infer", "--noise", "0.7"],
            b"1\n",
            "--noise",
        ),
        (vec!["pattern", "infer"], b"5 6\n", "too few keys (2)"),
    ];
    for (args, input, want) in cases {
        let o = with_stdin(&args, input);
        let err = assert_one_line_error(&o);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Keys already in the index (`--existing`) between a stream's inserts do not split it
/// (issue 19): generated streams with an existing key next to every other insert are still
/// the spec's streams, and a right-growing stream above a populated index still grows at the
/// right end.
#[test]
fn existing_keys_the_streams_pass_do_not_split_them() {
    let gen = |spec: &str, n: &str| {
        ok_stdout(&ixbench(&[
            "pattern", "gen", spec, "-n", n, "--seed", n, // the random keys differ by n
        ]))
    };
    let infer = |existing: &str, observed: &str| {
        let n = existing.lines().count().to_string();
        let out = ok_stdout(&with_stdin(
            &["pattern", "infer", "--existing", &n],
            format!("{existing}{observed}").as_bytes(),
        ));
        out.lines().next().unwrap().to_string()
    };
    let streams = gen("streams:3asc+2desc", "20000");
    let between: String = streams
        .lines()
        .step_by(2)
        .map(|k| format!("{}\n", k.parse::<i64>().unwrap() + 1))
        .collect();
    assert_eq!(infer(&between, &streams), "pk=(nAsc:3, nDesc:2)");
    let populated = gen("inf", "5000");
    assert_eq!(
        infer(&populated, &gen("asc", "5000")),
        "pk=(nAsc:1, nRHS:1)"
    );
    assert_eq!(infer(&populated, &gen("inf", "20000")), "pk=(inf)");
}

/// A key file saved by a Windows editor (a UTF-8 byte-order mark, CRLF line ends) reads as the
/// same file without them, as text and as CSV (issue 29).
#[test]
fn a_key_file_with_a_byte_order_mark_and_crlf_reads_as_without() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut csv = String::from("id,device\n");
    for i in 0..300 {
        text.push_str(&format!("{i}\n"));
        csv.push_str(&format!("{i},{}\n", i % 3));
    }
    for (name, plain, args) in [
        ("keys.txt", text, vec![]),
        ("keys.csv", csv, vec!["--header", "--column", "2"]),
    ] {
        let unix = tmp.path().join(format!("unix-{name}"));
        let windows = tmp.path().join(format!("windows-{name}"));
        std::fs::write(&unix, &plain).unwrap();
        std::fs::write(&windows, format!("\u{feff}{}", plain.replace('\n', "\r\n"))).unwrap();
        let infer = |f: &std::path::Path| {
            let mut a = vec!["pattern", "infer", f.to_str().unwrap()];
            a.extend(args.iter().copied());
            ok_stdout(&ixbench(&a))
        };
        assert_eq!(infer(&windows), infer(&unix), "{name}");
    }
}

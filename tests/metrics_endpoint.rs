//! The live view (`--metrics-listen`): a real SQLite run scraped during the run with a plain
//! HTTP GET over a TcpStream; the scrapes pass `promtool check metrics` (Debian's `prometheus`
//! package; with CI=true a missing promtool fails); the counters only rise and the last
//! scrape's counts equal run.json's totals (`run`'s steps added up; an `oltp` run's
//! transactions and statements), also as a real Prometheus (Debian's, started by the test on
//! loopback) stored them and gives them back through its HTTP API; a scraper that asks for
//! OpenMetrics (every other scrape here, and Prometheus by default) gets OpenMetrics text
//! (Prometheus's metadata then has the units); the endpoint is gone when the command ends;
//! the processes of a `--client-count` run carry one run label and their own client label; a
//! port in use is a one-line error before anything runs.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::*;

/// Start `ixbench ARGS` (with `--metrics-listen 127.0.0.1:0`) and return it with the address
/// it printed (`metrics: http://ADDR/metrics`); the rest of its stdout is drained by a thread
/// and returned by the receiver when the process closes it.
fn spawn_with_endpoint(args: &[&str]) -> (Child, SocketAddr, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ixbench"))
        .args(args)
        .args(["--metrics-listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("ixbench starts");
    let stdout = child.stdout.take().unwrap();
    let (addr_tx, addr_rx) = mpsc::channel();
    let (all_tx, all_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(a) = line
                .strip_prefix("metrics: http://")
                .and_then(|r| r.strip_suffix("/metrics"))
            {
                let _ = addr_tx.send(a.parse::<SocketAddr>().expect("an address"));
            }
            all.push_str(&line);
            all.push('\n');
        }
        let _ = all_tx.send(all);
    });
    let addr = match addr_rx.recv_timeout(Duration::from_secs(60)) {
        Ok(a) => a,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no `metrics: http://ADDR/metrics` line: {:?}",
                all_rx.recv()
            );
        }
    };
    (child, addr, all_rx)
}

/// GET /metrics with a plain TcpStream: the body, or `None` when nothing listens.
fn scrape(addr: SocketAddr) -> Option<String> {
    scrape_as(addr, false)
}

/// Prometheus 2.x's Accept header (OpenMetrics first).
const ACCEPT_OPENMETRICS: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// GET /metrics, asking for OpenMetrics when `om` (Prometheus's Accept header) and for nothing
/// in particular otherwise; checks the Content-Type answered: OpenMetrics 1.0.0 text (checked
/// by [`openmetrics_ok`]) or Prometheus text 0.0.4.
fn scrape_as(addr: SocketAddr, om: bool) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let accept = if om {
        format!("Accept: {ACCEPT_OPENMETRICS}\r\n")
    } else {
        String::new()
    };
    s.write_all(
        format!("GET /metrics HTTP/1.1\r\nHost: ixbench\r\n{accept}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let (head, body) = resp.split_once("\r\n\r\n")?;
    // A request that came as the command ended and the endpoint stopped is dropped unanswered
    // (tiny_http answers 500 with no body): no scrape.
    if head.starts_with("HTTP/1.1 500") && body.is_empty() {
        return None;
    }
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let want = if om {
        "content-type: application/openmetrics-text; version=1.0.0"
    } else {
        "content-type: text/plain; version=0.0.4"
    };
    assert!(head.to_ascii_lowercase().contains(want), "{head}");
    if om {
        openmetrics_ok(body);
    }
    Some(body.to_string())
}

/// OpenMetrics text as the spec has it (what ixbench writes of it): ends with `# EOF`; a
/// counter's family is named without `_total` and its samples with it; a family named in
/// seconds has `# UNIT NAME seconds`; every sample belongs to the family declared above it.
fn openmetrics_ok(text: &str) {
    if text.is_empty() {
        return;
    }
    assert!(text.ends_with("# EOF\n"), "no # EOF at the end:\n{text}");
    let mut family: Option<(String, String)> = None;
    let mut units = std::collections::BTreeSet::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(
                !(kind == "counter" && name.ends_with("_total")),
                "counter family {name} named with _total"
            );
            family = Some((name.to_string(), kind.to_string()));
        } else if let Some(rest) = l.strip_prefix("# UNIT ") {
            let (name, unit) = rest.split_once(' ').unwrap();
            assert!(name.ends_with(&format!("_{unit}")), "{l}");
            units.insert(name.to_string());
        } else if !l.starts_with('#') {
            let name = l.split(['{', ' ']).next().unwrap();
            let (fam, kind) = family.as_ref().expect("a sample before any # TYPE");
            let suffixes: &[&str] = match kind.as_str() {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                "summary" => &["", "_sum", "_count"],
                _ => &[""],
            };
            assert!(
                suffixes.iter().any(|x| name == format!("{fam}{x}")),
                "{name} under the {kind} family {fam}"
            );
            if fam.ends_with("_seconds") {
                assert!(units.contains(fam), "{fam} without # UNIT");
            }
        }
    }
}

/// The samples of an exposition: `name{labels}` -> value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (series, v) = l.rsplit_once(' ').expect("a sample line");
            (series.to_string(), v.parse::<f64>().expect("a number"))
        })
        .collect()
}

/// The value of the one series of `name` whose labels include every `name="value"` of `with`.
fn value(s: &BTreeMap<String, f64>, name: &str, with: &[&str]) -> f64 {
    let hits: Vec<f64> = s
        .iter()
        .filter(|(k, _)| k.starts_with(&format!("{name}{{")) && with.iter().all(|w| k.contains(w)))
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(hits.len(), 1, "{name} {with:?}: {hits:?}");
    hits[0]
}

/// The value of label `label` in a series key (`name{a="x",label="y"}` -> `y`), if it has one.
fn label_of<'a>(key: &'a str, label: &str) -> Option<&'a str> {
    let pat = format!("{label}=\"");
    let from = key
        .match_indices(&pat)
        .map(|(i, _)| i)
        .find(|&i| i > 0 && matches!(key.as_bytes()[i - 1], b'{' | b','))?
        + pat.len();
    Some(&key[from..from + key[from..].find('"')?])
}

/// The phases `ixbench_in_progress` named for `step`, scrape after scrape, each run of one
/// phase once (empty phases, between the load's windows and the point's set-up or checks,
/// left out).
fn phases_of(scrapes: &[String], step: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in scrapes {
        for k in samples(t)
            .into_keys()
            .filter(|k| k.starts_with("ixbench_in_progress{"))
        {
            if label_of(&k, "step") != Some(step) {
                continue;
            }
            let ph = label_of(&k, "phase").unwrap_or_else(|| panic!("no phase label: {k}"));
            if !ph.is_empty() && out.last().map(String::as_str) != Some(ph) {
                out.push(ph.to_string());
            }
        }
    }
    out
}

/// `promtool check metrics` on `text`: fails on a parse error or a lint finding. Returns false
/// when promtool is not installed (outside CI; with CI=true that fails).
fn promtool_ok(text: &str) -> bool {
    assert!(!text.trim().is_empty(), "an empty exposition");
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(_) => {
            return skip::<()>(
                "metrics_endpoint",
                "promtool not installed (Debian's prometheus package)",
            )
            .is_some()
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text_of(&o);
    assert!(
        o.status.success() && out.trim().is_empty() && err.trim().is_empty(),
        "promtool check metrics: {out}{err}\n--- text:\n{text}"
    );
    true
}

fn text_of(o: &std::process::Output) -> (String, String) {
    text(o)
}

/// Scrape every 20 ms until the process exits; the scrapes, in order.
fn scrape_until_exit(child: &mut Child, addr: SocketAddr, limit: Duration) -> Vec<String> {
    let t0 = Instant::now();
    let mut got = Vec::new();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success(), "ixbench failed: {st}");
            return got;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run took longer than {limit:?}");
        }
        // Every other scrape asks for OpenMetrics.
        if let Some(t) = scrape_as(addr, got.len() % 2 == 1) {
            if !t.is_empty() {
                got.push(t);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The counters of one exposition (the series of `_total`, `_bucket`, `_count`, `_sum`).
fn counters(s: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    s.iter()
        .filter(|(k, _)| {
            let name = k.split('{').next().unwrap();
            name.ends_with("_total")
                || name.ends_with("_bucket")
                || name.ends_with("_count")
                || name.ends_with("_sum")
        })
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

const RUN: &[&str] = &[
    "run",
    "--target",
    "sqlite",
    "--size",
    "smoke",
    "--steps",
    "l.i0,l.x,l.i1,qr100",
    "--query-seconds",
    "2",
    "--interval",
    "0.2",
];

#[test]
fn a_run_is_scraped_live_and_ends_at_run_json_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("live-run");
    let mut args = RUN.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let (mut child, addr, stdout) = spawn_with_endpoint(&args);
    assert!(addr.ip().is_loopback(), "{addr}");
    let scrapes = scrape_until_exit(&mut child, addr, Duration::from_secs(300));
    let stdout = stdout.recv().unwrap();
    assert!(stdout.contains("results: "), "{stdout}");
    // The command has ended: nothing listens any more.
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "the endpoint outlived the command"
    );

    let parsed: Vec<BTreeMap<String, f64>> = scrapes.iter().map(|t| samples(t)).collect();
    let during: Vec<usize> = (0..parsed.len())
        .filter(|&i| {
            parsed[i]
                .keys()
                .any(|k| k.starts_with("ixbench_step_interval{"))
        })
        .collect();
    assert!(
        during.len() >= 5,
        "{} scrapes with a step in progress of {}",
        during.len(),
        parsed.len()
    );
    // Every series carries the process's labels.
    let labels = [
        "run=\"live-run\"",
        "command=\"run\"",
        "workload=\"iibench\"",
        "target_kind=\"sqlite\"",
        "client=\"0\"",
    ];
    for s in &parsed {
        for k in s.keys() {
            assert!(labels.iter().all(|l| k.contains(l)), "{k}");
        }
    }
    // The step in progress, as the command told it (also between interval lines).
    let mut in_progress = std::collections::BTreeSet::new();
    for s in &parsed {
        for k in s.keys().filter(|k| k.starts_with("ixbench_in_progress{")) {
            let from = k.find("step=\"").unwrap() + 6;
            in_progress.insert(k[from..from + k[from..].find('"').unwrap()].to_string());
        }
    }
    assert!(in_progress.contains("qr100"), "{in_progress:?}");
    for st in &in_progress {
        assert!(
            ["l.i0", "l.x", "l.i1", "qr100"].contains(&st.as_str()),
            "{st}"
        );
    }
    // promtool (Prometheus text only): the first scrapes with a step, one in the middle and
    // the last; every scrape of OpenMetrics passed openmetrics_ok.
    assert!(
        scrapes.iter().any(|t| t.ends_with("# EOF\n")),
        "no OpenMetrics scrape"
    );
    let mid = during[during.len() / 2];
    for i in [during[0], mid, parsed.len() - 1] {
        let i = (i..parsed.len())
            .chain((0..i).rev())
            .find(|&i| !scrapes[i].ends_with("# EOF\n"))
            .unwrap();
        if !promtool_ok(&scrapes[i]) {
            break;
        }
    }
    // Counters never fall, and do rise during the run.
    for w in parsed.windows(2) {
        let (a, b) = (counters(&w[0]), counters(&w[1]));
        for (k, v) in &a {
            let now = b.get(k).unwrap_or_else(|| panic!("{k} went away"));
            assert!(now >= v, "{k}: {v} -> {now}");
        }
    }
    let ins = |s: &BTreeMap<String, f64>| value(s, "ixbench_rows_total", &["kind=\"insert\""]);
    let first = &parsed[during[0]];
    let last = parsed.last().unwrap();
    assert!(ins(last) > ins(first), "{} -> {}", ins(first), ins(last));

    // The last scrape equals run.json's totals, added over the steps.
    let run = run_json(&out);
    let steps = assert_all_ok(&run);
    for (k, kind) in ["insert", "delete", "query"].iter().enumerate() {
        let sum = |field: &str| -> f64 {
            steps
                .iter()
                .map(|s| s["totals"][field][k].as_u64().unwrap_or(0) as f64)
                .sum()
        };
        let with = [format!("kind=\"{kind}\"")];
        let with: Vec<&str> = with.iter().map(String::as_str).collect();
        assert_eq!(
            value(last, "ixbench_operations_total", &with),
            sum("ops"),
            "{kind}"
        );
        assert_eq!(
            value(last, "ixbench_rows_total", &with),
            sum("rows"),
            "{kind}"
        );
        assert_eq!(
            value(last, "ixbench_retries_total", &with),
            sum("retries"),
            "{kind}"
        );
        // The histogram counts every operation (and never-started one) once.
        assert_eq!(
            value(last, "ixbench_latency_seconds_count", &with),
            sum("ops") + sum("never_started"),
            "{kind}"
        );
    }
    assert!(value(last, "ixbench_rows_total", &["kind=\"insert\""]) > 0.0);
    assert_eq!(
        value(last, "ixbench_intervals_total", &[]),
        intervals(&out).len() as f64
    );
    // The last interval is the last step's last line.
    let lines = intervals(&out);
    let l = lines.last().unwrap();
    assert_eq!(
        value(last, "ixbench_step_interval", &["step=\"qr100\""]),
        l["n"].as_f64().unwrap()
    );
    let q = value(
        last,
        "ixbench_interval_operations_per_second",
        &["kind=\"query\""],
    );
    assert!(
        (q - l["i_qps"].as_f64().unwrap()).abs() < 1e-6 * q.max(1.0),
        "{q} {l}"
    );
    assert!(value(last, "ixbench_client_cpu_seconds_total", &["mode=\"user\""]) > 0.0);
    // qr100's writers are paced: a backlog is known.
    assert!(value(last, "ixbench_backlog", &[]) >= 0.0);
}

/// A transaction workload (`ixbench oltp`): its transactions and statements by class, scraped
/// live, end at run.json's totals; the series say the command and the workload.
#[test]
fn a_transaction_workload_ends_at_its_run_json_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("live-oltp");
    let (mut child, addr, _) = spawn_with_endpoint(&[
        "oltp",
        "--target",
        "sqlite",
        "--size",
        "smoke",
        "--out",
        out.to_str().unwrap(),
    ]);
    let scrapes = scrape_until_exit(&mut child, addr, Duration::from_secs(300));
    let last = samples(scrapes.last().expect("a scrape"));
    promtool_ok(
        scrapes
            .iter()
            .rev()
            .find(|t| !t.ends_with("# EOF\n"))
            .unwrap(),
    );
    for k in last.keys() {
        assert!(
            k.contains("command=\"oltp\"") && k.contains("workload=\"oltp_read_write\""),
            "{k}"
        );
    }
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let t = &run["oltp"][0]["totals"];
    let n = |f: &str| t[f].as_u64().unwrap() as f64;
    assert!(n("txns") > 0.0);
    assert_eq!(value(&last, "ixbench_transactions_total", &[]), n("txns"));
    assert_eq!(
        value(
            &last,
            "ixbench_latency_seconds_count",
            &["kind=\"transaction\""]
        ),
        n("txns") + n("never_started")
    );
    for (class, f) in [("read", "reads"), ("write", "writes"), ("other", "other")] {
        let with = format!("class=\"{class}\"");
        assert_eq!(
            value(&last, "ixbench_statements_total", &[&with]),
            n(f),
            "{class}"
        );
    }
    assert_eq!(
        value(&last, "ixbench_transaction_errors_total", &[]),
        n("errors")
    );
}

/// Two processes of one `--client-count 2` run, scraped side by side: one run label, their own
/// client labels.
#[test]
fn the_parts_of_a_run_have_one_run_and_their_own_client_label() {
    let tmp = tempfile::tempdir().unwrap();
    let mut parts = Vec::new();
    for id in ["0", "1"] {
        let out = tmp.path().join(format!("part{id}"));
        let args = [
            "run",
            "--target",
            "sqlite",
            "--size",
            "smoke",
            "--steps",
            "l.i0,l.x,qr100",
            "--query-seconds",
            "2",
            "--interval",
            "0.2",
            "--client-count",
            "2",
            "--client-id",
            id,
            "--out",
            out.to_str().unwrap(),
        ];
        parts.push(spawn_with_endpoint(&args));
    }
    let mut seen = Vec::new();
    let t0 = Instant::now();
    // Scrape both until each has shown a step in progress.
    while seen.len() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no step in progress"
        );
        seen.clear();
        for (_, addr, _) in &parts {
            if let Some(t) = scrape(*addr).filter(|t| t.contains("ixbench_step_interval{")) {
                seen.push(t);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (mut child, _, _) in parts {
        assert!(child.wait().unwrap().success());
    }
    let label = |t: &str, name: &str| -> String {
        let k = samples(t)
            .into_keys()
            .find(|k| k.starts_with("ixbench_rows_total{"))
            .unwrap();
        let from = k.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        k[from..from + k[from..].find('"').unwrap()].to_string()
    };
    assert_eq!(label(&seen[0], "client"), "0");
    assert_eq!(label(&seen[1], "client"), "1");
    let run = label(&seen[0], "run");
    assert_eq!(run.len(), 32, "{run}");
    assert_eq!(run, label(&seen[1], "run"));
}

/// A port in use: one line naming the option and the address, before anything runs (no
/// results directory).
#[test]
fn a_busy_port_is_a_one_line_error_before_anything_runs() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = ixbench(&[
        "run",
        "--target",
        "sqlite",
        "--size",
        "smoke",
        "--out",
        out.to_str().unwrap(),
        "--metrics-listen",
        &addr,
    ]);
    let err = assert_one_line_error(&o);
    assert!(
        err.contains("--metrics-listen") && err.contains(&addr),
        "{err}"
    );
    assert!(!Path::new(&out).exists(), "a results directory was made");
}

/// An address that is not one: a usage error (exit status 2) at parsing.
#[test]
fn a_bad_address_is_a_usage_error() {
    let o = ixbench(&["run", "--metrics-listen", "127.0.0.1:notaport"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("--metrics-listen"), "{:?}", text(&o));
}

/// A TCP port on 127.0.0.1 that is free now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Prometheus server the test started; killed when dropped.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET `path` of a local HTTP server (HTTP/1.0: no chunked answer): status line and body.
fn http_get(port: u16, path: &str) -> Option<(String, String)> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let (head, body) = resp.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// A PromQL instant query through Prometheus's HTTP API: (labels, value) of each series.
fn promql(port: u16, query: &str) -> Vec<(serde_json::Value, f64)> {
    let enc: String = query
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let (status, body) = http_get(port, &format!("/api/v1/query?query={enc}")).expect("an answer");
    assert!(status.contains(" 200"), "{status}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let value = r["value"][1].as_str().unwrap().parse::<f64>().unwrap();
            (r["metric"].clone(), value)
        })
        .collect()
}

/// A real Prometheus (Debian's package, started here on loopback) scrapes a run every 0.5 s;
/// what it stored, read back through its HTTP API, matches run.json: the run waits for the
/// scrape that sees its last interval.
#[test]
fn a_real_prometheus_stores_the_run_s_totals() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        skip::<()>(
            "metrics_endpoint::a_real_prometheus_stores_the_run_s_totals",
            "prometheus not installed (Debian's prometheus package)",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (ix_port, prom_port) = (free_port(), free_port());
    let config = tmp.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  \
             - job_name: ixbench\n    static_configs:\n      - targets: [\"127.0.0.1:{ix_port}\"]\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(tmp.path().join("prometheus.log")).unwrap();
    let _prom = Prometheus(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                tmp.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("prometheus starts"),
    );
    let t0 = Instant::now();
    while http_get(prom_port, "/-/ready").is_none_or(|(s, _)| !s.contains(" 200")) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prometheus not ready: {}",
            std::fs::read_to_string(tmp.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Ready is not scraping yet: wait until it has tried the (not yet listening) target once.
    while !http_get(prom_port, "/api/v1/targets")
        .is_some_and(|(_, b)| b.contains("\"health\":\"down\""))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "prometheus never scraped"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let out = tmp.path().join("live-prom");
    let listen = format!("127.0.0.1:{ix_port}");
    let mut args = RUN.to_vec();
    args.extend(["--out", out.to_str().unwrap(), "--metrics-listen", &listen]);
    let o = ixbench(&args);
    assert!(o.status.success(), "{:?}", text(&o));
    let run = run_json(&out);
    let steps = assert_all_ok(&run);

    // The stored series: the last sample of each (range selection passes over the staleness
    // marker written when the endpoint went away).
    for (k, kind) in ["insert", "delete", "query"].iter().enumerate() {
        for (metric, field) in [
            ("ixbench_rows_total", "rows"),
            ("ixbench_operations_total", "ops"),
        ] {
            let want: f64 = steps
                .iter()
                .map(|s| s["totals"][field][k].as_u64().unwrap_or(0) as f64)
                .sum();
            let got = promql(
                prom_port,
                &format!("last_over_time({metric}{{kind=\"{kind}\"}}[10m])"),
            );
            assert_eq!(got.len(), 1, "{metric} {kind}: {got:?}");
            let (labels, v) = &got[0];
            assert_eq!(*v, want, "{metric} {kind}");
            assert_eq!(labels["job"], "ixbench");
            assert_eq!(labels["run"], "live-prom");
            assert_eq!(labels["command"], "run");
            assert_eq!(labels["client"], "0");
        }
    }
    // Prometheus asked for OpenMetrics and read it so: the families' units are in its
    // metadata (Prometheus text has no units), and a counter's family has no _total.
    let (status, body) = http_get(prom_port, "/api/v1/metadata").expect("an answer");
    assert!(status.contains(" 200"), "{status}: {body}");
    let meta: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let unit_of = |name: &str| meta["data"][name][0]["unit"].as_str().map(str::to_string);
    assert_eq!(
        unit_of("ixbench_latency_seconds").as_deref(),
        Some("seconds"),
        "not scraped as OpenMetrics: {body}"
    );
    assert_eq!(
        meta["data"]["ixbench_operations"][0]["type"], "counter",
        "{body}"
    );
    assert!(
        meta["data"].get("ixbench_operations_total").is_none(),
        "{body}"
    );
    // The Grafana dashboard's queries run on what it stored.
    dashboard_queries_run(prom_port);
    // Prometheus saw the run go: more than one distinct insert count over the run.
    let changes = promql(
        prom_port,
        "changes(ixbench_rows_total{kind=\"insert\"}[10m])",
    );
    assert!(changes[0].1 >= 1.0, "{changes:?}");
}

/// Every measuring command's live view has what a person watching it looks for: the labels
/// of the process (run, command, workload, target kind, client), the step in progress, the
/// client's CPU and the interval figures; `ddl`'s open-loop load (at `--rate`) its backlog.
/// (`run` and `oltp` are checked above, a `--client-count` run's parts in
/// the_parts_of_a_run_have_one_run_and_their_own_client_label.)
#[test]
fn every_measuring_command_shows_its_step_labels_and_client_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str], &[&str]); 3] = [
        (
            "ddl",
            "oltp_read_write",
            &crate::ddl::QUICK,
            &["ixbench_backlog"],
        ),
        ("index", "index", &[], &[]),
        (
            "timeseries",
            "timeseries",
            &[
                "--devices",
                "20",
                "--metrics",
                "2",
                "--ticks-per-partition",
                "5",
                "--keep-partitions",
                "3",
                "--rows-per-commit",
                "10",
                "--threads",
                "2",
            ],
            &["ixbench_transactions_total"],
        ),
    ];
    // The sample names all three served, for the dashboard's queries.
    let mut served = std::collections::BTreeSet::new();
    for (command, workload, extra, more) in cases {
        let out = tmp.path().join(command);
        let mut args = vec![
            command,
            "--target",
            "sqlite",
            "--size",
            "smoke",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (mut child, addr, _) = spawn_with_endpoint(&args);
        let scrapes = scrape_until_exit(&mut child, addr, Duration::from_secs(300));
        let names: std::collections::BTreeSet<String> = scrapes
            .iter()
            .flat_map(|t| samples(t).into_keys())
            .collect();
        let labels = [
            format!("run=\"{command}\""),
            format!("command=\"{command}\""),
            format!("workload=\"{workload}\""),
            "target_kind=\"sqlite\"".to_string(),
            "client=\"0\"".to_string(),
        ];
        for k in &names {
            assert!(
                labels.iter().all(|l| k.contains(l.as_str())),
                "{command}: {k}"
            );
        }
        served.extend(
            names
                .iter()
                .map(|k| k.split('{').next().unwrap().to_string()),
        );
        let has = |name: &str| names.iter().any(|k| k.starts_with(&format!("{name}{{")));
        for name in [
            "ixbench_in_progress",
            "ixbench_client_cpu_seconds_total",
            "ixbench_step_elapsed_seconds",
            "ixbench_interval_operations_per_second",
            "ixbench_latency_seconds_bucket",
        ]
        .iter()
        .chain(more)
        {
            assert!(has(name), "{command}: no {name} in {names:#?}");
        }
        assert!(
            names
                .iter()
                .any(|k| k.starts_with("ixbench_in_progress{") && !k.contains("step=\"\"")),
            "{command}: no step named"
        );
        if command == "ddl" {
            // The point's phase, in the words of the report's windows, in their order: the
            // baseline, the DDL running (during), the catch-up when the backlog took an
            // interval or more to drain, after.
            let seen = phases_of(&scrapes, "point 1/1");
            let order = ["baseline", "during", "catch-up", "after"];
            let rank = |p: &String| {
                order
                    .iter()
                    .position(|o| o == p)
                    .unwrap_or_else(|| panic!("phase {p:?} is none of {order:?}: {seen:?}"))
            };
            assert!(
                seen.windows(2).all(|w| rank(&w[0]) < rank(&w[1])),
                "phases out of order: {seen:?}"
            );
            for p in ["baseline", "during", "after"] {
                assert!(seen.iter().any(|s| s == p), "no {p} phase seen: {seen:?}");
            }
        }
    }
    // docs/grafana/ixbench.json asks only for what the endpoint serves.
    let exprs = dashboard_queries();
    assert!(exprs.len() >= 8, "{exprs:?}");
    for e in &exprs {
        let names = metric_names(e);
        assert!(!names.is_empty(), "a query naming no ixbench metric: {e}");
        for n in names {
            assert!(
                served.contains(&n),
                "{e}: {n} is not served; served: {served:#?}"
            );
        }
    }
}

/// The PromQL of docs/grafana/ixbench.json: every panel's targets' `expr` and the template
/// variables' queries (the file must parse as JSON).
fn dashboard_queries() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana/ixbench.json");
    let text = std::fs::read_to_string(&path).expect("docs/grafana/ixbench.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    assert_eq!(v["title"], "ixbench");
    let mut out = Vec::new();
    for p in v["panels"].as_array().expect("panels") {
        let targets = p["targets"].as_array().expect("a panel's targets");
        assert!(!targets.is_empty(), "{}", p["title"]);
        for t in targets {
            out.push(t["expr"].as_str().expect("an expr").to_string());
        }
    }
    for var in v["templating"]["list"].as_array().expect("templating") {
        let q = &var["query"];
        out.push(q["query"].as_str().or(q.as_str()).unwrap().to_string());
    }
    out
}

/// The ixbench metric names a PromQL expression reads (`ixbench_...` words).
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("ixbench_") {
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + word.len()..];
        out.push(word);
    }
    out
}

/// The dashboard's queries as Prometheus runs them (`$run` all runs, `$__rate_interval` 1m):
/// each is valid PromQL (status success) over what a real Prometheus stored.
fn dashboard_queries_run(prom_port: u16) {
    for e in dashboard_queries()
        .iter()
        .filter(|e| !e.starts_with("label_values"))
    {
        let q = e.replace("$run", ".*").replace("$__rate_interval", "1m");
        promql(prom_port, &q);
    }
}

//! The live view of a measuring command (`--metrics-listen ADDR`): the meter's figures as
//! Prometheus text (exposition format 0.0.4), served over HTTP at `/metrics` while the command
//! runs, for the dashboards people keep next to their database's exporters. A scraper whose
//! `Accept` header asks for OpenMetrics (`application/openmetrics-text`, as Prometheus does by
//! default) gets OpenMetrics text 1.0.0 instead ([`openmetrics`]): counter families named
//! without `_total`, `# UNIT seconds` on the families in seconds, `# EOF` at the end.
//!
//! Nothing here is on the hot path: the interval reporter ([`super::reporter`]) hands each
//! interval's line, detail and merged histograms to [`publish`] once per interval, on its own
//! thread; [`publish`] adds them to the run's cumulative counts and renders the whole text
//! once, and the HTTP thread serves the last rendered text (an `Arc<str>` swapped under a
//! mutex). So every figure is the meter's (no second count), the counters only grow within a
//! run, and after the last interval they equal the totals in run.json. Between two intervals a
//! scrape sees the same text.
//!
//! Every series carries the labels of the process: `run` (the results directory's name, or for
//! the processes of a `--client-count` run the run key they all derive alike), `command`,
//! `workload`, `target_kind` and `client` (`--client-id`, 0 for a single process), so the
//! processes of one run scraped side by side add up with `sum without (client)`.
//!
//! The server is `tiny_http` on its own thread, bound before the command starts anything (a
//! port in use is a one-line error) and stopped when the [`Endpoint`] is dropped at the end of
//! the command (also after Ctrl-C, which ends the command the ordinary way).

use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::deadline::{Deadline, Since};

use super::histogram::IIBENCH_BUCKETS_US;
use super::interval::{IntervalDetail, IntervalLine};
use super::meter::{KindHists, Totals, TxnTotals};
use super::sys::ProcSnapshot;

/// The port `--metrics-listen` means when only a host is given (the one registered for
/// OpenTelemetry's Prometheus exporter is 9464; ixbench takes it as its default too).
pub const DEFAULT_PORT: u16 = 9464;

/// `--metrics-listen`: `PORT`, `:PORT` and `HOST` alone listen on loopback
/// (`127.0.0.1:PORT`, port [`DEFAULT_PORT`] when none is given); any other address only when
/// written out (`0.0.0.0:9464`, `[::]:9464`, `192.0.2.7:9464`). Port 0 takes a free port
/// (printed at the start).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    let bad = || {
        format!("{s:?} is not an address to listen on (e.g. :9464, 127.0.0.1:9464, 0.0.0.0:9464)")
    };
    if t.is_empty() {
        return Err(bad());
    }
    if let Some(port) = t
        .strip_prefix(':')
        .or(Some(t).filter(|t| t.bytes().all(|b| b.is_ascii_digit())))
    {
        let port: u16 = port.parse().map_err(|_| bad())?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = t
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<std::net::IpAddr>()
    {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    // A host name (`localhost:9464`, `localhost`): its first address.
    let with_port = if t.contains(':') {
        t.to_string()
    } else {
        format!("{t}:{DEFAULT_PORT}")
    };
    with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(bad)
}

/// The labels every series of this process carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Labels {
    /// The run's id: the results directory's name, or the run key the processes of a
    /// `--client-count` run share.
    pub run: String,
    /// `run`, `ddl`, `index`, `oltp`, `timeseries`.
    pub command: String,
    /// The workload (`iibench`, `oltp_read_write`, ...), else the command's name.
    pub workload: String,
    /// `sqlite`, `postgres`, `mysql`, `null`, ...
    pub target_kind: String,
    /// `--client-id` (0 for a single process).
    pub client: u64,
}

/// Latency kinds: the three operation kinds and whole transactions.
const KINDS: [&str; 4] = ["insert", "delete", "query", "transaction"];

/// The last interval, as published.
#[derive(Debug, Clone, Default)]
struct Last {
    step: String,
    line: Option<IntervalLine>,
    /// Its own counts.
    totals: Totals,
    /// p50, p90, p99, p99.9, max per latency kind, microseconds (`None`: none completed).
    quantiles: [Option<[u64; 5]>; 4],
}

/// The run so far.
#[derive(Debug, Default)]
struct State {
    labels: Labels,
    /// Every interval's counts added up.
    totals: Totals,
    /// Cumulative latency histogram per latency kind: counts per bucket of
    /// [`IIBENCH_BUCKETS_US`] plus the open last one, and the sum of the values (us).
    buckets: [[u64; 10]; 4],
    sum_us: [f64; 4],
    last: Option<Last>,
    intervals: u64,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static VERSION: AtomicU64 = AtomicU64::new(0);
static STATE: Mutex<Option<State>> = Mutex::new(None);
/// The text a scrape gets, with its version (one more at each publish).
static TEXT: Mutex<Option<(u64, Arc<str>)>> = Mutex::new(None);
/// The scrapes served so far (see [`Endpoint::finish`]).
static SCRAPES: Mutex<Option<Scrapes>> = Mutex::new(None);

/// What the endpoint knows of its scrapers: when the last scrape came, the longest time
/// between two, and the newest version a scrape got.
struct Scrapes {
    count: u64,
    last: Option<Since>,
    longest_gap: Duration,
    served: u64,
}
/// The workload's name, when the command knows it before the session opens (`ixbench run`).
static WORKLOAD: Mutex<Option<String>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// True while an endpoint serves: the reporter merges an interval's histograms for
/// [`publish`] only then.
#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The workload the command runs, for the `workload` label (a command whose results config
/// names no workload says it here before its session opens).
pub fn set_workload(name: &str) {
    *lock(&WORKLOAD) = Some(name.to_string());
}

/// The workload given to [`set_workload`], if any.
pub fn workload() -> Option<String> {
    lock(&WORKLOAD).clone()
}

/// Set the labels of every series (once the session knows the target and the results
/// directory) and publish the text with them.
pub fn set_labels(labels: Labels) {
    if !enabled() {
        return;
    }
    let mut g = lock(&STATE);
    let s = g.get_or_insert_with(State::default);
    s.labels = labels;
    let text = render(s, &ProcSnapshot::now());
    drop(g);
    set_text(text);
}

/// One interval of a step, as the reporter cut it: its line, its detail (own counts, backlog,
/// transactions' histogram) and its operations' histograms merged over the workers. Adds it
/// to the run's counts and renders the text the endpoint serves. Does nothing when no endpoint
/// serves.
pub fn publish(line: &IntervalLine, detail: &IntervalDetail, hists: &[KindHists; 3]) {
    if !enabled() {
        return;
    }
    let cpu = ProcSnapshot::now();
    let mut g = lock(&STATE);
    let s = g.get_or_insert_with(State::default);
    s.totals.add(&detail.totals);
    s.intervals += 1;
    let mut last = Last {
        step: line.step.clone(),
        line: Some(line.clone()),
        totals: detail.totals,
        quantiles: Default::default(),
    };
    let all = [
        &hists[0].latency,
        &hists[1].latency,
        &hists[2].latency,
        &detail.txn.latency,
    ];
    for (k, h) in all.into_iter().enumerate() {
        if h.is_empty() {
            continue;
        }
        for (b, n) in s.buckets[k]
            .iter_mut()
            .zip(super::histogram::iibench_buckets(h))
        {
            *b += n;
        }
        s.sum_us[k] += h
            .iter_recorded()
            .map(|v| h.median_equivalent(v.value_iterated_to()) as f64 * v.count_at_value() as f64)
            .sum::<f64>();
        last.quantiles[k] = Some([
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.9),
            h.value_at_quantile(0.99),
            h.value_at_quantile(0.999),
            h.max(),
        ]);
    }
    s.last = Some(last);
    let text = render(s, &cpu);
    drop(g);
    set_text(text);
}

fn set_text(text: String) {
    let mut g = lock(&TEXT);
    let v = VERSION.fetch_add(1, Ordering::Relaxed) + 1;
    *g = Some((v, text.into()));
}

/// The text a scrape gets now, with its version (0: nothing published yet).
pub fn text() -> (u64, Arc<str>) {
    lock(&TEXT).clone().unwrap_or_else(|| (0, Arc::from("")))
}

/// A label value with `\`, `"` and newlines escaped.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A float as the text format writes it.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

struct Out<'a> {
    text: String,
    base: &'a str,
}

impl Out<'_> {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, extra: &[(&str, &str)], v: f64) {
        let mut labels = self.base.to_string();
        for (k, val) in extra {
            let _ = write!(labels, ",{k}=\"{}\"", esc(val));
        }
        let _ = writeln!(self.text, "{name}{{{labels}}} {}", num(v));
    }
}

/// The labels of every series, as written in a sample.
fn base_labels(l: &Labels) -> String {
    format!(
        "run=\"{}\",command=\"{}\",workload=\"{}\",target_kind=\"{}\",client=\"{}\"",
        esc(&l.run),
        esc(&l.command),
        esc(&l.workload),
        esc(&l.target_kind),
        l.client
    )
}

/// The step in progress, its phase and what it waits for, as of now
/// ([`crate::progress::in_progress`]): added to the published text at each scrape, so a
/// silent phase (an index build, a load, a quiet wait: no interval lines) shows too. Empty
/// when no step has begun.
fn in_progress_text() -> String {
    let now = crate::progress::in_progress();
    let Some(step) = now.step else {
        return String::new();
    };
    let base = match lock(&STATE).as_ref() {
        Some(s) => base_labels(&s.labels),
        None => return String::new(),
    };
    let mut o = Out {
        text: String::new(),
        base: &base,
    };
    o.family(
        "ixbench_in_progress",
        "gauge",
        "1 for the step in progress (a step, a sweep point, a load), its phase (ddl's point: baseline, during, catch-up, after, the window of its last interval; empty when the step has none) and what a silent phase of it waits for (an index build, a quiet wait; empty when nothing), as of the scrape.",
    );
    o.sample(
        "ixbench_in_progress",
        &[
            ("step", &step),
            ("phase", now.phase.as_deref().unwrap_or("")),
            ("waiting", now.waiting.as_deref().unwrap_or("")),
        ],
        1.0,
    );
    o.text
}

/// The whole exposition: the run's counters, the cumulative latency histograms, and the
/// gauges of the last interval (rates, latency quantiles, backlog, the step in progress).
fn render(s: &State, cpu: &ProcSnapshot) -> String {
    let base = base_labels(&s.labels);
    let mut o = Out {
        text: String::with_capacity(8192),
        base: &base,
    };
    let t = &s.totals;
    let kinds = ["insert", "delete", "query"];

    o.family(
        "ixbench_operations_total",
        "counter",
        "Operations completed in the run so far: commits of inserts and deletes, queries (run.json steps[].totals.ops, added up).",
    );
    for (k, kind) in kinds.iter().enumerate() {
        o.sample(
            "ixbench_operations_total",
            &[("kind", kind)],
            t.ops[k] as f64,
        );
    }
    o.family(
        "ixbench_rows_total",
        "counter",
        "Rows inserted, deleted, or returned by queries in the run so far.",
    );
    for (k, kind) in kinds.iter().enumerate() {
        o.sample("ixbench_rows_total", &[("kind", kind)], t.rows[k] as f64);
    }
    o.family(
        "ixbench_retries_total",
        "counter",
        "Operations run again after a transient error (busy, deadlock, serialization).",
    );
    for (k, kind) in kinds.iter().enumerate() {
        o.sample(
            "ixbench_retries_total",
            &[("kind", kind)],
            t.retries[k] as f64,
        );
    }
    o.family(
        "ixbench_never_started_total",
        "counter",
        "Operations due on an open-loop schedule that never started because a step was cut off.",
    );
    for (k, kind) in kinds.iter().enumerate() {
        o.sample(
            "ixbench_never_started_total",
            &[("kind", kind)],
            t.never_started[k] as f64,
        );
    }
    let x: &TxnTotals = &t.txn;
    o.family(
        "ixbench_transactions_total",
        "counter",
        "Transactions committed by a transaction workload (oltp, timeseries) in the run so far.",
    );
    o.sample("ixbench_transactions_total", &[], x.txns as f64);
    o.family(
        "ixbench_statements_total",
        "counter",
        "Statements of those transactions by class (read: SELECT; write: INSERT, UPDATE, DELETE; other: BEGIN, COMMIT).",
    );
    for (class, v) in [("read", x.reads), ("write", x.writes), ("other", x.other)] {
        o.sample("ixbench_statements_total", &[("class", class)], v as f64);
    }
    o.family(
        "ixbench_transaction_errors_total",
        "counter",
        "Failed transaction attempts (each error once, retried or not).",
    );
    o.sample("ixbench_transaction_errors_total", &[], x.errors as f64);
    o.family(
        "ixbench_transaction_retries_total",
        "counter",
        "Transaction attempts run again after a transient error.",
    );
    o.sample("ixbench_transaction_retries_total", &[], x.retries as f64);

    o.family(
        "ixbench_latency_seconds",
        "histogram",
        "Response time from the intended start (coordinated omission corrected), by kind, over the run so far; the insert benchmark's buckets.",
    );
    for (k, kind) in KINDS.iter().enumerate() {
        let mut cum = 0u64;
        for (i, n) in s.buckets[k].iter().enumerate() {
            cum += n;
            let le = match IIBENCH_BUCKETS_US.get(i) {
                Some(us) => num(*us as f64 / 1e6),
                None => "+Inf".to_string(),
            };
            o.sample(
                "ixbench_latency_seconds_bucket",
                &[("kind", kind), ("le", &le)],
                cum as f64,
            );
        }
        o.sample(
            "ixbench_latency_seconds_sum",
            &[("kind", kind)],
            s.sum_us[k] / 1e6,
        );
        o.sample(
            "ixbench_latency_seconds_count",
            &[("kind", kind)],
            cum as f64,
        );
    }

    o.family(
        "ixbench_client_cpu_seconds_total",
        "counter",
        "CPU time of the ixbench process (all threads, getrusage) at the last interval, by mode.",
    );
    o.sample(
        "ixbench_client_cpu_seconds_total",
        &[("mode", "user")],
        cpu.user_us as f64 / 1e6,
    );
    o.sample(
        "ixbench_client_cpu_seconds_total",
        &[("mode", "system")],
        cpu.sys_us as f64 / 1e6,
    );

    o.family(
        "ixbench_intervals_total",
        "counter",
        "Interval lines cut in the run so far.",
    );
    o.sample("ixbench_intervals_total", &[], s.intervals as f64);

    let Some(last) = &s.last else {
        return o.text;
    };
    let Some(line) = &last.line else {
        return o.text;
    };
    let step = last.step.as_str();
    o.family(
        "ixbench_step_elapsed_seconds",
        "gauge",
        "The step in progress (its name in the step label): seconds since it began, at the last interval's end.",
    );
    o.sample(
        "ixbench_step_elapsed_seconds",
        &[("step", step)],
        line.t_sec,
    );
    o.family(
        "ixbench_step_interval",
        "gauge",
        "Number of the last interval within the step in progress, from 1.",
    );
    o.sample("ixbench_step_interval", &[("step", step)], line.n as f64);
    o.family(
        "ixbench_interval_seconds",
        "gauge",
        "Length of the last interval.",
    );
    o.sample("ixbench_interval_seconds", &[], line.i_sec);
    if let Some(at) = line.at {
        o.family(
            "ixbench_interval_end_timestamp_seconds",
            "gauge",
            "Wall-clock time of the last interval's end, Unix seconds.",
        );
        o.sample("ixbench_interval_end_timestamp_seconds", &[], at);
    }
    let secs = line.i_sec;
    let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    o.family(
        "ixbench_interval_operations_per_second",
        "gauge",
        "Operations (transactions for kind=transaction) per second in the last interval.",
    );
    let ops = [
        last.totals.ops[0],
        last.totals.ops[1],
        last.totals.ops[2],
        last.totals.txn.txns,
    ];
    for (k, kind) in KINDS.iter().enumerate() {
        o.sample(
            "ixbench_interval_operations_per_second",
            &[("kind", kind)],
            per_s(ops[k]),
        );
    }
    o.family(
        "ixbench_interval_rows_per_second",
        "gauge",
        "Rows inserted, deleted, or returned by queries per second in the last interval.",
    );
    for (k, kind) in kinds.iter().enumerate() {
        o.sample(
            "ixbench_interval_rows_per_second",
            &[("kind", kind)],
            per_s(last.totals.rows[k]),
        );
    }
    // A summary as client libraries keep one: quantiles of a recent window (here the last
    // interval), count and sum over the whole run.
    o.family(
        "ixbench_interval_latency_seconds",
        "summary",
        "Response-time quantiles of the last interval by kind (quantile 1: the largest; none for a kind that completed nothing in it); count and sum over the run so far.",
    );
    for (k, kind) in KINDS.iter().enumerate() {
        if let Some(q) = &last.quantiles[k] {
            for (name, v) in ["0.5", "0.9", "0.99", "0.999", "1"].iter().zip(q) {
                o.sample(
                    "ixbench_interval_latency_seconds",
                    &[("kind", kind), ("quantile", name)],
                    *v as f64 / 1e6,
                );
            }
        }
        o.sample(
            "ixbench_interval_latency_seconds_sum",
            &[("kind", kind)],
            s.sum_us[k] / 1e6,
        );
        o.sample(
            "ixbench_interval_latency_seconds_count",
            &[("kind", kind)],
            s.buckets[k].iter().sum::<u64>() as f64,
        );
    }
    if let Some(b) = line.backlog {
        o.family(
            "ixbench_backlog",
            "gauge",
            "Intended starts of the open-loop writers that were due and not yet taken at the last interval's end (absent for closed-loop steps).",
        );
        o.sample("ixbench_backlog", &[], b as f64);
    }
    if let Some(st) = line.stalled_secs {
        o.family(
            "ixbench_stalled_seconds",
            "gauge",
            "Seconds since the last operation completed, at the last interval's end, when at least the stall mark (absent otherwise).",
        );
        o.sample("ixbench_stalled_seconds", &[], st);
    }
    o.text
}

/// The HTTP server of `--metrics-listen`: serves [`text`] at `/metrics` until dropped.
pub struct Endpoint {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
}

impl Endpoint {
    /// The address it listens on (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Listen on `addr` and serve the live text from a thread of its own. A port in use (or an
/// address not of this host) is an error naming the address.
pub fn listen(addr: SocketAddr) -> Result<Endpoint> {
    let server = tiny_http::Server::http(addr)
        .map_err(|e| anyhow!("--metrics-listen {addr}: cannot listen there: {e}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| anyhow!("--metrics-listen {addr}: not an IP address"))?;
    let server = Arc::new(server);
    *lock(&STATE) = Some(State::default());
    *lock(&TEXT) = None;
    *lock(&SCRAPES) = Some(Scrapes {
        count: 0,
        last: None,
        longest_gap: Duration::ZERO,
        served: 0,
    });
    ENABLED.store(true, Ordering::Relaxed);
    let srv = server.clone();
    let thread = std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || serve(&srv))
        .map_err(|e| anyhow!("--metrics-listen: cannot start its thread: {e}"))?;
    Ok(Endpoint {
        server,
        thread: Some(thread),
        addr: bound,
    })
}

/// Answer requests until the server is unblocked: `GET /metrics` (and `/`) with the text,
/// anything else 404 or 405.
fn serve(server: &tiny_http::Server) {
    for req in server.incoming_requests() {
        let path = req.url().split('?').next().unwrap_or("");
        let is_get = matches!(
            req.method(),
            tiny_http::Method::Get | tiny_http::Method::Head
        );
        let scrape = is_get && (path == "/metrics" || path == "/");
        let (version, body) = text();
        let om = wants_openmetrics(&req);
        let resp = if !is_get {
            tiny_http::Response::from_string("only GET\n").with_status_code(405)
        } else if path == "/metrics" || path == "/" {
            let mut body = body.to_string();
            if !body.is_empty() {
                body.push_str(&in_progress_text());
            }
            let content_type = if om {
                body = openmetrics(&body);
                OPENMETRICS_TYPE
            } else {
                PROMETHEUS_TYPE
            };
            let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type)
                .expect("a valid header");
            tiny_http::Response::from_string(body).with_header(header)
        } else {
            tiny_http::Response::from_string("not found: the metrics are at /metrics\n")
                .with_status_code(404)
        };
        // A scraper that hung up got nothing.
        if req.respond(resp).is_ok() && scrape {
            if let Some(s) = lock(&SCRAPES).as_mut() {
                s.count += 1;
                if let Some(last) = &s.last {
                    s.longest_gap = s.longest_gap.max(last.so_far());
                }
                s.last = Some(Since::start());
                s.served = s.served.max(version);
            }
        }
    }
}

/// The Content-Type of Prometheus text.
const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The Content-Type of OpenMetrics text.
const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether the request's `Accept` header names OpenMetrics text (with a weight above 0).
fn wants_openmetrics(req: &tiny_http::Request) -> bool {
    req.headers()
        .iter()
        .filter(|h| h.field.equiv("Accept"))
        .any(|h| accepts_openmetrics(h.value.as_str()))
}

/// Whether an `Accept` value names `application/openmetrics-text` with a weight above 0.
fn accepts_openmetrics(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let mut it = part.split(';').map(str::trim);
        let ty = it.next().unwrap_or("");
        ty.eq_ignore_ascii_case("application/openmetrics-text")
            && it
                .filter_map(|p| p.strip_prefix("q="))
                .all(|q| q.parse::<f64>().map_or(true, |q| q > 0.0))
    })
}

/// Prometheus text (as [`render`] writes it) as OpenMetrics text 1.0.0: a counter's family
/// is named without its `_total` (its samples keep it), a family whose name ends in
/// `_seconds` gets `# UNIT NAME seconds`, and the text ends with `# EOF`.
pub fn openmetrics(prom: &str) -> String {
    let counters: std::collections::HashSet<&str> = prom
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let family = |name: &str| -> String {
        match name.strip_suffix("_total") {
            Some(f) if counters.contains(name) => f.to_string(),
            _ => name.to_string(),
        }
    };
    let mut out = String::with_capacity(prom.len() + 512);
    for line in prom.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let _ = writeln!(out, "# HELP {} {help}", family(name));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let f = family(name);
            let _ = writeln!(out, "# TYPE {f} {kind}");
            if f.ends_with("_seconds") {
                let _ = writeln!(out, "# UNIT {f} seconds");
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("# EOF\n");
    out
}

/// The longest [`Endpoint::finish`] waits for the last scrape.
pub const FINAL_SCRAPE_WAIT_MAX: Duration = Duration::from_secs(120);

impl Endpoint {
    /// The command has ended: stop serving, after the final figures were scraped once. When
    /// a scraper came back during the run (two scrapes or more: Prometheus, not a single
    /// curl) but has not yet seen the last interval, wait for its next scrape (up to twice the
    /// longest time between its scrapes, at least a second, at most
    /// [`FINAL_SCRAPE_WAIT_MAX`]; a signal ends the wait), so its last sample holds the run's
    /// totals. Returns whether the final figures were scraped.
    pub fn finish(self) -> bool {
        let want = VERSION.load(Ordering::Relaxed);
        let (count, gap) = match lock(&SCRAPES).as_ref() {
            Some(s) => (s.count, s.longest_gap),
            None => (0, Duration::ZERO),
        };
        let served = || lock(&SCRAPES).as_ref().is_some_and(|s| s.served >= want);
        if served() {
            return true;
        }
        if count < 2 {
            return false;
        }
        let wait = (gap * 2).clamp(Duration::from_secs(1), FINAL_SCRAPE_WAIT_MAX);
        if wait > Duration::from_secs(2) {
            crate::outln!(
                "metrics: waiting up to {:.0} s for the final scrape (Ctrl-C ends the wait)",
                wait.as_secs_f64()
            );
        }
        let until = Deadline::after(wait);
        while !until.expired() && crate::stop::signal().is_none() {
            if served() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        served()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        ENABLED.store(false, Ordering::Relaxed);
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        *lock(&STATE) = None;
        *lock(&TEXT) = None;
        *lock(&SCRAPES) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_when_asked_for() {
        // Prometheus 2.x's default Accept header
        assert!(accepts_openmetrics(
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        ));
        assert!(!accepts_openmetrics("text/plain;version=0.0.4"));
        assert!(!accepts_openmetrics("*/*"));
        assert!(!accepts_openmetrics("application/openmetrics-text;q=0"));
    }

    #[test]
    fn openmetrics_names_counters_by_family_and_units() {
        let prom = "# HELP ixbench_rows_total Rows.\n# TYPE ixbench_rows_total counter\n\
                    ixbench_rows_total{kind=\"insert\"} 5\n\
                    # HELP ixbench_latency_seconds Latency.\n# TYPE ixbench_latency_seconds histogram\n\
                    ixbench_latency_seconds_bucket{le=\"+Inf\"} 1\n\
                    # HELP ixbench_backlog Backlog.\n# TYPE ixbench_backlog gauge\nixbench_backlog 0\n";
        let om = openmetrics(prom);
        assert_eq!(
            om,
            "# HELP ixbench_rows Rows.\n# TYPE ixbench_rows counter\n\
             ixbench_rows_total{kind=\"insert\"} 5\n\
             # HELP ixbench_latency_seconds Latency.\n# TYPE ixbench_latency_seconds histogram\n\
             # UNIT ixbench_latency_seconds seconds\n\
             ixbench_latency_seconds_bucket{le=\"+Inf\"} 1\n\
             # HELP ixbench_backlog Backlog.\n# TYPE ixbench_backlog gauge\nixbench_backlog 0\n# EOF\n"
        );
    }

    #[test]
    fn loopback_unless_written_out() {
        let lo = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        assert_eq!(parse_listen(":9464"), Ok(lo(9464)));
        assert_eq!(parse_listen("9465"), Ok(lo(9465)));
        assert_eq!(parse_listen(":0"), Ok(lo(0)));
        assert_eq!(parse_listen("127.0.0.1"), Ok(lo(DEFAULT_PORT)));
        assert_eq!(
            parse_listen("0.0.0.0:9464"),
            Ok(SocketAddr::from(([0, 0, 0, 0], 9464)))
        );
        assert_eq!(parse_listen("[::1]:9"), Ok("[::1]:9".parse().unwrap()));
        assert!(parse_listen("localhost:9464").unwrap().ip().is_loopback());
        for bad in ["", ":", ":70000", "nonsense host:1", "1.2.3.4:x"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}

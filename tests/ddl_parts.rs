//! Unit-level tests of `ixbench ddl`'s parts that write to a database (SQLite files in a
//! temporary directory): the load runner with a DDL in the middle, and the checks after a DDL.
//! Kept out of the library's unit tests, which measure the test process's own I/O.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use ixbench::dbms::ddl::{DdlDialect, DdlRequest};
use ixbench::dbms::prelude::*;
use ixbench::measure::schedule::Arrivals;
use ixbench::step::online_ddl::{run_load, DdlJob, LoadSpec};
use ixbench::workload::{Workload, WorkloadClient};

use ixbench::dbms::ddl::{DdlKind, IndexSpec, LockChoice};
use ixbench::dbms::{Stmt, TxnKind, Value};
use ixbench::measure::windows::analyse;
use ixbench::results::ddl::TimelineRow;
use ixbench::workload::TxnDone;

/// A tiny workload for the runner's own tests: one table, each transaction updates `c` of
/// a row (the column the DDL indexes).
struct Kv;

struct KvClient {
    update: Stmt,
    n: i64,
}

const ROWS: i64 = 2000;

impl Workload for Kv {
    fn name(&self) -> &str {
        "kv"
    }
    fn tables(&self) -> Vec<String> {
        vec!["kv1".into()]
    }
    fn load(&self, dbms: &dyn Dbms, _threads: usize) -> Result<()> {
        let mut c = dbms.connect()?;
        c.execute("CREATE TABLE kv1 (id INTEGER PRIMARY KEY, c TEXT NOT NULL)")?;
        c.execute("BEGIN")?;
        for i in 0..ROWS {
            c.execute(&format!("INSERT INTO kv1 VALUES ({i}, 'v{}')", i % 97))?;
        }
        c.execute("COMMIT")
    }
    fn client(
        &self,
        conn: &mut dyn Conn,
        id: usize,
        _seed: u64,
    ) -> Result<Box<dyn WorkloadClient>> {
        Ok(Box::new(KvClient {
            update: conn.prepare("UPDATE kv1 SET c = ? WHERE id = ?")?,
            n: id as i64 * 1000,
        }))
    }
}

impl WorkloadClient for KvClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        self.n += 1;
        let v = format!("w{}", self.n % 89);
        conn.begin(TxnKind::Write)?;
        conn.exec(self.update, &[Value::Text(&v), Value::Int(self.n % ROWS)])?;
        conn.commit()?;
        Ok(TxnDone {
            reads: 0,
            writes: 1,
            other: 2,
            rows: 1,
            ..Default::default()
        })
    }
}

/// The whole runner on SQLite: a probe, then the load at a fixed rate with a CREATE INDEX
/// in the middle; the windows add up to the run, the marks are in the timeline, the index
/// is valid afterwards.
#[test]
fn load_with_a_ddl_in_the_middle() {
    let dir = tempfile::tempdir().unwrap();
    let db = ixbench::dbms::sqlite::Sqlite::open(dir.path().join("x.db"), &[]).unwrap();
    Kv.load(&db, 1).unwrap();
    let stop = AtomicBool::new(false);
    let mut spec = LoadSpec {
        target: &db,
        workload: &Kv,
        threads: 2,
        rate: None,
        arrivals: Arrivals::Uniform,
        seed: 1,
        max_retries: 100,
        stop_on_error: true,
        interval: Duration::from_millis(250),
        interrupt: &stop,
    };
    let mut printed = 0;
    // The text's lines: at 0.25 s intervals, four intervals merged (the last may be fewer).
    let mut text_lines: Vec<TimelineRow> = Vec::new();
    let probe = run_load(&spec, 0, Some(Duration::from_secs(1)), None, &mut |_, l| {
        printed += 1;
        text_lines.extend(l.cloned());
    })
    .unwrap();
    assert_eq!(printed, probe.rows.len());
    assert_eq!(
        text_lines.len(),
        probe.rows.len().div_ceil(4),
        "{text_lines:?}"
    );
    assert_eq!(
        text_lines.iter().map(|l| l.txns).sum::<u64>(),
        probe.rows.iter().map(|r| r.txns).sum::<u64>()
    );
    // The first text line is the first four intervals merged: their seconds added (each about
    // 0.25 s; a loaded machine may make one longer, so the sum, not 1.0, is what must hold).
    let first_four: f64 = probe.rows.iter().take(4).map(|r| r.i_sec).sum();
    assert!(
        (text_lines[0].i_sec - first_four).abs() < 1e-6 && (text_lines[0].i_sec - 1.0).abs() < 0.5,
        "{:?} against {first_four}",
        text_lines[0]
    );
    let probe_txns: u64 = probe.intervals.iter().map(|s| s.txns).sum();
    assert!(probe_txns > 10, "{probe_txns}");
    assert_eq!(probe.rows[0].window, "probe");
    spec.rate = Some(100.0);
    let req = DdlRequest {
        kind: DdlKind::AddIndex,
        lock: LockChoice::Online,
        table: "kv1".into(),
        pk: "id".into(),
        indexes: vec![IndexSpec {
            table: "kv1".into(),
            name: "kv1_c".into(),
            columns: vec!["c".into()],
            unique: false,
        }],
        column: String::new(),
    };
    let dialect = ixbench::dbms::sqlite::ddl::Sqlite;
    let plan = dialect.plan(&req).unwrap();
    let job = DdlJob {
        dialect: &dialect,
        plan: &plan,
        req: &req,
        session_knobs: &[],
        baseline: Duration::from_millis(2500),
        recovery: Duration::from_secs(2),
        timeout: Duration::from_secs(60),
        max_retries: 0,
        hook: None,
    };
    let run = run_load(&spec, 3, None, Some(&job), &mut |_, _| {}).unwrap();
    assert!(run.foreground_error.is_none(), "{:?}", run.foreground_error);
    let o = run.ddl.as_ref().unwrap();
    assert!(o.error.is_none(), "{o:?}");
    assert_eq!(o.attempts, 1);
    let (st, en) = (o.started_s.unwrap(), o.ended_s.unwrap());
    // Not before the baseline's end (a late wake-up on a busy machine is not a bug).
    assert!((2.4..10.0).contains(&st), "{st}");
    assert!(en >= st);
    // The run: baseline (2.5 s), the DDL, 2 s of recovery, to a whole interval of 0.25 s.
    assert!(run.intervals.len() >= 18, "{}", run.intervals.len());
    let i = analyse(&run.intervals, st, en, spec.rate, None);
    let total: u64 = run.intervals.iter().map(|s| s.txns).sum();
    let ws = [&i.baseline, &i.during, &i.catchup, &i.after];
    assert_eq!(ws.iter().map(|w| w.txns).sum::<u64>(), total);
    let secs: f64 = run.intervals.iter().map(|s| s.secs).sum();
    assert!((ws.iter().map(|w| w.seconds).sum::<f64>() - secs).abs() < 1e-9);
    // The intervals follow each other, 0.25 s each (the last one waits for what was in
    // flight at the end), and the last ends at the recovery's end, a whole interval.
    for w in run.intervals.windows(2) {
        assert!(
            (w[0].end() - w[1].t).abs() < 1e-9,
            "{} {}",
            w[0].end(),
            w[1].t
        );
    }
    for s in &run.intervals[..run.intervals.len() - 1] {
        assert!((s.secs - 0.25).abs() < 0.05, "{}", s.secs);
    }
    let end = run.intervals.last().unwrap().end();
    assert!(
        end >= en + 2.0 && end < en + 2.0 + 0.25 + 0.2,
        "{end} vs DDL end {en}"
    );
    // An open loop has a backlog in every interval.
    assert!(run.intervals.iter().all(|s| s.backlog.is_some()));
    assert_eq!(run.rows.len(), run.intervals.len());
    // 100 TPS offered: an open loop never completes more than that in the baseline's two
    // seconds (one in flight per client at most on top); a stall just before its end moves
    // completions out of it, so the floor is loose.
    let tps = i.baseline.tps.unwrap();
    assert!((50.0..=100.0 + spec.threads as f64).contains(&tps), "{tps}");
    assert!(run
        .rows
        .iter()
        .any(|r| r.marks.contains(&"DDL start".to_string())));
    assert!(run
        .rows
        .iter()
        .any(|r| r.marks.contains(&"DDL end".to_string())));
    assert!(run.rows.iter().all(|r| r.point == 3));
    assert_eq!(run.rows[0].window, "baseline");
    assert!(
        ["after", "catch-up"].contains(&run.rows.last().unwrap().window.as_str()),
        "{:?}",
        run.rows.last()
    );
    let mut c = db.connect().unwrap();
    let checks = dialect.verify(c.as_mut(), &req);
    assert!(checks.iter().all(|c| c.ok), "{checks:?}");
}

/// The dialect's checks on a real SQLite database: a good index passes, a missing one fails
/// and says why, a dropped one is gone.
#[test]
fn sqlite_checks_on_a_real_database() {
    use ixbench::dbms::ddl::{DdlKind, IndexSpec, LockChoice};
    use ixbench::dbms::sqlite::ddl::Sqlite as Dialect;
    let req = |kind: DdlKind| DdlRequest {
        kind,
        lock: LockChoice::Blocking,
        table: "sbtest1".into(),
        pk: "id".into(),
        indexes: vec![IndexSpec {
            table: "sbtest1".into(),
            name: "c_idx".into(),
            columns: vec!["c".into()],
            unique: false,
        }],
        column: "ixb_col".into(),
    };

    let dir = tempfile::tempdir().unwrap();
    let db = ixbench::dbms::sqlite::Sqlite::open(dir.path().join("x.db"), &[]).unwrap();
    let mut c = db.connect().unwrap();
    c.execute("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, c TEXT NOT NULL, pad TEXT NOT NULL)")
        .unwrap();
    for i in 0..50 {
        c.execute(&format!(
            "INSERT INTO sbtest1 VALUES ({i}, 'c{}', 'p{i}')",
            i % 7
        ))
        .unwrap();
    }
    let r = req(DdlKind::AddIndex);
    let p = Dialect.plan(&r).unwrap();
    for s in &p.statements {
        c.execute(s).unwrap();
    }
    let checks = Dialect.verify(c.as_mut(), &r);
    assert_eq!(checks.len(), 3, "{checks:?}");
    assert!(checks.iter().all(|k| k.ok), "{checks:?}");
    assert!(checks[0]
        .detail
        .contains("50 rows through the index, 50 through the table"));
    assert!(checks[1].detail.contains("c_idx"), "{checks:?}");
    // An index that does not exist: the count through it fails, and says so.
    for s in &p.undo {
        c.execute(s).unwrap();
    }
    let checks = Dialect.verify(c.as_mut(), &r);
    assert!(
        !checks[0].ok && checks[0].detail.contains("failed"),
        "{checks:?}"
    );
    let d = req(DdlKind::DropIndex);
    let checks = Dialect.verify(c.as_mut(), &d);
    assert!(checks[0].ok && checks[0].detail.contains("gone"));
}

//! The insert benchmark's step plan: its steps (l.i0, l.x, l.i1, l.i2, maint, qrN, qpN, and
//! the 2020 profile's qN.K) and their specs ([`StepSpec`]), its profiles and default rates, the
//! plan built from its options ([`plan`], the function its registry entry hands `ixbench run`
//! as [`crate::workload::runner::Runner::Steps`]), the plan line and warnings printed before the
//! steps run, and the header line on how its statements are sent.
//!
//! What runs the plan (the session, each step, its checks) is `step::plan_run`, in the layer
//! above the workloads: the steps themselves (`src/step/`) run the insert benchmark's table and
//! queries from [`crate::workload::iibench`], so they sit above it and this plan, which names
//! them, sits here, below them; `step` re-exports these types for the steps.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use crate::progress::{human, Planned};
use crate::workload::iibench::StatementMode;

/// Which query a read+write step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// Short range scans on a secondary index.
    Range,
    /// 10 PKs per query.
    Point,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StepKind {
    /// Insert rows as fast as possible; `create_table` for l.i0; `delete` keeps the table size
    /// constant by deleting as many of the oldest rows.
    Load {
        /// Rows each client inserts.
        rows: u64,
        /// Rows per commit.
        rows_per_commit: usize,
        /// Delete as many rows as are inserted, on a second connection.
        delete: bool,
        /// Create the tables first (PK only).
        create_table: bool,
        /// `--time`: stop inserting after this many seconds instead of after `rows` rows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seconds: Option<f64>,
    },
    /// Create the secondary indexes.
    CreateIndexes,
    /// The DBMS's maintenance between load and query steps.
    Maintenance,
    /// Queries as fast as possible while each client's writer inserts (and deletes) `rate`
    /// rows/s, until it has inserted `rate * seconds` rows.
    ReadWrite {
        /// Range or point queries.
        query: QueryKind,
        /// Rows/s each client's writer inserts (and deletes).
        rate: u64,
        /// Planned length.
        seconds: f64,
        /// Rows per commit of the writer.
        rows_per_commit: usize,
        /// Delete as many rows as are inserted.
        delete: bool,
        /// `--time`: the step ends at `seconds` even when the writers are behind (else at 3x).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        time_bound: bool,
    },
}

/// One planned step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// Name as printed (`l.i0`, `qr100`, `q200.1`).
    pub name: String,
    /// What it does.
    pub kind: StepKind,
}

impl StepSpec {
    /// One line describing the step.
    pub fn describe(&self, clients: usize) -> String {
        let per = if clients > 1 { " per client" } else { "" };
        match &self.kind {
            StepKind::Load {
                rows,
                rows_per_commit,
                delete,
                create_table,
                seconds,
            } => format!(
                "{}insert {}{per} as fast as possible, {rows_per_commit} rows/commit{}",
                if *create_table { "create tables (PK only), " } else { "" },
                match seconds {
                    Some(t) => format!("for {t} s (--time)"),
                    None => format!("{rows} rows"),
                },
                if *delete { ", deleting as many of the oldest rows" } else { "" }
            ),
            StepKind::CreateIndexes => "create the secondary indexes".into(),
            StepKind::Maintenance => "maintenance (statistics, checkpoint)".into(),
            StepKind::ReadWrite {
                query,
                rate,
                seconds,
                rows_per_commit,
                delete,
                time_bound,
            } => format!(
                "{} queries as fast as possible while inserting{} {rate} rows/s{per} ({rows_per_commit} rows/commit) for {seconds} s{}",
                match query {
                    QueryKind::Range => "range",
                    QueryKind::Point => "point",
                },
                if *delete { " and deleting" } else { "" },
                if *time_bound { " (--time)" } else { "" }
            ),
        }
    }
}

/// Sizes and counts the plan is made from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanParams {
    /// Rows per client for l.i0.
    pub rows: u64,
    /// Rows per client for l.i1 + l.i2 (4/5 and 1/5).
    pub rows2: u64,
    /// Rows per commit in l.i0.
    pub rows_per_commit: usize,
    /// Rows per commit in l.i1.
    pub rows_per_commit_i1: usize,
    /// Rows per commit in l.i2.
    pub rows_per_commit_i2: usize,
    /// Rows per commit of the writers in read+write steps.
    pub rw_rows_per_commit: usize,
    /// Rates of the read+write steps (rows/s per client).
    pub rates: Vec<u64>,
    /// Planned seconds of each read+write step.
    pub query_seconds: f64,
}

/// Named step sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Profile {
    /// l.i0, l.x, l.i1, l.i2, maint, then qrN and qpN for each rate.
    Default,
    /// Seed 000's sequence: l.i0, l.x, maint, l.i1 (insert only), then q100.1, q100.2, q200.1
    /// ... q1000.2 (range queries, each rate twice).
    #[value(name = "2020")]
    P2020,
}

/// The rates of the 2020 profile.
pub const RATES_2020: [u64; 6] = [100, 200, 400, 600, 800, 1000];

/// The step names of a profile.
pub fn profile_steps(profile: Profile, rates: &[u64]) -> Vec<String> {
    match profile {
        Profile::Default => {
            let mut v: Vec<String> = ["l.i0", "l.x", "l.i1", "l.i2", "maint"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for r in rates {
                v.push(format!("qr{r}"));
                v.push(format!("qp{r}"));
            }
            v
        }
        Profile::P2020 => {
            let mut v: Vec<String> = ["l.i0", "l.x", "maint", "l.i1"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            for r in rates {
                v.push(format!("q{r}.1"));
                v.push(format!("q{r}.2"));
            }
            v
        }
    }
}

/// Turn step names into specs. In the 2020 profile l.i1 is insert-only (the table grows).
pub fn parse_steps(names: &[String], p: &PlanParams, profile: Profile) -> Result<Vec<StepSpec>> {
    let mut out = Vec::new();
    for name in names {
        let name = name.trim();
        let kind = match name {
            "l.i0" => StepKind::Load {
                rows: p.rows,
                rows_per_commit: p.rows_per_commit,
                delete: false,
                create_table: true,
                seconds: None,
            },
            "l.x" => StepKind::CreateIndexes,
            "l.i1" => StepKind::Load {
                rows: if profile == Profile::P2020 {
                    p.rows2
                } else {
                    p.rows2 * 4 / 5
                },
                rows_per_commit: p.rows_per_commit_i1,
                delete: profile != Profile::P2020,
                create_table: false,
                seconds: None,
            },
            "l.i2" => StepKind::Load {
                rows: p.rows2 / 5,
                rows_per_commit: p.rows_per_commit_i2,
                delete: true,
                create_table: false,
                seconds: None,
            },
            "maint" => StepKind::Maintenance,
            _ => parse_rw(name, p)?,
        };
        out.push(StepSpec {
            name: name.to_string(),
            kind,
        });
    }
    if out.is_empty() {
        bail!("no steps to run");
    }
    Ok(out)
}

fn parse_rw(name: &str, p: &PlanParams) -> Result<StepKind> {
    let bad = || {
        anyhow::anyhow!(
            "unknown step {name:?}: expected l.i0, l.x, l.i1, l.i2, maint, qrN, qpN or qN.K (N = rows/s per client)"
        )
    };
    let (query, num, delete) = if let Some(r) = name.strip_prefix("qr") {
        (QueryKind::Range, r, true)
    } else if let Some(r) = name.strip_prefix("qp") {
        (QueryKind::Point, r, true)
    } else if let Some(r) = name.strip_prefix('q') {
        // q100.1: the 2020 form, range queries with an insert-only writer
        let (rate, rep) = r.split_once('.').ok_or_else(bad)?;
        rep.parse::<u32>().map_err(|_| bad())?;
        (QueryKind::Range, rate, false)
    } else {
        return Err(bad());
    };
    let rate: u64 = num.parse().map_err(|_| bad())?;
    if rate == 0 {
        bail!("step {name}: the insert rate must be at least 1 row/s");
    }
    Ok(StepKind::ReadWrite {
        query,
        rate,
        seconds: p.query_seconds,
        rows_per_commit: p.rw_rows_per_commit,
        delete,
        time_bound: false,
    })
}

/// The rates of the default profile.
pub const DEFAULT_RATES: [u64; 3] = [100, 500, 1000];

/// The insert benchmark's options its plan is built from (`ixbench run`'s, under its heading,
/// and `--time`).
#[derive(Debug, Clone)]
pub struct PlanIn {
    /// `--rows`: rows each client loads in l.i0.
    pub rows: u64,
    /// `--rows2`: rows each client inserts in l.i1 + l.i2.
    pub rows2: u64,
    /// `--rows-per-commit` (l.i0).
    pub rows_per_commit: u64,
    /// `--rows-per-commit-i1`.
    pub rows_per_commit_i1: u64,
    /// `--rows-per-commit-i2`.
    pub rows_per_commit_i2: u64,
    /// `--rw-rows-per-commit`: the rate-limited writers' of read+write steps.
    pub rw_rows_per_commit: u64,
    /// `--steps`: the steps to run, in order (default: the profile's).
    pub steps: Option<Vec<String>>,
    /// `--profile`.
    pub profile: Profile,
    /// `--rates` (default: the profile's).
    pub rates: Option<Vec<u64>>,
    /// `--query-seconds`: planned seconds of each read+write step.
    pub query_seconds: f64,
    /// `--time`: l.i1, l.i2 and the read+write steps bounded by seconds instead of rows.
    pub time: Option<f64>,
}

/// The step plan and the sizes it was made from.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// The steps, in order.
    pub steps: Vec<StepSpec>,
    /// The sizes and counts (recorded in run.json's config as `plan`).
    pub params: PlanParams,
}

/// Builds a workload's step plan from its options (the registry entry's
/// [`crate::workload::runner::Runner::Steps`]).
pub type PlanFn = fn(&PlanIn) -> Result<StepPlan>;

/// The insert benchmark's step plan from its options: the profile's rates and steps unless
/// given, each step's spec, `--time`'s bound, and l.i0 (which creates the tables) first.
pub fn plan(p: &PlanIn) -> Result<StepPlan> {
    let rates = match &p.rates {
        Some(r) => r.clone(),
        None if p.profile == Profile::P2020 => RATES_2020.to_vec(),
        None => DEFAULT_RATES.to_vec(),
    };
    let params = PlanParams {
        rows: p.rows,
        rows2: p.rows2,
        rows_per_commit: p.rows_per_commit as usize,
        rows_per_commit_i1: p.rows_per_commit_i1 as usize,
        rows_per_commit_i2: p.rows_per_commit_i2 as usize,
        rw_rows_per_commit: p.rw_rows_per_commit as usize,
        rates: rates.clone(),
        query_seconds: p.query_seconds,
    };
    let names = match &p.steps {
        Some(s) => s.clone(),
        None => profile_steps(p.profile, &rates),
    };
    let mut steps = parse_steps(&names, &params, p.profile)?;
    if let Some(t) = p.time {
        bound_by_time(&mut steps, t);
    }
    if let Some(pos) = steps.iter().position(|s| s.name == "l.i0") {
        if pos != 0 {
            bail!("l.i0 creates the tables, so it must be the first step");
        }
    }
    Ok(StepPlan { steps, params })
}

/// The warnings of the plan printed before the steps run (and kept in run.json): (warning,
/// the steps it applies to).
pub fn warnings(p: &PlanIn, steps: &[StepSpec]) -> Vec<(String, Vec<String>)> {
    let uses_rows2 = steps
        .iter()
        .any(|st| st.name == "l.i1" || st.name == "l.i2");
    rows2_warning(p.rows, p.rows2)
        .filter(|_| uses_rows2)
        .map(|w| (w, vec!["l.i1".to_string(), "l.i2".to_string()]))
        .into_iter()
        .collect()
}

/// `--time SECONDS`: bound l.i1, l.i2 and the read+write steps by seconds instead of rows.
pub fn bound_by_time(steps: &mut [StepSpec], t: f64) {
    for s in steps.iter_mut() {
        match &mut s.kind {
            StepKind::Load {
                create_table: false,
                seconds,
                ..
            } => *seconds = Some(t),
            StepKind::ReadWrite {
                seconds,
                time_bound,
                ..
            } => {
                *seconds = t;
                *time_bound = true;
            }
            _ => {}
        }
    }
}

/// How long each step is planned to be, for the status line: read+write steps and steps
/// bounded by `--time` by their seconds, loads by their rows (all clients), the rest unknown.
pub fn planned_steps(steps: &[StepSpec], clients: usize) -> Vec<(String, Planned)> {
    steps
        .iter()
        .map(|s| {
            let p = match &s.kind {
                StepKind::Load {
                    seconds: Some(t), ..
                } => Planned::Seconds(*t),
                StepKind::Load { rows, .. } => Planned::Rows(rows.saturating_mul(clients as u64)),
                StepKind::ReadWrite { seconds, .. } => Planned::Seconds(*seconds),
                StepKind::CreateIndexes | StepKind::Maintenance => Planned::Unknown,
            };
            (s.name.clone(), p)
        })
        .collect()
}

/// The line printed at the start: the steps bounded by time add up exactly; the others are
/// named with their rows, since their length is the insert rate the run will measure.
pub fn plan_line(steps: &[StepSpec], clients: usize) -> String {
    let planned = planned_steps(steps, clients);
    let timed: f64 = planned
        .iter()
        .map(|(_, p)| match p {
            Planned::Seconds(t) => *t,
            _ => 0.0,
        })
        .sum();
    let n_timed = planned
        .iter()
        .filter(|(_, p)| matches!(p, Planned::Seconds(_)))
        .count();
    let rows: Vec<String> = planned
        .iter()
        .filter_map(|(n, p)| match p {
            Planned::Rows(r) => Some(format!("{n} {r} rows")),
            _ => None,
        })
        .collect();
    let other: Vec<&str> = planned
        .iter()
        .filter(|(_, p)| matches!(p, Planned::Unknown))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut line = format!(
        "plan: {} steps; {n_timed} bounded by time add up to {}",
        steps.len(),
        human(timed)
    );
    if !rows.is_empty() {
        line.push_str(&format!(
            "; bounded by rows: {} (their time is rows / the insert rate measured as they run)",
            rows.join(", ")
        ));
    }
    if !other.is_empty() {
        line.push_str(&format!("; {} as long as the DBMS takes", other.join(", ")));
    }
    line.push_str("; quiet waits before steps at most --quiet-timeout each");
    line
}

/// A warning when `--rows2` is far larger than `--rows`: l.i1 and l.i2 then insert and
/// delete the whole table several times over, and take many times the load's time.
pub fn rows2_warning(rows: u64, rows2: u64) -> Option<String> {
    (rows2 > rows.saturating_mul(4)).then(|| {
        format!(
            "--rows2 {rows2} is {:.0}x --rows {rows}: l.i1 and l.i2 insert (and delete) that many rows \
             per client into a table of {rows}, so they take many times as long as the load \
             (the insert benchmark's default is --rows2 = 0.3 x --rows)",
            rows2 as f64 / rows as f64
        )
    })
}

/// The header line that says how the statements are sent.
pub fn statements_note(mode: StatementMode) -> String {
    match mode {
        StatementMode::Prepared => {
            "statements: prepared (bound parameters; --statements text sends literal SQL as the insert benchmark does)".to_string()
        }
        StatementMode::Text => {
            "statements: text (literal SQL with the values written in, as the insert benchmark's client sends it)".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PlanParams {
        PlanParams {
            rows: 1000,
            rows2: 500,
            rows_per_commit: 100,
            rows_per_commit_i1: 50,
            rows_per_commit_i2: 5,
            rw_rows_per_commit: 50,
            rates: vec![100, 500],
            query_seconds: 10.0,
        }
    }

    #[test]
    fn default_profile() {
        let names = profile_steps(Profile::Default, &[100, 500]);
        assert_eq!(
            names,
            ["l.i0", "l.x", "l.i1", "l.i2", "maint", "qr100", "qp100", "qr500", "qp500"]
        );
        let steps = parse_steps(&names, &params(), Profile::Default).unwrap();
        assert_eq!(
            steps[2].kind,
            StepKind::Load {
                rows: 400,
                rows_per_commit: 50,
                delete: true,
                create_table: false,
                seconds: None
            }
        );
        assert_eq!(
            steps[3].kind,
            StepKind::Load {
                rows: 100,
                rows_per_commit: 5,
                delete: true,
                create_table: false,
                seconds: None
            }
        );
        assert!(matches!(
            steps[6].kind,
            StepKind::ReadWrite {
                query: QueryKind::Point,
                rate: 100,
                delete: true,
                ..
            }
        ));
    }

    #[test]
    fn profile_2020() {
        let names = profile_steps(Profile::P2020, &RATES_2020);
        assert_eq!(names.len(), 4 + 12);
        assert_eq!(names[4], "q100.1");
        assert_eq!(names[15], "q1000.2");
        let steps = parse_steps(&names, &params(), Profile::P2020).unwrap();
        assert!(matches!(
            steps[3].kind,
            StepKind::Load {
                rows: 500,
                delete: false,
                ..
            }
        ));
        assert!(matches!(
            steps[5].kind,
            StepKind::ReadWrite {
                query: QueryKind::Range,
                rate: 100,
                delete: false,
                ..
            }
        ));
    }

    #[test]
    fn bad_step_names() {
        for bad in ["l.i9", "qr", "qrx", "qp0", "q100", "q100.x", "x"] {
            let e = parse_steps(&[bad.to_string()], &params(), Profile::Default);
            assert!(e.is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn rows2_far_larger_warns() {
        assert!(rows2_warning(1000, 300).is_none());
        assert!(rows2_warning(1000, 4000).is_none());
        assert!(rows2_warning(1000, 40_000).unwrap().contains("40x"));
    }

    fn plan_in() -> PlanIn {
        PlanIn {
            rows: 1000,
            rows2: 500,
            rows_per_commit: 100,
            rows_per_commit_i1: 50,
            rows_per_commit_i2: 5,
            rw_rows_per_commit: 50,
            steps: None,
            profile: Profile::Default,
            rates: None,
            query_seconds: 10.0,
            time: None,
        }
    }

    #[test]
    fn the_plan_takes_the_profiles_rates_and_steps_unless_given() {
        let p = plan(&plan_in()).unwrap();
        assert_eq!(p.params.rates, DEFAULT_RATES);
        assert_eq!(p.steps.len(), 5 + 2 * DEFAULT_RATES.len());
        let p2020 = plan(&PlanIn {
            profile: Profile::P2020,
            ..plan_in()
        })
        .unwrap();
        assert_eq!(p2020.params.rates, RATES_2020);
        assert_eq!(p2020.steps[3].name, "l.i1");
        let given = plan(&PlanIn {
            steps: Some(vec!["l.i0".into(), "qr7".into()]),
            rates: Some(vec![7]),
            ..plan_in()
        })
        .unwrap();
        assert_eq!(given.params.rates, [7]);
        let names: Vec<&str> = given.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["l.i0", "qr7"]);
    }

    #[test]
    fn the_plan_bounds_by_time_and_wants_l_i0_first() {
        let p = plan(&PlanIn {
            time: Some(3.0),
            ..plan_in()
        })
        .unwrap();
        assert!(matches!(
            p.steps[0].kind,
            StepKind::Load { seconds: None, .. }
        ));
        assert!(matches!(
            p.steps[2].kind,
            StepKind::Load {
                seconds: Some(t), ..
            } if t == 3.0
        ));
        let e = plan(&PlanIn {
            steps: Some(vec!["l.x".into(), "l.i0".into()]),
            ..plan_in()
        })
        .unwrap_err();
        assert!(e.to_string().contains("must be the first step"), "{e}");
    }

    #[test]
    fn the_rows2_warning_is_only_for_steps_that_use_rows2() {
        let big = PlanIn {
            rows2: 100_000,
            ..plan_in()
        };
        let p = plan(&big).unwrap();
        let w = warnings(&big, &p.steps);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].1, ["l.i1", "l.i2"]);
        let only_load = plan(&PlanIn {
            steps: Some(vec!["l.i0".into(), "l.x".into()]),
            ..big.clone()
        })
        .unwrap();
        assert!(warnings(&big, &only_load.steps).is_empty());
    }
}

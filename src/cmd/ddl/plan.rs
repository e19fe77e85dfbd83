//! `ixbench ddl`'s plan: the arguments parsed and checked against each other and the shared
//! options, the workload and its table, the request (the change and its indexes), the knob
//! points and the methods (their programs found), all before anything connects; the run's
//! configuration as run.json records it, and the steps the live status line counts.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::DdlArgs;
use crate::dbms::ddl::{DdlKind, DdlRequest, IndexSpec};
use crate::step::schema_tools::Methods;
use crate::step::sweep::{grid, parse_knobs, KnobAxis};
use crate::workload::registry::{self, DdlLoad};

/// The column `--ddl add-column` adds.
const ADDED_COLUMN: &str = "ixb_added";
/// Fewest transactions an interval chosen by ixbench holds at the offered rate (fewer make a
/// per-interval p99 the largest of a handful).
const MIN_TXNS_PER_INTERVAL: f64 = 20.0;
/// The intervals ixbench chooses from, seconds.
const INTERVAL_STEPS: [f64; 5] = [0.1, 0.2, 0.25, 0.5, 1.0];

/// What the arguments decided: the knob points, the request, the workload, the methods.
pub(super) struct Plan {
    pub axes: Vec<KnobAxis>,
    pub req: DdlRequest,
    /// The workload around the schema change, and its load's options.
    pub workload: registry::Entry,
    pub load: DdlLoad,
    pub quiet_timeout: Duration,
    pub methods: Methods,
    /// The indexed columns as given (or the plan's), for the configuration.
    columns: Vec<String>,
}

/// The plan of `args`, or the one-line error of an argument that does not fit.
pub(super) fn plan(args: &DdlArgs) -> Result<Plan> {
    crate::cluster_target::refuse_sharded(&args.common.target, "ddl")?;
    if args.reuse {
        crate::dbms::require_existing_database(&args.common.target, "--reuse")?;
    }
    if let Some(h) = args.recovery_hold.filter(|h| *h > args.recovery_seconds) {
        bail!(
            "--recovery-hold {h} is longer than --recovery-seconds {}: the run would end before \
             the load could hold the band that long",
            args.recovery_seconds
        );
    }
    let axes = parse_knobs(&args.common, &args.knobs)?;
    let (plan_workload, plan_column) = args.plan.workload_and_column();
    let workload_name = args.workload.clone().unwrap_or(plan_workload.into());
    let entry = workload_entry(&workload_name)?;
    let workload_name = entry.name.to_string();
    let target = entry.ddl_target;
    // The plan's column where the plan's table is the workload's; else the workload's own.
    let plan_table = workload_entry(plan_workload)?.ddl_target.table;
    let default_column = if plan_table == target.table {
        plan_column
    } else {
        target.column
    };
    let columns = args
        .columns
        .clone()
        .unwrap_or_else(|| vec![default_column.to_string()]);
    let indexes = index_specs(target.table, &columns, args.unique)?;
    let load = ddl_load(args);
    let tables = (entry.ddl_tables)(&load);
    if args.tables > 1 && tables.len() == 1 {
        bail!("--tables does not apply to --workload {workload_name}: it has one table");
    }
    crate::session::check_common(&args.common, &tables)?;
    let quiet_timeout = crate::options::args::parse_quiet_timeout(args.common.quiet_timeout)?;
    // The methods' programs are found (and their versions checked) before anything starts.
    let methods = Methods::from_args(&args.method, &args.method_opt, args.ddl_command.as_deref())?;
    methods.check_embedded(&args.common.target, args.ddl)?;
    let req = DdlRequest {
        kind: args.ddl,
        lock: args.lock,
        table: target.table.into(),
        pk: target.pk.into(),
        indexes: if matches!(args.ddl, DdlKind::AddIndex | DdlKind::DropIndex) {
            indexes
        } else {
            Vec::new()
        },
        column: ADDED_COLUMN.into(),
    };
    Ok(Plan {
        axes,
        req,
        workload: entry,
        load,
        quiet_timeout,
        methods,
        columns,
    })
}

impl Plan {
    /// The run's configuration, as run.json records it.
    pub(super) fn config(&self, args: &DdlArgs) -> serde_json::Value {
        json!({
            "command": "ddl",
            "target": crate::dbms::redact_url(&args.common.target),
            "engine": args.common.engine,
            "plan": args.plan.name(),
            "workload": self.workload.name,
            "ddl": args.ddl.name(),
            "lock": format!("{:?}", args.lock).to_lowercase(),
            "columns": self.columns,
            "unique": args.unique,
            "tables": args.tables,
            "table_size": args.table_size,
            "reuse": args.reuse,
            "reload": args.reload,
            "threads": args.threads,
            "rate": args.rate,
            "rate_fraction": args.rate_fraction,
            "probe_seconds": args.probe_seconds,
            "baseline_seconds": args.baseline_seconds,
            "recovery_seconds": args.recovery_seconds,
            "recovery_hold": args.recovery_hold,
            "interval": args.interval,
            "ddl_timeout": args.ddl_timeout,
            "ddl_retries": args.ddl_retries,
            "knobs": self.axes.iter().map(|a| json!({"name": a.name, "values": a.values})).collect::<Vec<_>>(),
            "on_error": format!("{:?}", args.on_error).to_lowercase(),
            "max_retries": args.max_retries,
            "arrivals": format!("{:?}", args.arrivals).to_lowercase(),
            "seed": args.common.seed,
            "methods": self.methods.config(),
        })
    }

    /// The steps the live status line counts: the load, the probe, every point (a baseline,
    /// the DDL and a recovery: at least the two windows).
    pub(super) fn show_progress(&self, args: &DdlArgs) {
        use crate::progress::{start, Planned};
        let mut planned = Vec::new();
        if !args.reuse {
            planned.push(("load".to_string(), Planned::Unknown));
        }
        if args.rate.is_none() {
            planned.push(("probe".to_string(), Planned::Seconds(args.probe_seconds)));
        }
        let n = grid(&self.axes).len() * self.methods.list.len();
        for p in 1..=n {
            planned.push((format!("point {p}/{n}"), Planned::Unknown));
        }
        start(planned);
    }
}

/// The timeline's interval for a point, and how it was chosen: `--interval`; else a tenth of
/// the DDL's length at an earlier point (`ddl_secs`), never finer than an interval in which
/// the offered `rate` completes [`MIN_TXNS_PER_INTERVAL`] transactions, at most 1 s; with no
/// earlier DDL, that finest interval.
pub fn choose_interval(
    given: Option<f64>,
    rate: Option<f64>,
    ddl_secs: Option<f64>,
) -> (f64, String) {
    if let Some(v) = given {
        return (v, "--interval".into());
    }
    let step_at_least = |v: f64| {
        INTERVAL_STEPS
            .iter()
            .copied()
            .find(|s| *s >= v - 1e-9)
            .unwrap_or(1.0)
    };
    let finest = match rate.filter(|r| *r > 0.0) {
        Some(r) => step_at_least(MIN_TXNS_PER_INTERVAL / r),
        None => 1.0,
    };
    let rate_text = rate.map_or(String::new(), |r| {
        format!("the finest in which {r:.0} TPS completes {MIN_TXNS_PER_INTERVAL:.0} transactions")
    });
    match ddl_secs.filter(|s| *s > 0.0) {
        Some(d) => {
            let want = INTERVAL_STEPS
                .iter()
                .rev()
                .copied()
                .find(|s| *s <= d / 10.0 + 1e-9)
                .unwrap_or(INTERVAL_STEPS[0]);
            let v = want.max(finest);
            let why = if v > want {
                rate_text
            } else {
                format!("a tenth of the {d:.2} s DDL at the point before, at most 1 s")
            };
            (v, why)
        }
        None => (finest, rate_text),
    }
}

/// The indexes of `--columns` (or the plan's column): `c,pad` is two indexes, `a+b` one on two
/// columns; named `<table>_<cols>_ixb`.
pub fn index_specs(table: &str, columns: &[String], unique: bool) -> Result<Vec<IndexSpec>> {
    let mut out = Vec::new();
    for c in columns {
        let cols: Vec<String> = c
            .split('+')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
        if cols.is_empty() {
            bail!("--columns has an empty entry");
        }
        for col in &cols {
            crate::dbms::ddl::check_ident(col).with_context(|| format!("--columns {c:?}"))?;
        }
        let name = format!("{table}_{}_ixb", cols.join("_"));
        if out.iter().any(|i: &IndexSpec| i.name == name) {
            bail!("--columns names {c} twice");
        }
        out.push(IndexSpec {
            table: table.into(),
            name,
            columns: cols,
            unique,
        });
    }
    if out.is_empty() {
        bail!("--columns is empty");
    }
    Ok(out)
}

/// The options of the load around the schema change.
fn ddl_load(args: &DdlArgs) -> DdlLoad {
    DdlLoad {
        tables: args.tables,
        table_size: args.table_size,
        threads: args.threads,
        rand_type: args.rand_type,
        seed: args.common.seed,
    }
}

/// The registered workload `name` (an OLTP mix, the insert benchmark, the time series).
fn workload_entry(name: &str) -> Result<registry::Entry> {
    match registry::parse_arg(name) {
        Ok(n) => Ok(registry::find(&n).expect("a parsed workload is registered")),
        Err(e) => bail!(
            "{}",
            e.replacen("unknown workload", "unknown --workload", 1)
        ),
    }
}

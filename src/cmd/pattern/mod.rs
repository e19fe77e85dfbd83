//! `ixbench pattern`: `infer` (the geek code of an observed key stream), `code` (the geek code
//! of pattern specs, or of the insert benchmark's indexes) and `gen` (print a pattern's keys).

pub mod cost;

use std::io::{BufRead, Read, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use crate::pattern::code::{line, GeekCode};
use crate::pattern::gen::KeyGen;
use crate::pattern::infer::{infer, Dir, InferOptions, Inference, OrdF64};
use crate::pattern::spec::{Spec, NOISE_MAX};

/// Options of `ixbench pattern`.
#[derive(Debug, Clone, Args)]
pub struct PatternArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PatternCommand,
}

/// Subcommands of `ixbench pattern`.
#[derive(Debug, Clone, Subcommand)]
pub enum PatternCommand {
    /// Infer the geek code of keys in insertion order (a file or stdin).
    Infer(InferArgs),
    /// Print the geek code of pattern specs (`asc`, `streams:4`, `pdc=lr`, ...).
    Code(CodeArgs),
    /// Print the keys of a pattern, one per line, in insertion order.
    Gen(GenArgs),
    /// The same load with the secondary keys right-growing, random or in streams, on each
    /// engine on throwaway servers with a small cache: insert rate, server CPU, I/O and
    /// reads per inserted row.
    Cost(cost::CostArgs),
}

/// Input format of `pattern infer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// CSV: the keys are one column (`--column`).
    Csv,
    /// Keys separated by white space or commas.
    Text,
}

/// How keys compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeyKind {
    /// As numbers (integers, or decimals when any key has a fraction or exponent).
    Number,
    /// As strings, byte by byte (ISO timestamps sort right this way).
    Text,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The geek code, then one line of evidence.
    Text,
    /// One JSON object.
    Json,
}

/// Options of `ixbench pattern infer`.
#[derive(Debug, Clone, Args)]
pub struct InferArgs {
    /// File of keys in insertion order; `-` (the default) reads stdin.
    #[arg(default_value = "-")]
    pub file: String,

    /// Column of the keys: its number (1 = first) in CSV input (implies `--format csv`), or
    /// its name with `--table`.
    #[arg(long)]
    pub column: Option<String>,

    /// Read the keys from this table of `--target` (read-only) instead of a file.
    #[arg(long, requires = "column")]
    pub table: Option<String>,

    /// With --table: the database, as other commands take it (`sqlite:PATH`,
    /// `postgres://USER@HOST:PORT/DB`, `mysql://USER@HOST:PORT/DB`).
    #[arg(long, requires = "table")]
    pub target: Option<String>,

    /// With --table: the insertion order to read the keys in (columns, comma-separated).
    /// Default: SQLite `rowid`, PostgreSQL `ctid` (heap order: insertion order while nothing
    /// was deleted or updated), MySQL/MariaDB the PK.
    #[arg(long, requires = "table")]
    pub order_by: Option<String>,

    /// Input format. Default: csv for a `.csv` file or with `--column`, else text.
    #[arg(long, value_enum)]
    pub format: Option<InputFormat>,

    /// The CSV input has a header line (its name for the column becomes the default --name).
    #[arg(long)]
    pub header: bool,

    /// How keys compare: number (a non-numeric key is an error) or text.
    #[arg(long = "compare", value_enum, default_value_t = KeyKind::Number)]
    pub compare: KeyKind,

    /// The first N keys are the index's content before the observed inserts (not classified).
    #[arg(long, default_value_t = 0)]
    pub existing: usize,

    /// Largest share of keys that may be left out as out-of-order noise, in [0, 0.5).
    #[arg(long, default_value_t = NOISE_MAX, value_parser = parse_noise)]
    pub noise: f64,

    /// Index name written before the code. Default: the CSV header's name, else `pk`.
    #[arg(long)]
    pub name: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

fn parse_noise(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..0.5).contains(&v) => Ok(v),
        _ => Err("expected a share in [0, 0.5), e.g. 0.1".into()),
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("expected rows per second, more than 0".into()),
    }
}

/// Options of `ixbench pattern code`.
#[derive(Debug, Clone, Args)]
pub struct CodeArgs {
    /// Pattern specs, each `SPEC` or `NAME=SPEC` (e.g. `pk=asc pdc=streams:4`).
    #[arg(required_unless_present = "iibench")]
    pub specs: Vec<String>,

    /// Print the insert benchmark's own codes (PK and secondary indexes), derived from how its
    /// rows are made.
    #[arg(long, conflicts_with = "specs")]
    pub iibench: bool,

    /// With --iibench: secondary indexes (0-3).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub secondary_indexes: u8,

    /// With --iibench: rows inserted per table (below 500, pdc's 500 insert points are more
    /// than the rows and it is random).
    #[arg(long, default_value_t = 10_000_000)]
    pub rows: u64,

    /// With --iibench: insert rate, rows/s per table (pdc is 500 streams below 250 rows/s,
    /// random from there on: see the README).
    #[arg(long, default_value_t = 100.0, value_parser = parse_rate)]
    pub rate: f64,

    /// Print every attribute, zeros too (`nAsc:1, nDesc:0, nLHS:0, nRHS:1`).
    #[arg(long)]
    pub long: bool,
}

/// Options of `ixbench pattern gen`.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Pattern spec.
    pub spec: String,

    /// Number of keys.
    #[arg(long, short = 'n', default_value_t = 1000)]
    pub count: u64,

    /// Seed of the random keys.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Smallest key of the key range.
    #[arg(long, default_value_t = i32::MIN as i64, allow_hyphen_values = true)]
    pub min: i64,

    /// Largest key of the key range.
    #[arg(long, default_value_t = i32::MAX as i64, allow_hyphen_values = true)]
    pub max: i64,
}

/// Run `ixbench pattern ...`; the exit status on success.
pub fn run(args: &PatternArgs) -> Result<u8> {
    run_with(args, &std::sync::atomic::AtomicBool::new(false))
}

/// [`run`], with the process's stop flag (`pattern cost` runs stop at it).
pub fn run_with(args: &PatternArgs, interrupt: &std::sync::atomic::AtomicBool) -> Result<u8> {
    if let PatternCommand::Cost(a) = &args.command {
        return cost::run(a, interrupt);
    }
    let mut out = std::io::stdout().lock();
    match &args.command {
        PatternCommand::Infer(a) => run_infer(a, &mut out),
        PatternCommand::Code(a) => run_code(a, &mut out),
        PatternCommand::Gen(a) => run_gen(a, &mut out),
        PatternCommand::Cost(_) => unreachable!("handled above"),
    }?;
    Ok(0)
}

fn parse_spec(s: &str) -> Result<Spec> {
    s.parse::<Spec>().map_err(|e| anyhow!(e))
}

fn run_code(a: &CodeArgs, out: &mut impl Write) -> Result<()> {
    let codes: Vec<(String, GeekCode)> = if a.iibench {
        // The default workload's codes, from its registry entry.
        let entry = crate::workload::registry::default_entry();
        let hooks = entry
            .lab
            .ok_or_else(|| anyhow!("the {} workload has no index codes", entry.name))?;
        (hooks.codes)(a.secondary_indexes as usize, a.rows, a.rate)
    } else {
        let mut v = Vec::new();
        for s in &a.specs {
            v.push(
                crate::pattern::spec::parse_named(s, "pk")
                    .map(|(n, sp)| (n, sp.code()))
                    .map_err(|e| anyhow!(e))?,
            );
        }
        v
    };
    let text = if a.long {
        codes
            .iter()
            .map(|(n, c)| format!("{n}={}", c.long_form()))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        line(&codes)
    };
    writeln!(out, "{text}")?;
    Ok(())
}

fn run_gen(a: &GenArgs, out: &mut impl Write) -> Result<()> {
    let spec = parse_spec(&a.spec)?;
    let gen = KeyGen::new(&spec, a.seed, a.min, a.max, a.count).map_err(|e| anyhow!(e))?;
    let mut w = std::io::BufWriter::new(out);
    for k in gen.take(a.count as usize) {
        if let Err(e) = writeln!(w, "{k}") {
            // a closed pipe (`| head`) ends the output quietly
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e.into());
        }
    }
    match w.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// Keys as they are read, kept compactly: integers while every key is one, then numbers,
/// or text.
enum Keys {
    Int(Vec<i128>),
    Float(Vec<OrdF64>),
    Text(Vec<String>),
}

impl Keys {
    fn new(kind: KeyKind) -> Self {
        match kind {
            KeyKind::Number => Keys::Int(Vec::new()),
            KeyKind::Text => Keys::Text(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Keys::Int(v) => v.len(),
            Keys::Float(v) => v.len(),
            Keys::Text(v) => v.len(),
        }
    }

    /// Add one key read on `line`.
    fn push(&mut self, t: &str, line: u64) -> Result<()> {
        let nan = || {
            anyhow!(
                "line {line}: {t:?} is not a number (use --compare text to compare keys as text)"
            )
        };
        match self {
            Keys::Text(v) => v.push(t.to_string()),
            Keys::Int(v) => match t.parse::<i128>() {
                Ok(i) => v.push(i),
                Err(_) => {
                    let f = t
                        .parse::<f64>()
                        .ok()
                        .filter(|f| !f.is_nan())
                        .ok_or_else(nan)?;
                    let mut fl: Vec<OrdF64> = v.iter().map(|&i| OrdF64(i as f64)).collect();
                    fl.push(OrdF64(f));
                    *self = Keys::Float(fl);
                }
            },
            Keys::Float(v) => {
                let f = t
                    .parse::<f64>()
                    .ok()
                    .filter(|f| !f.is_nan())
                    .ok_or_else(nan)?;
                v.push(OrdF64(f));
            }
        }
        Ok(())
    }

    fn infer(&self, opts: &InferOptions) -> Result<Inference> {
        if self.len() == 0 {
            bail!("no keys to infer a pattern from (empty input)");
        }
        match self {
            Keys::Int(v) => infer(v, opts),
            Keys::Float(v) => infer(v, opts),
            Keys::Text(v) => infer(v, opts),
        }
        .map_err(|e| anyhow!(e))
    }
}

/// Read the keys of the input; also the CSV header's name of the column (if any).
fn read_keys(a: &InferArgs) -> Result<(Keys, Option<String>)> {
    let input = open_input(a)?;
    let format = a.format.unwrap_or_else(|| {
        let csv_name = Path::new(&a.file)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if a.column.is_some() || csv_name {
            InputFormat::Csv
        } else {
            InputFormat::Text
        }
    });
    let column: Option<u32> = match &a.column {
        None => None,
        Some(c) => Some(
            c.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    anyhow!("--column {c:?}: a column number (1 = first) for CSV input; a name needs --table")
                })?,
        ),
    };
    if format == InputFormat::Text && a.column.is_some() {
        bail!("--column needs CSV input (--format csv)");
    }
    if format == InputFormat::Text && a.header {
        bail!("--header needs CSV input (--format csv)");
    }
    let mut keys = Keys::new(a.compare);
    let header = match format {
        InputFormat::Text => {
            read_text(input, &a.file, &mut keys)?;
            None
        }
        InputFormat::Csv => read_csv(input, column.unwrap_or(1) as usize - 1, a.header, &mut keys)?,
    };
    Ok((keys, header))
}

/// The input of `infer`: the file, or stdin when it is `-` (refused on a terminal), past a
/// byte-order mark.
fn open_input(a: &InferArgs) -> Result<std::io::BufReader<Box<dyn Read>>> {
    let input: Box<dyn Read> = if a.file == "-" {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() {
            bail!("no keys: give a FILE or pipe the keys in (ixbench pattern infer --help)");
        }
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(&a.file).with_context(|| format!("cannot read {}", a.file))?)
    };
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    // saved by a Windows editor: a byte-order mark first (CRLF ends are white space)
    crate::input::skip_bom(&mut input).map_err(|e| anyhow!("cannot read {}: {e}", a.file))?;
    Ok(input)
}

/// Keys separated by white space or commas, into `keys` (`file` names the input in errors).
fn read_text(mut lines: impl BufRead, file: &str, keys: &mut Keys) -> Result<()> {
    let mut l = String::new();
    let mut no = 0u64;
    loop {
        l.clear();
        let n = lines
            .read_line(&mut l)
            .map_err(|e| anyhow!("cannot read {file}: {e}"))?;
        if n == 0 {
            return Ok(());
        }
        no += 1;
        for t in l
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            keys.push(t, no)?;
        }
    }
}

/// The keys of CSV column `col` (0 = first), into `keys`; with `header`, the header's name of
/// the column.
fn read_csv(input: impl Read, col: usize, header: bool, keys: &mut Keys) -> Result<Option<String>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(header)
        .flexible(true)
        .from_reader(input);
    let name = if header {
        let h = rdr.headers().context("cannot read the CSV header")?;
        Some(
            h.get(col)
                .ok_or_else(|| {
                    anyhow!(
                        "the CSV header has {} columns, no column {}",
                        h.len(),
                        col + 1
                    )
                })?
                .trim()
                .to_string(),
        )
    } else {
        None
    };
    let mut rec = csv::StringRecord::new();
    loop {
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => bail!("bad CSV: {e}"),
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        if rec.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let f = rec.get(col).ok_or_else(|| {
            anyhow!(
                "line {line}: no column {} (the row has {})",
                col + 1,
                rec.len()
            )
        })?;
        let f = f.trim();
        if f.is_empty() {
            bail!("line {line}: empty key in column {}", col + 1);
        }
        keys.push(f, line)?;
    }
    Ok(name)
}

fn run_infer(a: &InferArgs, out: &mut impl Write) -> Result<()> {
    let (keys, header) = match &a.table {
        Some(t) => {
            let target = a.target.as_deref().ok_or_else(|| {
                anyhow!("--table needs --target (sqlite:PATH, postgres://..., mysql://...)")
            })?;
            let col = a.column.as_deref().unwrap_or_default();
            let mut keys = Keys::new(a.compare);
            crate::pattern::table::read_column(
                target,
                t,
                col,
                a.order_by.as_deref(),
                &mut |row, v| keys.push(v, row),
            )?;
            (keys, Some(col.to_string()))
        }
        None => read_keys(a)?,
    };
    let opts = InferOptions {
        existing: a.existing,
        noise: a.noise,
    };
    let inf = keys.infer(&opts)?;
    let name = a
        .name
        .clone()
        .or(header.filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "pk".to_string());
    match a.output {
        OutputFormat::Text => {
            writeln!(out, "{}", inf.code.named(&name))?;
            writeln!(out, "{}", inf.summary())?;
        }
        OutputFormat::Json => {
            let streams: Vec<serde_json::Value> = inf
                .streams
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "direction": if s.dir == Dir::Asc { "asc" } else { "desc" },
                        "keys": s.keys,
                        "at_end": s.at_end,
                        "first": s.first,
                    })
                })
                .collect();
            let v = serde_json::json!({
                "name": name,
                "code": inf.code.to_string(),
                "geek_code": inf.code.named(&name),
                "confidence": inf.confidence,
                "keys": inf.keys,
                "existing": a.existing,
                "out_of_order": inf.out_of_order,
                "raw_streams": inf.raw_streams,
                "streams": streams,
            });
            writeln!(out, "{v}")?;
        }
    }
    Ok(())
}

//! The results directory: `run.json` (rewritten atomically after every step) and
//! `intervals.ndjson` (one line per interval, flushed as soon as it is printed).

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::RunResult;
use crate::measure::interval::IntervalLine;
use crate::measure::txn::TxnLine;

/// A file of [`RESERVE_BYTES`] kept in the results directory while the run goes on: on a full
/// disk it is removed so the last run.json (status failed, with what was measured) still fits.
/// Removed once run.json has its final status.
const RESERVE: &str = "run.json.reserve";
const RESERVE_BYTES: usize = 256 * 1024;

/// An open results directory.
pub struct Store {
    dir: PathBuf,
    intervals: BufWriter<File>,
}

impl Store {
    /// Create the results directory. `explicit` is the user's `--out`: it must not exist and
    /// its parent must. Without it, `./ixbench-results/<timestamp>` is made.
    pub fn create(explicit: Option<&Path>, timestamp: &str) -> Result<Self> {
        let dir = match explicit {
            Some(d) => {
                if d.exists() {
                    bail!(
                        "results directory {} already exists: choose a new --out",
                        d.display()
                    );
                }
                let parent = match d.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if !parent.is_dir() {
                    bail!(
                        "cannot create results directory {}: {} does not exist",
                        d.display(),
                        parent.display()
                    );
                }
                std::fs::create_dir(d)
                    .with_context(|| format!("cannot create results directory {}", d.display()))?;
                d.to_path_buf()
            }
            None => Self::new_default_dir(&PathBuf::from("ixbench-results"), timestamp)?,
        };
        let f = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(dir.join("intervals.ndjson"))
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        // Room kept for run.json on a disk that fills up during the run (best effort).
        let _ = std::fs::write(dir.join(RESERVE), vec![0u8; RESERVE_BYTES]);
        Ok(Store {
            dir,
            intervals: BufWriter::new(f),
        })
    }

    /// A new directory `BASE/TIMESTAMP`, or `BASE/TIMESTAMP-2`, `-3`, ... when a run of the
    /// same second has it: two runs started in one second (a scripted loop of short runs, or
    /// several processes) each get their own. `create_dir` makes the choice atomic.
    pub fn new_default_dir(base: &Path, timestamp: &str) -> Result<PathBuf> {
        std::fs::create_dir_all(base)
            .with_context(|| format!("cannot create results directory {}", base.display()))?;
        for n in 1..=1000u32 {
            let d = if n == 1 {
                base.join(timestamp)
            } else {
                base.join(format!("{timestamp}-{n}"))
            };
            match std::fs::create_dir(&d) {
                Ok(()) => return Ok(d),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create results directory {}", d.display())
                    })
                }
            }
        }
        bail!(
            "{}: 1000 results directories named {timestamp}-N already exist: give --out",
            base.display()
        )
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Remove the results directory of a run that failed before it measured anything (only
    /// the files ixbench put there: intervals.ndjson, ixbench.sqlite and its WAL files).
    pub fn discard(self) {
        for f in [
            RESERVE,
            "intervals.ndjson",
            "ixbench.sqlite",
            "ixbench.sqlite-wal",
            "ixbench.sqlite-shm",
        ] {
            let _ = std::fs::remove_file(self.dir.join(f));
        }
        // Fails (and keeps the directory) if anything else is in it.
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// Append one interval and flush it to the file.
    pub fn append_interval(&mut self, line: &IntervalLine) -> Result<()> {
        self.append_json(line)
    }

    /// Append one line of any other kind (a transaction step's [`crate::measure::txn::TxnLine`])
    /// and flush it to the file.
    pub fn append_json<T: serde::Serialize>(&mut self, line: &T) -> Result<()> {
        let mut text = serde_json::to_vec(line)?;
        text.push(b'\n');
        let r = self
            .intervals
            .write_all(&text)
            .and_then(|()| self.intervals.flush());
        r.map_err(|e| write_error(&self.dir, "intervals.ndjson", e))
    }

    /// Write `run.json` atomically (temp file + rename), so a reader never sees half a file.
    ///
    /// On a full disk the temp file is removed and run.json is rewritten in place (the space
    /// of the old one is the new one's: a run that failed for the full disk is still marked
    /// failed, with what it measured); if even that does not fit, the old run.json is put
    /// back and the error names the disk.
    pub fn write_run(&self, run: &RunResult) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(run)?;
        text.push(b'\n');
        let tmp = self.dir.join("run.json.tmp");
        let path = self.dir.join("run.json");
        let atomic = (|| -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&text)?;
            f.sync_data()?;
            std::fs::rename(&tmp, &path)
        })();
        let reserve = self.dir.join(RESERVE);
        let atomic = match atomic {
            Err(e)
                if e.raw_os_error() == Some(nix::errno::Errno::ENOSPC as i32)
                    && reserve.exists() =>
            {
                // The room kept for this moment.
                let _ = std::fs::remove_file(&tmp);
                let _ = std::fs::remove_file(&reserve);
                return self.write_run(run);
            }
            r => r,
        };
        let Err(e) = atomic else {
            if run.status != super::Status::Running {
                let _ = std::fs::remove_file(&reserve);
            }
            return Ok(());
        };
        let _ = std::fs::remove_file(&tmp);
        if e.raw_os_error() != Some(nix::errno::Errno::ENOSPC as i32) {
            return Err(write_error(&self.dir, "run.json", e));
        }
        let old = std::fs::read(&path).unwrap_or_default();
        let in_place = |bytes: &[u8]| -> std::io::Result<()> {
            let mut f = OpenOptions::new().write(true).truncate(true).open(&path)?;
            f.write_all(bytes)?;
            f.sync_data()
        };
        match in_place(&text) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = in_place(&old);
                Err(write_error(&self.dir, "run.json", e))
            }
        }
    }

    /// The interval lines written so far (flushed first), for a report: a step's and a
    /// transaction workload's.
    pub fn intervals_so_far(&mut self) -> Result<(Vec<IntervalLine>, Vec<TxnLine>)> {
        self.intervals
            .flush()
            .context("cannot write intervals.ndjson")?;
        let path = self.dir.join("intervals.ndjson");
        Ok((read_intervals(&path)?, read_txn_lines(&path)?))
    }

    /// Write a text file into the results directory.
    pub fn write_file(&self, name: &str, contents: &str) -> Result<()> {
        std::fs::write(self.dir.join(name), contents)
            .with_context(|| format!("cannot write {name}"))
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(RESERVE));
    }
}

/// The error of a write of `file` in the results directory `dir`: a full disk says so, naming
/// the directory (its file system is the one to free, or --out another).
fn write_error(dir: &Path, file: &str, e: std::io::Error) -> anyhow::Error {
    if e.raw_os_error() == Some(nix::errno::Errno::ENOSPC as i32) {
        anyhow::anyhow!(
            "the disk holding the results directory {} is full: cannot write {file} ({e}); \
             free space on it (df {}), or give --out on another disk",
            dir.display(),
            dir.display()
        )
    } else {
        anyhow::anyhow!("cannot write {}: {e}", dir.join(file).display())
    }
}

/// Read a `run.json`, after checking its `schema_version`.
pub fn read_run(path: &Path) -> Result<RunResult> {
    let text = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not an ixbench run.json", path.display()))?;
    super::schema::check_version(&v, path)?;
    // From the text, not the value: a workload's records keep their fields' order.
    serde_json::from_slice(&text)
        .with_context(|| format!("{} is not an ixbench run.json", path.display()))
}

/// Refuse an output file (`what`: the option naming it) that would overwrite an input: one of
/// the `inputs` itself, or a file inside an input directory (a run's `run.json`, its report).
/// A new file, or one outside every input, is fine.
pub fn refuse_overwriting_inputs(what: &str, out: &Path, inputs: &[PathBuf]) -> Result<()> {
    let Ok(o) = out.canonicalize() else {
        return Ok(()); // does not exist yet: nothing to overwrite
    };
    for i in inputs {
        let Ok(i) = i.canonicalize() else { continue };
        if o == i || (i.is_dir() && o.starts_with(&i)) {
            bail!(
                "{what} {}: that would overwrite {} of the input {}; write it elsewhere",
                out.display(),
                if o == i { "the file" } else { "a file" },
                i.display()
            );
        }
    }
    Ok(())
}

/// Read an `intervals.ndjson`. A missing file is no intervals. A last line cut short (no
/// newline after it: a run killed while writing it) is skipped; any other line that is not
/// JSON is an error naming it: dropping it would make the intervals disagree with the totals
/// without a word. JSON lines of other kinds (DDL timelines) are not a step's and are skipped.
pub fn read_intervals(path: &Path) -> Result<Vec<IntervalLine>> {
    read_lines(path)
}

/// The interval lines of a transaction workload (`oltp`, `timeseries`, `ddl`'s load) in an
/// `intervals.ndjson`, read as [`read_intervals`] reads a step's (other lines skipped).
pub fn read_txn_lines(path: &Path) -> Result<Vec<TxnLine>> {
    read_lines(path)
}

/// The lines of one kind `T` of an `intervals.ndjson` (see [`read_intervals`]).
fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let cut_short = !text.is_empty() && !text.ends_with('\n');
    let n = text.lines().count();
    let mut out = Vec::with_capacity(n);
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        // Valid JSON of another kind (a DDL timeline row, a transaction workload's line) is
        // not an interval line of a step: skipped, as before.
        match serde_json::from_str::<serde_json::Value>(l) {
            Ok(v) => {
                if let Ok(line) = serde_json::from_value(v) {
                    out.push(line)
                }
            }
            Err(_) if cut_short && i + 1 == n => {}
            Err(e) => bail!(
                "{} line {} is damaged ({e}): repair or remove that line",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_one_second_get_their_own_directories() {
        let base = std::env::temp_dir().join(format!("ixbench-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let a = Store::new_default_dir(&base, "20261128-121804").unwrap();
        let b = Store::new_default_dir(&base, "20261128-121804").unwrap();
        let c = Store::new_default_dir(&base, "20261128-121804").unwrap();
        assert_eq!(a, base.join("20261128-121804"));
        assert_eq!(b, base.join("20261128-121804-2"));
        assert_eq!(c, base.join("20261128-121804-3"));
        std::fs::remove_dir_all(&base).unwrap();
    }
}

//! A load bigger than one process, without a coordinator (as the cockroach workload does it):
//! each process is told which part of the run it is (`--client-id K --client-count N`), takes
//! its own tables and seeds from that alone, can wait for a common start time (`--start-at`),
//! and writes its own results; `ixbench merge` ([`crate::cmd::merge`]) adds them up afterwards.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::pattern::derive_seed;

/// Largest `--client-count`.
pub const MAX_CLIENT_COUNT: u64 = 65_536;

/// Longest wait `--start-at` may ask for.
pub const MAX_START_WAIT: Duration = Duration::from_secs(24 * 3600);

/// Which part of a several-process run this process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientPart {
    /// `--client-id`, 0-based.
    pub id: u64,
    /// `--client-count`.
    pub count: u64,
    /// `--clients` of each process (every process of the run has the same).
    pub clients: u64,
}

impl ClientPart {
    /// The part `--client-id`/`--client-count` name (both or neither), checked.
    pub fn new(id: Option<u64>, count: Option<u64>, clients: u64) -> Result<Option<ClientPart>> {
        match (id, count) {
            (None, None) => Ok(None),
            (Some(id), Some(count)) => {
                if count == 0 || count > MAX_CLIENT_COUNT {
                    bail!("--client-count {count}: must be between 1 and {MAX_CLIENT_COUNT}");
                }
                if id >= count {
                    bail!(
                        "--client-id {id} with --client-count {count}: the id must be 0..{} (0-based)",
                        count - 1
                    );
                }
                Ok(Some(ClientPart { id, count, clients }))
            }
            _ => bail!("--client-id and --client-count go together"),
        }
    }

    /// The global numbers (1-based) of this process's tables: client `c` of process `K` is
    /// client `K * clients + c` of the run, so the processes' tables never overlap.
    pub fn table_numbers(&self) -> std::ops::RangeInclusive<u64> {
        let first = self.id * self.clients + 1;
        first..=first + self.clients - 1
    }

    /// This process's seed: derived from the run's seed and the client id, so the processes
    /// generate different rows and queries, each reproducibly.
    pub fn seed(&self, run_seed: u64) -> u64 {
        derive_seed(run_seed, &[0x636c_6965_6e74, self.id])
    }
}

/// Table names of one process: `PREFIX1..PREFIXn` alone, or its part's numbers.
pub fn table_names(
    prefix: &str,
    clients: u64,
    shared: bool,
    part: Option<&ClientPart>,
) -> Result<Vec<String>> {
    match part {
        Some(p) if p.count > 1 && shared => bail!(
            "--shared-table with --client-count {}: several processes cannot share one table without a coordinator (its creation and its deletes); use one table per client",
            p.count
        ),
        Some(p) => Ok(p.table_numbers().map(|i| format!("{prefix}{i}")).collect()),
        None => {
            let n = if shared { 1 } else { clients };
            Ok((1..=n).map(|i| format!("{prefix}{i}")).collect())
        }
    }
}

/// Parse `--start-at`: RFC 3339 (`2026-11-23T16:00:00Z`) or Unix seconds (`1795449600`,
/// fractions allowed). Returns Unix seconds.
pub fn parse_start_at(s: &str) -> Result<f64> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        if v.is_finite() && v > 0.0 {
            return Ok(v);
        }
        bail!("--start-at {s:?}: Unix seconds must be a positive number");
    }
    let d = chrono::DateTime::parse_from_rfc3339(t).with_context(|| {
        format!("--start-at {s:?}: expected RFC 3339 (2026-11-23T16:00:00Z) or Unix seconds")
    })?;
    Ok(d.timestamp() as f64 + f64::from(d.timestamp_subsec_nanos()) / 1e9)
}

fn now_unix() -> f64 {
    crate::measure::clock::wall_now().as_secs_f64()
}

/// How long until `at` (Unix seconds): an error when it is more than a second past (the
/// processes would not start together) or more than [`MAX_START_WAIT`] away.
pub fn wait_for_start(at: f64) -> Result<Duration> {
    let d = at - now_unix();
    if d < -1.0 {
        bail!(
            "--start-at is {:.1} s in the past: the processes would not start together; give a later time",
            -d
        );
    }
    if d > MAX_START_WAIT.as_secs_f64() {
        bail!("--start-at is {:.0} s away: at most 24 hours", d);
    }
    Ok(Duration::from_secs_f64(d.max(0.0)))
}

/// Sleep until `at` (Unix seconds), waking to notice Ctrl-C. Returns false if interrupted.
pub fn sleep_until_unix(at: f64, interrupt: &AtomicBool) -> bool {
    loop {
        if interrupt.load(Ordering::SeqCst) {
            return false;
        }
        let d = at - now_unix();
        if d <= 0.0 {
            return true;
        }
        std::thread::sleep(Duration::from_secs_f64(d.min(0.1)));
    }
}

/// The settings every part of one run shares: a part's `run.json` config without what differs
/// per part (`client_part`, `tables`, `seed`). Parts may connect to different servers of one
/// cluster (each writing through its own Galera node): the target's host and port are left
/// out, its kind and database stay.
pub fn shared_config(config: &serde_json::Value) -> serde_json::Value {
    let mut c = config.clone();
    if let Some(o) = c.as_object_mut() {
        for k in ["client_part", "tables", "seed"] {
            o.remove(k);
        }
        if let Some(t) = o
            .get("target")
            .and_then(|t| t.as_str())
            .map(without_address)
        {
            o.insert("target".into(), t.into());
        }
    }
    c
}

/// `scheme://user@host:port/db?x` -> `scheme://user@*/db?x`; other targets as they are.
pub fn without_address(target: &str) -> String {
    let Some((scheme, rest)) = target.split_once("://") else {
        return target.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let user = authority.rsplit_once('@').map(|(u, _)| format!("{u}@"));
    format!("{scheme}://{}*{path}", user.unwrap_or_default())
}

/// The key every part of one run derives alike and two runs do not share: a stable hash
/// (FNV-1a, the same on every host and build) of the settings the parts share
/// ([`shared_config`]: the run's seed, `--client-count`, `--start-at`, the plan, the target's
/// kind and database, ...). `--start-at` must lie ahead when a run starts, so two separate runs
/// of the same settings have different keys.
pub fn run_key(config: &serde_json::Value) -> String {
    let text = shared_config(config).to_string();
    let fnv = |basis: u64| {
        text.bytes().fold(basis, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    format!(
        "{:016x}{:016x}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_split_tables_and_seeds() {
        let a = ClientPart::new(Some(0), Some(3), 2).unwrap().unwrap();
        let b = ClientPart::new(Some(2), Some(3), 2).unwrap().unwrap();
        assert_eq!(table_names("t", 2, false, Some(&a)).unwrap(), ["t1", "t2"]);
        assert_eq!(table_names("t", 2, false, Some(&b)).unwrap(), ["t5", "t6"]);
        assert_ne!(a.seed(7), b.seed(7));
        assert_eq!(
            a.seed(7),
            ClientPart {
                id: 0,
                count: 3,
                clients: 2
            }
            .seed(7)
        );
        assert_eq!(table_names("t", 3, true, None).unwrap(), ["t1"]);
        assert!(table_names("t", 2, true, Some(&a)).is_err());
    }

    #[test]
    fn parts_share_a_run_key() {
        let a = serde_json::json!({"seed": 1, "tables": ["pi1"], "client_part": {"id": 0},
            "run_seed": 7, "start_at_unix": 100.5, "target": "postgres://u@h1:5432/db"});
        let b = serde_json::json!({"seed": 2, "tables": ["pi2"], "client_part": {"id": 1},
            "run_seed": 7, "start_at_unix": 100.5, "target": "postgres://u@h2:5433/db"});
        assert_eq!(run_key(&a), run_key(&b));
        assert_eq!(run_key(&a).len(), 32);
        for (k, v) in [
            ("start_at_unix", serde_json::json!(101.0)),
            ("run_seed", serde_json::json!(8)),
            ("target", serde_json::json!("postgres://u@h1:5432/other")),
        ] {
            let mut c = b.clone();
            c[k] = v;
            assert_ne!(run_key(&a), run_key(&c), "{k}");
        }
    }

    #[test]
    fn bad_parts() {
        assert!(ClientPart::new(Some(3), Some(3), 1).is_err());
        assert!(ClientPart::new(Some(0), Some(0), 1).is_err());
        assert!(ClientPart::new(Some(0), None, 1).is_err());
        assert!(ClientPart::new(None, None, 1).unwrap().is_none());
    }

    #[test]
    fn start_times() {
        assert_eq!(parse_start_at("1795449600").unwrap(), 1795449600.0);
        assert_eq!(
            parse_start_at("2026-11-23T16:00:00Z").unwrap(),
            parse_start_at("2026-11-23T17:00:00+01:00").unwrap()
        );
        assert!(parse_start_at("tomorrow").is_err());
        assert!(wait_for_start(now_unix() - 10.0).is_err());
        assert!(wait_for_start(now_unix() + 1e6).is_err());
        assert!(wait_for_start(now_unix() + 2.0).unwrap() <= Duration::from_secs(2));
    }
}

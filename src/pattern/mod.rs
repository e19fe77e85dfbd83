//! Insert patterns (issue 9, seed 000): in what order do inserts hit each index?
//!
//! - [`spec`]: pattern specs (`asc`, `desc`, `lr`, `inf`, `streams:3asc+2desc`, mixes) and
//!   their geek code;
//! - [`gen`]: [`KeyGen`], a deterministic, allocation-free key generator for any spec, for the
//!   PK or an indexed column;
//! - [`code`]: [`GeekCode`], seed 000's `pk=(nAsc:1, nRHS:1)`;
//! - [`infer`]: the geek code of an observed key stream;
//! - [`table`]: a user's column read in insertion order, for `pattern infer --table`;
//! - [`seed`]: [`derive_seed`], a worker's (or a process's) seed from the run's;
//! - [`derive_code`]: the code of an index from how its columns' values arrive (the insert
//!   benchmark derives its own indexes' codes with it: `workload::iibench::codes`).
//!
//! This is the generic machinery, below the workloads that use it: it knows no workload, step
//! or command. The key patterns of `ixbench run` (`--pk-pattern`, `--index-pattern`) are
//! `workload::iibench::steps::key_patterns`; the `ixbench pattern` command is `cmd::pattern`.
//!
//! Use on an insert path (e.g. `--index-pattern pdc=streams:4`): parse once, check against
//! the rows to insert, then one `next_key()` per row (or `key_at(i)` from a shared counter when
//! several workers insert into one table and the keys must stay unique):
//!
//! ```
//! use ixbench::pattern::{spec::parse_named, KeyGen};
//! let (index, spec) = parse_named("pdc=streams:4", "pk").unwrap();
//! let rows = 1_000_000;
//! let mut keys = KeyGen::new(&spec, 42, 0, i32::MAX as i64, rows).unwrap();
//! let first: i64 = keys.next_key();
//! assert_eq!(keys.key_at(0), first);
//! assert_eq!(spec.code().named(&index), "pdc=(nAsc:4)");
//! ```

pub mod code;
pub mod gen;
pub mod infer;
pub mod seed;
pub mod spec;
pub mod table;

pub use code::GeekCode;
pub use gen::KeyGen;
pub use infer::{infer, InferOptions, Inference};
pub use seed::derive_seed;
pub use spec::Spec;

/// The order in which a column's values arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Each value larger than every earlier one (an auto-increment PK, a row locator).
    Ascending,
    /// Never smaller than an earlier value, with `rows_per_tick` rows on average sharing one
    /// value (a clock read once per batch or second).
    Clock {
        /// Rows per clock value.
        rows_per_tick: f64,
    },
    /// Uniform over `domain` distinct values, independent of arrival.
    Random {
        /// Number of distinct values.
        domain: u64,
    },
}

/// The geek code of an index on columns whose values arrive as `columns` says, in index
/// order, for `rows` inserted rows. A B-tree orders equal keys by the row locator (InnoDB
/// appends the PK, PostgreSQL the heap TID, SQLite the rowid), which ascends with arrival, so
/// the caller appends the locator as a last [`Arrival::Ascending`] column.
///
/// Derivation: random leading columns split the index into `D` groups (the product of their
/// domains); the first ascending column after them makes each group one ascending stream
/// (inserts land at the group's end), and the group of the largest prefix value is the right
/// end of the index: `(nAsc:D, nRHS:1)`; with no random prefix, `(nAsc:1, nRHS:1)`. `(inf)`
/// when `D` reaches the number of rows (nearly every insert opens a new insert point), or when
/// that column is a clock, a random column follows it, and a group gets half a row or more per
/// clock value (`rows_per_tick / D >= 0.5`): the rows of one group and tick then arrive in
/// random order, which at the key level is random (though confined to D regions one tick
/// wide).
pub fn derive_code(columns: &[Arrival], rows: u64) -> GeekCode {
    let mut groups: u64 = 1;
    for (i, c) in columns.iter().enumerate() {
        match *c {
            Arrival::Random { domain } => groups = groups.saturating_mul(domain.max(1)),
            Arrival::Ascending | Arrival::Clock { .. } => {
                if groups >= rows.max(1) {
                    return GeekCode::Inf;
                }
                if let Arrival::Clock { rows_per_tick } = *c {
                    let random_after = columns[i + 1..]
                        .iter()
                        .take_while(|a| !matches!(a, Arrival::Ascending))
                        .any(|a| matches!(a, Arrival::Random { .. }));
                    if random_after && rows_per_tick / groups as f64 >= 0.5 {
                        return GeekCode::Inf;
                    }
                }
                return GeekCode::Streams {
                    n_asc: groups,
                    n_desc: 0,
                    lhs: false,
                    rhs: true,
                };
            }
        }
    }
    GeekCode::Inf
}

#[cfg(test)]
mod tests;

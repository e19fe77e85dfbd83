//! Insert patterns (issue 9, seed 000): in what order do inserts hit each index?
//!
//! - [`spec`]: pattern specs (`asc`, `desc`, `lr`, `inf`, `streams:3asc+2desc`, mixes) and
//!   their geek code;
//! - [`gen`]: [`KeyGen`], a deterministic, allocation-free key generator for any spec, for the
//!   PK or an indexed column;
//! - [`code`]: [`GeekCode`], seed 000's `pk=(nAsc:1, nRHS:1)`;
//! - [`infer`]: the geek code of an observed key stream;
//! - [`iibench_codes`]: the insert benchmark's own indexes' codes, derived from how its rows
//!   are made.
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
pub mod run;
pub mod spec;
pub mod table;

pub use code::GeekCode;
pub use gen::KeyGen;
pub use infer::{infer, InferOptions, Inference};
pub use spec::Spec;

use crate::workload::iibench;

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

/// How the insert benchmark's columns arrive (src/workload/iibench.rs): `transactionid` is
/// assigned by the server (auto-increment / identity / rowid), `dateandtime` is the wall clock
/// in seconds when a batch is made (one value per batch, never smaller than before:
/// `rows_per_second` rows share a value), the other columns are uniform in their domains
/// (`RowGen::fill`).
pub fn iibench_arrival(column: &str, rows_per_second: f64) -> Option<Arrival> {
    Some(match column {
        "transactionid" => Arrival::Ascending,
        "dateandtime" => Arrival::Clock {
            rows_per_tick: rows_per_second,
        },
        "cashregisterid" => Arrival::Random {
            domain: iibench::CASHREGISTER_DOMAIN as u64,
        },
        "customerid" => Arrival::Random {
            domain: iibench::CUSTOMER_DOMAIN as u64,
        },
        "productid" => Arrival::Random {
            domain: iibench::PRODUCT_DOMAIN as u64,
        },
        "price" => Arrival::Random {
            domain: iibench::PRICE_DOMAIN as u64,
        },
        _ => return None,
    })
}

/// The geek codes of the insert benchmark's PK and its first `secondary` secondary indexes,
/// for `rows` rows inserted per table at `rows_per_second` per table:
/// `pk=(nAsc:1, nRHS:1) marketsegment=(inf) registersegment=(inf)`, then `pdc=(nAsc:500,
/// nRHS:1)` below 250 rows/s per table and `pdc=(inf)` from there on.
///
/// `pdc` is (price, dateandtime, customerid): 500 prices, each group growing at its end as the
/// clock advances; at 250 rows/s or more a price gets half a row or more per second, and its
/// rows of one second arrive in random customerid order (see [`derive_code`]).
pub fn iibench_codes(secondary: usize, rows: u64, rows_per_second: f64) -> Vec<(String, GeekCode)> {
    let mut out = vec![("pk".to_string(), GeekCode::RIGHT_GROWING)];
    for idx in iibench::INDEXES.iter().take(secondary) {
        let mut cols: Vec<Arrival> = idx
            .columns
            .iter()
            .map(|c| {
                iibench_arrival(c, rows_per_second).unwrap_or(Arrival::Random { domain: u64::MAX })
            })
            .collect();
        cols.push(Arrival::Ascending); // the row locator
        out.push((idx.suffix.to_string(), derive_code(&cols, rows)));
    }
    out
}

#[cfg(test)]
mod tests;

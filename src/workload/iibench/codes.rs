//! The geek codes of the insert benchmark's own indexes (issue 9), derived from how its rows
//! are made: which of its columns ascend, follow the clock, or are random, and in how many
//! values ([`crate::pattern::derive_code`]). `ixbench pattern code --iibench` prints them, and
//! `ixbench run` stores them for each step (`steps::key_patterns`), where a `--pk-pattern` or
//! `--index-pattern` does not replace them.

use crate::pattern::{derive_code, Arrival, GeekCode};

/// How the insert benchmark's columns arrive ([`super::RowGen`]): `transactionid` is
/// assigned by the server (auto-increment / identity / rowid), `dateandtime` is the wall clock
/// in seconds when a batch is made (one value per batch, never smaller than before:
/// `rows_per_second` rows share a value), the other columns are uniform in their domains
/// (`RowGen::fill`).
pub fn arrival(column: &str, rows_per_second: f64) -> Option<Arrival> {
    Some(match column {
        "transactionid" => Arrival::Ascending,
        "dateandtime" => Arrival::Clock {
            rows_per_tick: rows_per_second,
        },
        "cashregisterid" => Arrival::Random {
            domain: super::CASHREGISTER_DOMAIN as u64,
        },
        "customerid" => Arrival::Random {
            domain: super::CUSTOMER_DOMAIN as u64,
        },
        "productid" => Arrival::Random {
            domain: super::PRODUCT_DOMAIN as u64,
        },
        "price" => Arrival::Random {
            domain: super::PRICE_DOMAIN as u64,
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
pub fn index_codes(secondary: usize, rows: u64, rows_per_second: f64) -> Vec<(String, GeekCode)> {
    let mut out = vec![("pk".to_string(), GeekCode::RIGHT_GROWING)];
    for idx in super::INDEXES.iter().take(secondary) {
        let mut cols: Vec<Arrival> = idx
            .columns
            .iter()
            .map(|c| arrival(c, rows_per_second).unwrap_or(Arrival::Random { domain: u64::MAX }))
            .collect();
        cols.push(Arrival::Ascending); // the row locator
        out.push((idx.suffix.to_string(), derive_code(&cols, rows)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::code;
    use crate::pattern::{infer, InferOptions};
    use crate::workload::iibench::{Batch, RowGen, INDEXES};

    #[test]
    fn codes_at_low_and_high_rates() {
        assert_eq!(
            code::line(&index_codes(3, 10_000_000, 100.0)),
            "pk=(nAsc:1, nRHS:1) marketsegment=(inf) registersegment=(inf) pdc=(nAsc:500, nRHS:1)"
        );
        assert_eq!(
            code::line(&index_codes(3, 10_000_000, 20_000.0)),
            "pk=(nAsc:1, nRHS:1) marketsegment=(inf) registersegment=(inf) pdc=(inf)"
        );
        assert_eq!(code::line(&index_codes(0, 10, 1.0)), "pk=(nAsc:1, nRHS:1)");
    }

    /// The derivation checked against the insert benchmark's real row generator: each index's key
    /// (its columns, then the PK as row locator) in insertion order, inferred, at a rate where
    /// pdc is 500 streams (20 rows/s, one batch and one `dateandtime` a second) and at one where
    /// it is random (2000 rows/s).
    #[test]
    fn codes_match_what_its_rows_do() {
        for per_sec in [20usize, 2_000] {
            let mut g = RowGen::new(7, 10, 20);
            let mut b = Batch::default();
            // (pk, dateandtime, cashregisterid, customerid, productid, price)
            let mut rows: Vec<[i64; 6]> = Vec::new();
            for sec in 0..(40_000 / per_sec) as i64 {
                g.fill(&mut b, per_sec, 1_700_000_000 + sec);
                for r in 0..b.len() {
                    let pk = rows.len() as i64 + 1;
                    rows.push([
                        pk,
                        b.ts_secs,
                        b.cashregisterid[r] as i64,
                        b.customerid[r] as i64,
                        b.productid[r] as i64,
                        b.price[r] as i64,
                    ]);
                }
            }
            let col = |name: &str| -> usize {
                [
                    "transactionid",
                    "dateandtime",
                    "cashregisterid",
                    "customerid",
                    "productid",
                    "price",
                ]
                .iter()
                .position(|c| *c == name)
                .unwrap()
            };
            let derived = index_codes(3, rows.len() as u64, per_sec as f64);
            let mut idx_cols: Vec<Vec<&str>> = vec![vec!["transactionid"]];
            for i in INDEXES {
                let mut c = i.columns.to_vec();
                c.push("transactionid");
                idx_cols.push(c);
            }
            for ((name, code), cols) in derived.iter().zip(idx_cols) {
                let keys: Vec<Vec<i64>> = rows
                    .iter()
                    .map(|r| cols.iter().map(|c| r[col(c)]).collect())
                    .collect();
                let got = infer(&keys, &InferOptions::default()).unwrap();
                assert_eq!(got.code, *code, "{per_sec}/s {name}: {}", got.summary());
            }
        }
    }
}

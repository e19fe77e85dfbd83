//! Response-time histograms: HdrHistogram with 3 significant figures, in microseconds.
//!
//! Every worker records into its own histograms (no sharing on the hot path); the reporter
//! merges them per interval and per step. Summaries give the percentiles a DB engineer asks for
//! and the insert benchmark's 4x-apart buckets, so our output reads next to theirs.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Upper bounds (microseconds) of the insert benchmark's response-time buckets; the last
/// bucket (`>16s`) is open.
pub const IIBENCH_BUCKETS_US: [u64; 9] = [
    256, 1_000, 4_000, 16_000, 64_000, 256_000, 1_000_000, 4_000_000, 16_000_000,
];

/// Labels of [`IIBENCH_BUCKETS_US`] plus the open last bucket, as the insert benchmark prints them.
pub const IIBENCH_BUCKET_LABELS: [&str; 10] = [
    "256us", "1ms", "4ms", "16ms", "64ms", "256ms", "1s", "4s", "16s", ">16s",
];

/// A new, empty latency histogram (microseconds, 3 significant figures, grows as needed).
pub fn new_hist() -> Histogram<u64> {
    // `new(3)` auto-resizes, so a histogram that only ever saw fast operations stays small.
    Histogram::new(3).expect("3 significant figures is a valid HdrHistogram setting")
}

/// Record one value, clamping 0 to 1 us (a histogram with lowest value 1 cannot hold 0).
#[inline]
pub fn record(h: &mut Histogram<u64>, micros: u64) {
    // Auto-resize makes recording infallible for any u64 we produce.
    let _ = h.record(micros.max(1));
}

/// Percentiles, counts and buckets of one histogram, as stored in results and printed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Number of operations recorded.
    pub count: u64,
    /// Mean in microseconds.
    pub mean_us: f64,
    /// Median in microseconds.
    pub p50_us: u64,
    /// 90th percentile in microseconds.
    pub p90_us: u64,
    /// 99th percentile in microseconds.
    pub p99_us: u64,
    /// 99.9th percentile in microseconds.
    pub p999_us: u64,
    /// Largest value in microseconds.
    pub max_us: u64,
    /// Counts per insert-benchmark bucket (see [`IIBENCH_BUCKET_LABELS`]).
    pub buckets: Vec<u64>,
    /// The whole histogram, HdrHistogram V2 + deflate, base64: readable by any HdrHistogram tool.
    pub hdr_base64: String,
}

/// Summarize a histogram: percentiles, insert-benchmark buckets and the serialized histogram.
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary {
            buckets: vec![0; IIBENCH_BUCKET_LABELS.len()],
            ..Default::default()
        };
    }
    LatencySummary {
        count: h.len(),
        mean_us: h.mean(),
        p50_us: h.value_at_quantile(0.50),
        p90_us: h.value_at_quantile(0.90),
        p99_us: h.value_at_quantile(0.99),
        p999_us: h.value_at_quantile(0.999),
        max_us: h.max(),
        buckets: iibench_buckets(h),
        hdr_base64: serialize_base64(h),
    }
}

/// Counts per insert-benchmark bucket: values <= 256us, <= 1ms, ... , > 16s.
pub fn iibench_buckets(h: &Histogram<u64>) -> Vec<u64> {
    let mut out = vec![0u64; IIBENCH_BUCKET_LABELS.len()];
    for v in h.iter_recorded() {
        // `value_iterated_to` is the highest value equivalent to the recorded bucket: compare
        // the lowest equivalent value so a 256 us sample lands in the 256us bucket.
        let value = h.lowest_equivalent(v.value_iterated_to());
        let idx = IIBENCH_BUCKETS_US
            .iter()
            .position(|&ub| value <= ub)
            .unwrap_or(IIBENCH_BUCKETS_US.len());
        out[idx] += v.count_at_value();
    }
    out
}

/// Serialize with the standard V2 + deflate encoding and base64 it.
pub fn serialize_base64(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    if V2DeflateSerializer::new().serialize(h, &mut buf).is_err() {
        buf.clear();
        // Deflate can only fail on I/O into a Vec, which does not happen; plain V2 as a fallback.
        let _ = V2Serializer::new().serialize(h, &mut buf);
    }
    BASE64.encode(&buf)
}

/// Decode a histogram written by [`serialize_base64`].
pub fn deserialize_base64(s: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = BASE64.decode(s)?;
    let mut d = hdrhistogram::serialization::Deserializer::new();
    Ok(d.deserialize(&mut bytes.as_slice())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_keeps_max() {
        let mut a = new_hist();
        let mut b = new_hist();
        for v in 1..=1000 {
            record(&mut a, v);
        }
        record(&mut b, 5_000_000);
        record(&mut b, 0); // clamped to 1 us
        a.add(&b).unwrap();
        assert_eq!(a.len(), 1002);
        assert!(
            a.max() >= 4_995_000 && a.max() <= 5_005_000,
            "max {}",
            a.max()
        );
        assert_eq!(a.min(), 1);
    }

    #[test]
    fn buckets_follow_iibench_bounds() {
        let mut h = new_hist();
        for v in [100, 256, 257, 999, 1_000, 70_000, 2_000_000, 20_000_000] {
            record(&mut h, v);
        }
        let b = iibench_buckets(&h);
        // 100 and 256 -> 256us; 257, 999, 1000 -> 1ms; 70ms -> 256ms; 2s -> 4s; 20s -> >16s
        assert_eq!(b, vec![2, 3, 0, 0, 0, 1, 0, 1, 0, 1]);
        assert_eq!(b.iter().sum::<u64>(), h.len());
    }

    #[test]
    fn summary_percentiles_and_roundtrip() {
        let mut h = new_hist();
        for v in 1..=10_000u64 {
            record(&mut h, v);
        }
        let s = summarize(&h);
        assert_eq!(s.count, 10_000);
        assert!((4_990..=5_010).contains(&s.p50_us), "p50 {}", s.p50_us);
        assert!((9_890..=9_910).contains(&s.p99_us), "p99 {}", s.p99_us);
        let back = deserialize_base64(&s.hdr_base64).unwrap();
        assert_eq!(back.len(), h.len());
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.99), h.value_at_quantile(0.99));
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = summarize(&new_hist());
        assert_eq!(s.count, 0);
        assert_eq!(s.buckets.len(), 10);
    }
}

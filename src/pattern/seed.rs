//! Seeds derived from a run's seed: each worker, table or process of a run gets its own stream
//! of random values from `--seed` alone, so the same seed gives the same rows. Generic (the
//! insert benchmark's workers and a several-process run's parts derive their seeds with it).

/// Derive the seed of one worker from the run's seed, so each worker has its own stream and the
/// same `--seed` gives the same rows (SplitMix64 finalizer over the parts).
pub fn derive_seed(seed: u64, parts: &[u64]) -> u64 {
    let mut x = seed;
    for &p in parts {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_add(p);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

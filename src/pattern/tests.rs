//! Seed 000's examples, round trips (generate with pattern P, infer P) and codes derived from
//! arrival orders (the insert benchmark's own: `workload::iibench::codes`).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::infer::OrdF64;
use super::*;

/// Seed 000: "Assume the array starts as [1.0, 2.0, ..., 9.0]", then the insert sequence.
fn seed_example(seq: &[f64]) -> Inference {
    let mut keys: Vec<OrdF64> = (1..=9).map(|i| OrdF64(i as f64)).collect();
    keys.extend(seq.iter().map(|&v| OrdF64(v)));
    infer(
        &keys,
        &InferOptions {
            existing: 9,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn every_example_of_seed_000() {
    let cases: [(&str, &[f64], &str); 8] = [
        ("random", &[1.5, 6.5, 1.7, 8.1, 0.0, 4.5], "(inf)"),
        ("right growing", &[10.0, 11.0, 12.0], "(nAsc:1, nRHS:1)"),
        ("left growing", &[0.0, -1.0, -2.0], "(nDesc:1, nLHS:1)"),
        (
            "left & right growing",
            &[10.0, 0.0, -1.0, 11.0, 12.0, -2.0],
            "(nAsc:1, nDesc:1, nLHS:1, nRHS:1)",
        ),
        (
            "1 middle ascending",
            &[8.1, 8.11, 8.111, 8.1111],
            "(nAsc:1)",
        ),
        // Seed 000 writes (nDesc:1, nLHS:1) here, which contradicts its own definition (nLHS
        // counts descending streams at the left end; 7.9.. lands between 7 and 8, in the
        // middle): the definition wins.
        (
            "1 middle descending",
            &[7.9, 7.89, 7.889, 7.8889],
            "(nDesc:1)",
        ),
        (
            "1 middle ascending, 1 middle descending",
            &[8.1, 7.9, 8.11, 7.89, 8.111, 7.889],
            "(nAsc:1, nDesc:1)",
        ),
        (
            "2 middle ascending",
            &[8.1, 6.1, 8.11, 6.11, 8.111, 6.111],
            "(nAsc:2)",
        ),
    ];
    for (what, seq, want) in cases {
        let got = seed_example(seq);
        assert_eq!(got.code.to_string(), want, "{what}: {}", got.summary());
        assert!(got.confidence > 0.0 && got.confidence <= 1.0, "{what}");
    }
    // the interleaved streams are found as seed 000 lists them
    let lr = seed_example(&[10.0, 0.0, -1.0, 11.0, 12.0, -2.0]);
    assert_eq!(lr.streams.len(), 2);
    assert!(lr.streams.iter().all(|s| s.keys == 3 && s.at_end == 1.0));
    assert_eq!(lr.out_of_order, 0);
}

#[test]
fn without_existing_keys_a_lone_ascending_stream_grows_at_the_right_end() {
    // 8.1, 8.11, ... into an empty index: every key is above all others
    let keys: Vec<OrdF64> = [8.1, 8.11, 8.111, 8.1111].map(OrdF64).to_vec();
    let got = infer(&keys, &InferOptions::default()).unwrap();
    assert_eq!(got.code, GeekCode::RIGHT_GROWING);
}

#[test]
fn empty_and_all_existing_inputs_are_errors() {
    let none: Vec<i64> = Vec::new();
    let e = infer(&none, &InferOptions::default()).unwrap_err();
    assert!(e.contains("empty input"), "{e}");
    let e = infer(
        &[1, 2, 3],
        &InferOptions {
            existing: 3,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("existing"), "{e}");
    let e = infer(&[1, 2], &InferOptions::default()).unwrap_err();
    assert!(e.contains("too few keys (2)"), "{e}");
}

/// `keys` keys of `spec`, with `noise` of them replaced by keys uniform over the whole range.
fn generate(spec: &str, seed: u64, keys: u64, noise: f64) -> Vec<i64> {
    let spec: Spec = spec.parse().unwrap();
    let (lo, hi) = (i32::MIN as i64, i32::MAX as i64);
    let g = KeyGen::new(&spec, seed, lo, hi, keys).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xABCD);
    g.take(keys as usize)
        .map(|k| {
            if rng.random_bool(noise) {
                rng.random_range(lo..=hi)
            } else {
                k
            }
        })
        .collect()
}

#[test]
fn round_trips_generate_then_infer() {
    let specs = [
        "asc",
        "desc",
        "lr",
        "inf",
        "streams:1",
        "streams:1desc",
        "streams:2",
        "streams:4",
        "streams:16",
        "streams:3asc+2desc",
        "asc+streams:2",
        "desc+streams:2asc+1desc",
        "lr+streams:3",
        "asc+inf@3%",
        "streams:4+inf@5%",
        "asc+inf",
        "streams:2+inf@40%",
    ];
    for spec in specs {
        let want = spec.parse::<Spec>().unwrap().code();
        for keys in [400u64, 5_000, 40_000] {
            for seed in [1u64, 2, 3] {
                for noise in [0.0, 0.01, 0.03, 0.05] {
                    let share = spec.parse::<Spec>().unwrap().random_share();
                    if want != GeekCode::Inf && share + noise > 0.07 {
                        // near the 10% of keys inference leaves out as noise
                        continue;
                    }
                    if noise > 0.03 && keys < 5_000 {
                        // 25 keys per stream (streams:16) and 5% strays: a cluster of strays
                        // looks like one more stream
                        continue;
                    }
                    let k = generate(spec, seed, keys, noise);
                    let got = infer(&k, &InferOptions::default()).unwrap();
                    assert_eq!(
                        got.code,
                        want,
                        "{spec}, {keys} keys, seed {seed}, noise {noise}: {}",
                        got.summary()
                    );
                    if noise == 0.0 && want != GeekCode::Inf && !spec.contains("inf") {
                        // only the fences are out of order
                        assert!(got.out_of_order <= 2, "{spec}: {}", got.summary());
                        assert!(got.confidence > 0.95, "{spec}: {}", got.summary());
                    }
                    if want == GeekCode::Inf && keys >= 5_000 && noise == 0.0 {
                        // about the share of random keys
                        let share = spec.parse::<Spec>().unwrap().random_share();
                        assert!(
                            (got.confidence - share).abs() < 0.15,
                            "{spec}: {}",
                            got.summary()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_far_outlier_at_the_right_end_does_not_make_a_new_stream() {
    let mut keys: Vec<i64> = (0..100).collect();
    keys.push(1_000_000);
    keys.extend(100..200);
    let got = infer(&keys, &InferOptions::default()).unwrap();
    assert_eq!(got.code, GeekCode::RIGHT_GROWING, "{}", got.summary());
    assert_eq!(got.out_of_order, 1);
    // and a few swapped neighbours neither
    let mut keys: Vec<i64> = (0..1000).collect();
    for i in (10..1000).step_by(97) {
        keys.swap(i, i + 1);
    }
    let got = infer(&keys, &InferOptions::default()).unwrap();
    assert_eq!(got.code, GeekCode::RIGHT_GROWING, "{}", got.summary());
    assert!(got.out_of_order <= 11, "{}", got.summary());
}

#[test]
fn strays_inside_a_stream_do_not_break_it() {
    // 100 000 keys of one ascending stream with 5% strays that land inside its range, some
    // before the stream passes them, some after
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let mut keys: Vec<i64> = Vec::new();
    for i in 0..100_000i64 {
        if rng.random_bool(0.05) {
            keys.push(rng.random_range(0..200_000) * 10 + 5);
        } else {
            keys.push(i * 10);
        }
    }
    let got = infer(&keys, &InferOptions::default()).unwrap();
    assert_eq!(got.code, GeekCode::RIGHT_GROWING, "{}", got.summary());
    assert!(got.out_of_order < 6_000, "{}", got.summary());
}

#[test]
fn text_keys_compare_as_strings() {
    let keys: Vec<String> = (0..200)
        .map(|i| format!("2026-11-23 11:{:02}:{:02}", i / 60, i % 60))
        .collect();
    let got = infer(&keys, &InferOptions::default()).unwrap();
    assert_eq!(got.code, GeekCode::RIGHT_GROWING);
}

#[test]
fn codes_derived_from_arrival_orders() {
    use Arrival::*;
    assert_eq!(derive_code(&[Ascending], 10), GeekCode::RIGHT_GROWING);
    assert_eq!(
        derive_code(&[Random { domain: 500 }, Ascending], 1_000_000).to_string(),
        "(nAsc:500, nRHS:1)"
    );
    assert_eq!(
        derive_code(&[Random { domain: 500 }, Ascending], 400),
        GeekCode::Inf
    );
    assert_eq!(
        derive_code(
            &[
                Random { domain: 10_000 },
                Random { domain: 100_000 },
                Ascending
            ],
            1_000_000
        ),
        GeekCode::Inf
    );
    let clock = |r| Clock { rows_per_tick: r };
    let pdc = |r| {
        derive_code(
            &[
                Random { domain: 500 },
                clock(r),
                Random { domain: 9 },
                Ascending,
            ],
            1 << 40,
        )
    };
    assert_eq!(pdc(249.0).to_string(), "(nAsc:500, nRHS:1)");
    assert_eq!(pdc(250.0), GeekCode::Inf);
    // a clock with nothing random after it stays ordered by the locator
    assert_eq!(
        derive_code(&[Random { domain: 500 }, clock(1e6), Ascending], 1 << 40).to_string(),
        "(nAsc:500, nRHS:1)"
    );
}

/// `existing` (the index's content before, in any order) followed by the observed keys, and
/// the options that say so.
fn after_existing(existing: &[i64], observed: &[i64]) -> (Vec<i64>, InferOptions) {
    let mut keys = existing.to_vec();
    keys.extend_from_slice(observed);
    let opts = InferOptions {
        existing: existing.len(),
        ..Default::default()
    };
    (keys, opts)
}

/// Issue 19, defect 5: ascending streams that pass keys already in the index (the index is
/// populated over the whole range they insert into) are streams, not `inf`; existing keys
/// between two inserts of a stream do not split it.
#[test]
fn ascending_streams_passing_existing_keys_are_streams() {
    let mut rng = Pcg64Mcg::seed_from_u64(19);
    // an index holding one key every 100 over 0 .. 1 000 000
    let spread: Vec<i64> = (0..10_000).map(|i| i * 100 + 50).collect();
    // 1 ascending stream over the whole range: 2 inserts between two existing keys
    let one: Vec<i64> = (0..20_000).map(|k| k * 50).collect();
    // 4 ascending streams, one per quarter, inserting in turn
    let four: Vec<i64> = (0..20_000)
        .map(|i| (i % 4) * 250_000 + (i / 4) * 50)
        .collect();
    // the same with 2% of the inserts random keys over the whole range
    let four_noisy: Vec<i64> = four
        .iter()
        .map(|&k| {
            if rng.random_bool(0.02) {
                rng.random_range(0..1_000_000)
            } else {
                k
            }
        })
        .collect();
    // a sorted batch merged into a populated key range: 3000 random keys, sorted, into an
    // index holding every multiple of 10 in 0 .. 100 000
    let populated: Vec<i64> = (0..10_000).map(|i| i * 10).collect();
    let mut batch: Vec<i64> = (0..3_000)
        .map(|_| rng.random_range(0..10_000) * 10 + rng.random_range(1..10))
        .collect();
    batch.sort();
    // a backfill per stream: 8 devices (key = device * 10^6 + time) hold one row every 1000
    // time units; each device's missing rows are inserted in time order, devices in turn,
    // ascending and (a backfill going back in time) descending
    let devices: Vec<i64> = (0..8)
        .flat_map(|d| (0..1_000).map(move |h| d * 1_000_000 + h * 1_000))
        .collect();
    let backfill: Vec<i64> = (0..8 * 2_500)
        .map(|i| (i % 8) * 1_000_000 + (i / 8) * 400 + 7)
        .collect();
    let backfill_desc: Vec<i64> = (0..8 * 2_500)
        .map(|i| (i % 8) * 1_000_000 + 999_999 - (i / 8) * 400)
        .collect();
    let cases: [(&str, &[i64], &[i64], &str); 6] = [
        ("1 ascending stream", &spread, &one, "(nAsc:1)"),
        ("4 ascending streams", &spread, &four, "(nAsc:4)"),
        (
            "4 ascending streams, 2% noise",
            &spread,
            &four_noisy,
            "(nAsc:4)",
        ),
        ("sorted batch merged", &populated, &batch, "(nAsc:1)"),
        ("backfill per stream", &devices, &backfill, "(nAsc:8)"),
        (
            "backfill per stream, descending",
            &devices,
            &backfill_desc,
            "(nDesc:8)",
        ),
    ];
    // random keys among the same existing keys stay random
    let random: Vec<i64> = (0..20_000)
        .map(|_| rng.random_range(0..1_000_000))
        .collect();
    let mut wrong = Vec::new();
    for (what, existing, observed, want) in
        cases
            .into_iter()
            .chain([("random", &spread[..], &random[..], "(inf)")])
    {
        let (keys, opts) = after_existing(existing, observed);
        let got = infer(&keys, &opts).unwrap();
        if got.code.to_string() != want || got.confidence < 0.8 {
            wrong.push(format!("{what}: {} {}", got.code, got.summary()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `code` with every stream in the middle of the index (existing keys beyond both ends).
fn in_the_middle(code: GeekCode) -> GeekCode {
    match code {
        GeekCode::Streams { n_asc, n_desc, .. } => GeekCode::Streams {
            n_asc,
            n_desc,
            lhs: false,
            rhs: false,
        },
        GeekCode::Inf => GeekCode::Inf,
    }
}

/// Round trips (every kind of stream of seed 000, with and without noise) into an index that
/// already holds keys the streams pass: the generated keys times 4 (room between them), the
/// existing keys 2 above half of them (picked at random) plus a quarter as many spread
/// uniformly, all over the range (the streams at the ends are then in the middle: the code
/// without nLHS and nRHS) or over the middle half only (where the middle streams and the
/// random keys are: the spec's code).
#[test]
fn round_trips_with_existing_keys_the_streams_pass() {
    let specs = [
        "asc",
        "desc",
        "lr",
        "inf",
        "streams:1",
        "streams:1desc",
        "streams:4",
        "streams:16",
        "streams:1asc+1desc",
        "streams:3asc+2desc",
        "asc+streams:2",
        "desc+streams:2asc+1desc",
        "lr+streams:3",
        "asc+inf@3%",
        "streams:4+inf@5%",
        "streams:2+inf@40%",
    ];
    let (lo, hi) = (i32::MIN as i64 * 4, i32::MAX as i64 * 4);
    let mut wrong = Vec::new();
    for spec in specs {
        let parsed: Spec = spec.parse().unwrap();
        let code = parsed.code();
        for keys in [5_000u64, 40_000] {
            for seed in [1u64, 2] {
                for noise in [0.0, 0.01, 0.03, 0.05] {
                    if code != GeekCode::Inf && parsed.random_share() + noise > 0.07 {
                        continue;
                    }
                    let observed: Vec<i64> = generate(spec, seed, keys, noise)
                        .into_iter()
                        .map(|g| g * 4)
                        .collect();
                    for everywhere in [false, true] {
                        let (a, b) = if everywhere {
                            (lo, hi)
                        } else {
                            (lo / 2, hi / 2)
                        };
                        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x5EED);
                        let mut existing: Vec<i64> = observed
                            .iter()
                            .filter(|&&g| (a..=b).contains(&g) && rng.random_bool(0.5))
                            .map(|g| g + 2)
                            .collect();
                        existing.extend((0..keys / 4).map(|_| rng.random_range(a..=b)));
                        let want = if everywhere {
                            in_the_middle(code)
                        } else {
                            code
                        };
                        let (k, opts) = after_existing(&existing, &observed);
                        let got = infer(&k, &opts).unwrap();
                        let what = format!(
                            "{spec}, {keys} keys, {} existing {}, seed {seed}, noise {noise}",
                            existing.len(),
                            if everywhere {
                                "everywhere"
                            } else {
                                "in the middle"
                            },
                        );
                        if got.code != want {
                            wrong.push(format!("{what}: {} {}", got.code, got.summary()));
                        } else if noise == 0.0 && want != GeekCode::Inf && !spec.contains("inf") {
                            // only the fences are out of order
                            if got.out_of_order > 2 || got.confidence <= 0.95 {
                                wrong.push(format!("{what}: {}", got.summary()));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

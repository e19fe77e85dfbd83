//! Inferring the geek code of an observed key stream (keys in insertion order).
//!
//! Definition (seed 000: a stream is inserts that "occur in ascending order WRT the index"):
//! an ascending stream is a sequence of observed inserts whose keys increase in arrival order
//! and between two consecutive ones of which, in the final index, no other observed key lies.
//! Keys that were in the index before the observed ones (`existing`) may lie between them, any
//! number of them: the stream passes them (a sorted batch merged into a populated key range, a
//! backfill per stream) and is still one insert point that moves, one hot place in a B-tree.
//! A descending stream likewise, keys decreasing. Equal keys are ordered by arrival, as a
//! B-tree orders duplicates by row locator, so repeats of one value form an ascending stream.
//! Random keys make no streams: their neighbours arrived in no particular order. Observed keys
//! do split a stream: a stream that passes keys inserted earlier in the same input is seen as
//! such when those are given as existing ones.
//!
//! Runs: in the order of the observed keys (existing ones left out), neighbours that arrived
//! in increasing order form an ascending run, in decreasing order a descending one. Where a
//! run turns (the key there could end the one and begin the other) the key goes with the side
//! no existing key separates it from, when only one side is (seed 000's 10.0, above 9.0,
//! begins the ascending stream and does not end the descending one below 1.0); else it ends
//! the first run.
//!
//! Noise: up to three keys that break a run whose keys before and after agree (a swapped
//! neighbour, a stray key inside a stream's range, arrived before or after the stream passed)
//! are out of order and left out, when the run goes on after them (the end of the input is no
//! evidence). Runs are streams when they have at least 3 keys and a quarter of the typical
//! run's keys (the run holding the median key); shorter runs are noise.
//!
//! Verdict: `inf` when the streams leave more than `noise` of the keys unexplained, or are
//! more than `max(sqrt(n), n/8)` (random keys make runs of two or three keys). Otherwise a
//! second pass replays the streams' keys in arrival order and calls an ascending stream
//! right-growing (nRHS) when most of its keys were above every key in the index when they
//! arrived, existing ones included (keys outside the streams count when they arrived before
//! the stream started, as a fence does; later strays do not), likewise descending and the left
//! end. A stream most of whose keys pass existing keys is in the middle.
//!
//! Cost: one sort (n log n), then linear passes; memory a few words per key.
//!
//! Confidence: for streams, the share of keys the streams explain, discounted when the
//! shortest stream is short (times 1 - 2^-(len-1)); for `inf`, the share of keys out of order
//! or in runs of fewer than max(8, sqrt(n)) keys, discounted for a small input (times
//! 1 - 1/sqrt(n)).

use super::code::GeekCode;
use super::spec::NOISE_MAX;

/// Options of [`infer`].
#[derive(Debug, Clone, Copy)]
pub struct InferOptions {
    /// The first `existing` keys are the index's content before the observed inserts (seed
    /// 000's examples start from the array 1.0 .. 9.0); they are not classified.
    pub existing: usize,
    /// Largest share of keys left out as out-of-order noise.
    pub noise: f64,
}

impl Default for InferOptions {
    fn default() -> Self {
        InferOptions {
            existing: 0,
            noise: NOISE_MAX,
        }
    }
}

/// Direction of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Keys ascend.
    Asc,
    /// Keys descend.
    Desc,
}

/// One stream of the inferred pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamInfo {
    /// Direction.
    pub dir: Dir,
    /// Keys in the stream.
    pub keys: u64,
    /// Share of its keys that arrived beyond every key in the index at the stream's growing
    /// end (above all for ascending, below all for descending).
    pub at_end: f64,
    /// Number (0-based, among the observed keys) of the stream's first key.
    pub first: u64,
}

/// What [`infer`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Inference {
    /// The geek code.
    pub code: GeekCode,
    /// 0 to 1; see the module text.
    pub confidence: f64,
    /// Observed keys (existing ones not counted).
    pub keys: u64,
    /// The pattern's streams, largest first (empty for `inf`).
    pub streams: Vec<StreamInfo>,
    /// Keys outside the pattern's streams (for `inf`: all).
    pub out_of_order: u64,
    /// Streams of any size found, singletons included.
    pub raw_streams: u64,
}

impl Inference {
    /// One line for people: the code's evidence.
    pub fn summary(&self) -> String {
        match self.code {
            GeekCode::Inf => format!(
                "confidence {:.2}: random, {} keys fall into {} insert point{} (runs of \
                 neighbours)",
                self.confidence,
                self.keys,
                self.raw_streams,
                if self.raw_streams == 1 { "" } else { "s" }
            ),
            GeekCode::Streams { .. } => {
                let covered = self.keys - self.out_of_order;
                let n = self.streams.len();
                let end_asc = self
                    .streams
                    .iter()
                    .any(|s| s.dir == Dir::Asc && s.at_end > 0.5);
                let end_desc = self
                    .streams
                    .iter()
                    .any(|s| s.dir == Dir::Desc && s.at_end > 0.5);
                let mut shape = Vec::new();
                if end_asc {
                    shape.push("1 ascending at the right end".to_string());
                }
                if end_desc {
                    shape.push("1 descending at the left end".to_string());
                }
                let mid_a =
                    self.streams.iter().filter(|s| s.dir == Dir::Asc).count() - end_asc as usize;
                let mid_d =
                    self.streams.iter().filter(|s| s.dir == Dir::Desc).count() - end_desc as usize;
                if mid_a > 0 {
                    shape.push(format!("{mid_a} ascending in the middle"));
                }
                if mid_d > 0 {
                    shape.push(format!("{mid_d} descending in the middle"));
                }
                let shortest = self.streams.iter().map(|s| s.keys).min().unwrap_or(0);
                format!(
                    "confidence {:.2}: {covered} of {} keys in {n} stream{} ({}), the shortest \
                     {shortest} keys; {} keys out of order",
                    self.confidence,
                    self.keys,
                    if n == 1 { "" } else { "s" },
                    shape.join(", "),
                    self.out_of_order
                )
            }
        }
    }
}

/// A number key ordered by `total_cmp` (-0.0 and 0.0 are one key; callers refuse NaN).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrdF64(pub f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0 + 0.0).total_cmp(&(o.0 + 0.0))
    }
}

/// Direction of the pair (a, b) of arrival numbers: 1 when b arrived later.
#[inline]
fn up(a: u32, b: u32) -> i8 {
    if b > a {
        1
    } else {
        -1
    }
}

/// Remove out-of-order keys from `v` (arrival numbers of neighbouring keys, in key order):
/// where a run breaks, the fewest keys (up to 3, among the last two kept and the next three)
/// whose removal lets the run go on in its direction (to the next key or the one after; the
/// end of the input is no evidence) are noise. Returns the kept arrival numbers.
fn clean(v: &[u32]) -> Vec<u32> {
    let mut kept: Vec<u32> = Vec::with_capacity(v.len());
    let mut i = 0;
    'keys: while i < v.len() {
        let x = v[i];
        let n = kept.len();
        if n >= 2 && up(kept[n - 1], x) != up(kept[n - 2], kept[n - 1]) {
            // drop k kept keys and skip j keys from here (x is the first), fewest first
            for total in 1..=3usize {
                for k in 0..=total.min(2) {
                    let j = total - k;
                    if n < k + 2 || i + j >= v.len() {
                        continue;
                    }
                    let p = kept[n - 1 - k];
                    let dp = up(kept[n - 2 - k], p);
                    let y = v[i + j];
                    // the run goes on after y (a key after it, or the one after that, in
                    // its direction): the end of the input is no evidence
                    let on = (i + j + 1 < v.len() && up(y, v[i + j + 1]) == dp)
                        || (i + j + 2 < v.len() && up(y, v[i + j + 2]) == dp);
                    if up(p, y) == dp && on {
                        kept.truncate(n - k);
                        i += j;
                        continue 'keys;
                    }
                }
            }
        }
        kept.push(x);
        i += 1;
    }
    kept
}

/// Blocks of one stream (ranges of the cleaned keys), its direction, earliest and latest
/// arrival.
type Group = (Vec<(usize, usize)>, i8, u32, u32);

#[derive(Debug, Clone, Copy)]
struct Run {
    /// 1 ascending, -1 descending, 0 a single key.
    dir: i8,
    len: u64,
    first: u32,
}

/// Infer the geek code of `keys` (in insertion order; the first `opts.existing` are the
/// index's content before). Errors when there is no key to classify.
///
/// Works on the final order of the observed keys: keys that are neighbours there and arrived
/// in increasing order form an ascending stream (no other observed key landed between two of
/// them; keys already in the index before may lie between, the stream passes them),
/// decreasing order a descending one. See the module text.
pub fn infer<K: Ord>(keys: &[K], opts: &InferOptions) -> Result<Inference, String> {
    let total = keys.len();
    if opts.existing >= total {
        return Err(if total == 0 {
            "no keys to infer a pattern from (empty input)".into()
        } else {
            format!(
                "no keys to infer a pattern from: all {total} keys are existing ones (--existing {})",
                opts.existing
            )
        });
    }
    if total - opts.existing < 3 {
        return Err(format!(
            "too few keys ({}) to infer a pattern: at least 3",
            total - opts.existing
        ));
    }
    if total >= u32::MAX as usize {
        return Err(format!("too many keys ({total}), at most {}", u32::MAX - 1));
    }
    if !(0.0..0.5).contains(&opts.noise) {
        return Err(format!("noise share {} must be in [0, 0.5)", opts.noise));
    }
    let e = opts.existing as u32;
    // key order, equal keys by arrival (a B-tree orders duplicates by row locator)
    let mut order: Vec<u32> = (0..total as u32).collect();
    order.sort_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));

    // The observed keys in key order (their arrival numbers); existing keys do not split
    // runs, they only tell, where two runs meet, which one the key at the turn belongs to:
    // `ex_before[i - e]` is the number of existing keys before observed key i in key order.
    let mut seg: Vec<u32> = Vec::with_capacity(total - opts.existing);
    let mut ex_before: Vec<u32> = vec![0; if e > 0 { total - opts.existing } else { 0 }];
    let mut seen_existing = 0u32;
    for &i in &order {
        if i < e {
            seen_existing += 1;
        } else {
            seg.push(i);
            if e > 0 {
                ex_before[(i - e) as usize] = seen_existing;
            }
        }
    }
    // existing keys between observed keys a and b (neighbours in key order among the kept)
    let apart =
        |a: u32, b: u32| e > 0 && ex_before[(a - e) as usize] != ex_before[(b - e) as usize];

    // runs of neighbouring observed keys
    const NO_RUN: u32 = u32::MAX;
    let mut run_of = vec![NO_RUN; total];
    let mut runs: Vec<Run> = Vec::new();
    {
        let kept = clean(&seg);
        drop(seg);
        // blocks of neighbours in one direction: (start, end, dir, earliest, latest arrival
        // of the keys after the first)
        let mut blocks: Vec<(usize, usize, i8, u32, u32)> = Vec::new();
        let mut start = 0;
        while start < kept.len() {
            let dir = if start + 1 < kept.len() {
                up(kept[start], kept[start + 1])
            } else {
                0
            };
            let mut end = start + 1;
            while end < kept.len() && dir != 0 && up(kept[end - 1], kept[end]) == dir {
                end += 1;
            }
            // At a turn the key there (the last of this block) could begin the next block as
            // well: it goes with the side no existing key separates it from (seed 000's
            // "10.0, 0.0, -1.0, 11.0": 10.0 arrived first, above 9.0, and begins the
            // ascending stream).
            if end < kept.len()
                && end - start >= 2
                && apart(kept[end - 2], kept[end - 1])
                && !apart(kept[end - 1], kept[end])
            {
                end -= 1;
            }
            let dir = if end - start >= 2 { dir } else { 0 };
            // arrivals without the block's first key (where a stray breaking a run ends up)
            let part = &kept[(start + 1).min(end - 1)..end];
            let lo = part.iter().copied().min().unwrap_or(0);
            let hi = part.iter().copied().max().unwrap_or(0);
            blocks.push((start, end, dir, lo, hi));
            start = end;
        }
        // A long block, at most 3 keys in short blocks, then a long block in the same
        // direction that goes on in time where the first stopped (ascending: all its keys
        // arrived later; descending: earlier keys below arrived later): one stream broken by
        // a cluster of strays. The strays (and the second block's first key) are noise.
        const LONG: usize = 16;
        let mut groups: Vec<Group> = Vec::new();
        let mut pending: Vec<usize> = Vec::new();
        let mut pending_keys = 0usize;
        let mut last_long: Option<usize> = None;
        for (bi, &(s0, s1, dir, lo, hi)) in blocks.iter().enumerate() {
            if s1 - s0 < LONG || dir == 0 {
                pending.push(bi);
                pending_keys += s1 - s0;
                continue;
            }
            let merge = last_long.filter(|&g| {
                let (_, gdir, glo, ghi) = &groups[g];
                pending_keys <= 3 && *gdir == dir && if dir > 0 { lo > *ghi } else { hi < *glo }
            });
            if let Some(g) = merge {
                let grp = &mut groups[g];
                grp.0.push((s0 + 1, s1));
                grp.2 = grp.2.min(lo);
                grp.3 = grp.3.max(hi);
            } else {
                for &p in &pending {
                    let (p0, p1, pd, plo, phi) = blocks[p];
                    groups.push((vec![(p0, p1)], pd, plo, phi));
                }
                groups.push((vec![(s0, s1)], dir, lo, hi));
                last_long = Some(groups.len() - 1);
            }
            pending.clear();
            pending_keys = 0;
        }
        for &p in &pending {
            let (p0, p1, pd, plo, phi) = blocks[p];
            groups.push((vec![(p0, p1)], pd, plo, phi));
        }
        for (parts, dir, lo, _) in groups {
            let id = runs.len() as u32;
            let mut len = 0u64;
            for (p0, p1) in parts {
                len += (p1 - p0) as u64;
                for &x in &kept[p0..p1] {
                    run_of[x as usize] = id;
                }
            }
            runs.push(Run {
                dir,
                len,
                first: lo,
            });
        }
    }

    let n = (total - opts.existing) as u64;
    let raw_streams = runs.len() as u64;
    let mut ranked: Vec<u32> = (0..runs.len() as u32).collect();
    ranked.sort_by(|&a, &b| {
        let (ra, rb) = (&runs[a as usize], &runs[b as usize]);
        rb.len.cmp(&ra.len).then(ra.first.cmp(&rb.first))
    });
    let target = ((1.0 - opts.noise) * n as f64).ceil() as u64;
    let k_max = ((n as f64).sqrt().floor() as u64).max(n / 8).max(1);
    // A stream has at least 3 keys and a quarter of the typical stream's (the run that holds
    // the median key, counting from the longest): random and out-of-order keys make runs of
    // one to a few keys.
    let typical = {
        let mut acc = 0u64;
        let mut t = 0u64;
        for &r in &ranked {
            acc += runs[r as usize].len;
            t = runs[r as usize].len;
            if acc * 2 >= n {
                break;
            }
        }
        t
    };
    let min_len = (typical / 4).max(3);
    let chosen: Vec<u32> = ranked
        .iter()
        .copied()
        .filter(|&r| runs[r as usize].len >= min_len && runs[r as usize].dir != 0)
        .collect();
    let covered: u64 = chosen.iter().map(|&r| runs[r as usize].len).sum();
    let singles_needed = chosen.is_empty();
    if covered < target || chosen.len() as u64 > k_max || singles_needed {
        // keys out of order or in runs too short to be a clear stream (8 keys, or sqrt(n):
        // cleaned random keys make runs of a few keys), discounted for a small input
        let clear = ((n as f64).sqrt() as u64).max(8);
        let in_clear: u64 = runs.iter().filter(|r| r.len >= clear).map(|r| r.len).sum();
        let short = n - in_clear;
        let confidence = short as f64 / n as f64 * (1.0 - 1.0 / (n as f64).sqrt());
        return Ok(Inference {
            code: GeekCode::Inf,
            confidence,
            keys: n,
            streams: Vec::new(),
            out_of_order: n,
            raw_streams,
        });
    }

    // second pass, in arrival order, the pattern's keys only: which stream grew at an end
    let mut rank = vec![0u32; total];
    for (pos, &i) in order.iter().enumerate() {
        rank[i as usize] = pos as u32;
    }
    drop(order);
    let mut in_pattern = vec![false; runs.len()];
    for &r in &chosen {
        in_pattern[r as usize] = true;
    }
    // Keys outside the pattern that arrived before a stream started count as the index's
    // content for it (a fence); those that arrive later are strays and do not move the ends.
    let mut at_end = vec![0u64; runs.len()];
    let mut max: Option<u32> = rank[..opts.existing].iter().copied().max();
    let mut min: Option<u32> = rank[..opts.existing].iter().copied().min();
    let (mut stray_max, mut stray_min): (Option<u32>, Option<u32>) = (None, None);
    let mut start_bounds: Vec<(Option<u32>, Option<u32>)> = vec![(None, None); runs.len()];
    for i in opts.existing..total {
        let r = run_of[i];
        let k = rank[i];
        if r == NO_RUN || !in_pattern[r as usize] {
            stray_max = Some(stray_max.map_or(k, |m| m.max(k)));
            stray_min = Some(stray_min.map_or(k, |m| m.min(k)));
            continue;
        }
        let run = &runs[r as usize];
        if i as u32 == run.first {
            start_bounds[r as usize] = (stray_max, stray_min);
        }
        let (smax, smin) = start_bounds[r as usize];
        let beyond = if run.dir > 0 {
            max.max(smax).map_or(true, |m| k > m)
        } else {
            match (min, smin) {
                (Some(a), Some(b)) => k < a.min(b),
                (a, b) => a.or(b).map_or(true, |m| k < m),
            }
        };
        if beyond {
            at_end[r as usize] += 1;
        }
        max = Some(max.map_or(k, |m| m.max(k)));
        min = Some(min.map_or(k, |m| m.min(k)));
    }
    let mut infos: Vec<StreamInfo> = chosen
        .iter()
        .map(|&r| {
            let run = &runs[r as usize];
            StreamInfo {
                dir: if run.dir > 0 { Dir::Asc } else { Dir::Desc },
                keys: run.len,
                at_end: at_end[r as usize] as f64 / run.len as f64,
                first: (run.first - e) as u64,
            }
        })
        .collect();
    infos.sort_by(|a, b| b.keys.cmp(&a.keys).then(a.first.cmp(&b.first)));
    let n_asc = infos.iter().filter(|s| s.dir == Dir::Asc).count() as u64;
    let n_desc = infos.len() as u64 - n_asc;
    let rhs = infos.iter().any(|s| s.dir == Dir::Asc && s.at_end > 0.5);
    let lhs = infos.iter().any(|s| s.dir == Dir::Desc && s.at_end > 0.5);
    let shortest = infos.iter().map(|s| s.keys).min().unwrap_or(1);
    let confidence = covered as f64 / n as f64 * (1.0 - 0.5f64.powi((shortest.min(60) as i32) - 1));
    Ok(Inference {
        code: GeekCode::Streams {
            n_asc,
            n_desc,
            lhs,
            rhs,
        },
        confidence,
        keys: n,
        streams: infos,
        out_of_order: n - covered,
        raw_streams,
    })
}

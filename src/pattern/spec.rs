//! Pattern specs: the text that names an insert pattern (`asc`, `desc`, `lr`, `inf`,
//! `streams:4`, `streams:3asc+2desc`, mixes such as `asc+streams:2desc` or `asc+inf@5%`), parsed
//! into a [`Spec`] that knows its geek code.
//!
//! Parts, joined by `+`:
//! - `asc` (also `rhs`, `right`): one ascending stream at the right end (right growing);
//! - `desc` (also `lhs`, `left`): one descending stream at the left end (left growing);
//! - `lr`: both of the above (left & right growing);
//! - `streams:N`: N ascending streams in the middle of the key space; `streams:Nasc`,
//!   `streams:Ndesc`, and `Nasc` / `Ndesc` after a `+` add middle streams of either direction
//!   (`streams:3asc+2desc`);
//! - `inf` (also `random`): keys random over the middle of the key space; `inf@P%` gives the
//!   random keys P% of all keys (default: one stream's share).
//!
//! Streams share the keys equally (after any `inf@P%`), interleaved in turn.

use std::fmt;
use std::str::FromStr;

use super::code::GeekCode;

/// Most middle streams one spec may have.
pub const MAX_STREAMS: u32 = 65_536;

/// Largest share of random keys a pattern may mix in and still be described by its streams
/// (the rest is out-of-order noise); more makes the pattern `inf`. Pattern inference leaves out
/// the same share of keys as noise by default.
pub const NOISE_MAX: f64 = 0.10;

/// A parsed insert pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// One ascending stream at the right end.
    pub rhs: bool,
    /// One descending stream at the left end.
    pub lhs: bool,
    /// Ascending streams in the middle of the key space.
    pub mid_asc: u32,
    /// Descending streams in the middle of the key space.
    pub mid_desc: u32,
    /// Random keys are mixed in.
    pub random: bool,
    /// Share of random keys in per mille, when given (`inf@P%`); otherwise random keys get
    /// one stream's share.
    pub random_permille: Option<u32>,
}

impl Spec {
    /// Number of streams (random keys not counted).
    pub fn streams(&self) -> u64 {
        self.rhs as u64 + self.lhs as u64 + self.mid_asc as u64 + self.mid_desc as u64
    }

    /// Share of keys that are random, 0 to 1.
    pub fn random_share(&self) -> f64 {
        if !self.random {
            return 0.0;
        }
        match self.random_permille {
            Some(p) => p as f64 / 1000.0,
            None => 1.0 / (self.streams() as f64 + 1.0),
        }
    }

    /// The geek code of the pattern: `inf` when more than [`NOISE_MAX`] of the keys are
    /// random, else its streams (random keys up to that share are noise, which the code does
    /// not show).
    pub fn code(&self) -> GeekCode {
        if self.streams() == 0 || self.random_share() > NOISE_MAX {
            return GeekCode::Inf;
        }
        GeekCode::Streams {
            n_asc: self.rhs as u64 + self.mid_asc as u64,
            n_desc: self.lhs as u64 + self.mid_desc as u64,
            lhs: self.lhs,
            rhs: self.rhs,
        }
    }

    /// Check that the pattern can be made of `keys` keys: every stream needs at least one.
    pub fn check_keys(&self, keys: u64) -> Result<(), String> {
        let streams = self.streams() + self.random as u64;
        if keys < streams {
            return Err(format!(
                "pattern {self} has {streams} streams, more than the {keys} keys to insert"
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Spec {
    /// The canonical text: `lr`, `asc`, `desc`, then `streams:...`, then `inf[@P%]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        match (self.lhs, self.rhs) {
            (true, true) => parts.push("lr".into()),
            (false, true) => parts.push("asc".into()),
            (true, false) => parts.push("desc".into()),
            (false, false) => {}
        }
        match (self.mid_asc, self.mid_desc) {
            (0, 0) => {}
            (a, 0) => parts.push(format!("streams:{a}")),
            (0, d) => parts.push(format!("streams:{d}desc")),
            (a, d) => parts.push(format!("streams:{a}asc+{d}desc")),
        }
        if self.random {
            match self.random_permille {
                Some(p) if p % 10 == 0 => parts.push(format!("inf@{}%", p / 10)),
                Some(p) => parts.push(format!("inf@{}.{}%", p / 10, p % 10)),
                None => parts.push("inf".into()),
            }
        }
        f.write_str(&parts.join("+"))
    }
}

/// `NAME=SPEC` (as in `--index-pattern pdc=streams:4`), or a bare `SPEC` named `default_name`.
pub fn parse_named(s: &str, default_name: &str) -> Result<(String, Spec), String> {
    match s.split_once('=') {
        Some((n, spec)) => {
            let n = n.trim();
            if n.is_empty() {
                return Err(format!("{s:?}: empty index name before '='"));
            }
            Ok((n.to_string(), spec.parse()?))
        }
        None => Ok((default_name.to_string(), s.parse()?)),
    }
}

/// `N`, `Nasc` or `Ndesc` (after `streams:` or a `+`): (ascending, descending) counts.
fn stream_count(t: &str, whole: &str) -> Result<(u32, u32), String> {
    let (num, asc) = if let Some(n) = t.strip_suffix("asc") {
        (n, true)
    } else if let Some(n) = t.strip_suffix("desc") {
        (n, false)
    } else {
        (t, true)
    };
    let n: u32 = num.parse().map_err(|_| {
        format!("pattern {whole:?}: {t:?} is not a stream count (N, Nasc or Ndesc)")
    })?;
    if n == 0 {
        return Err(format!("pattern {whole:?}: {t:?} has no streams (0)"));
    }
    if n > MAX_STREAMS {
        return Err(format!(
            "pattern {whole:?}: {n} streams, at most {MAX_STREAMS}"
        ));
    }
    Ok(if asc { (n, 0) } else { (0, n) })
}

/// `P%` of `inf@P%`, in per mille (one decimal allowed).
fn percent(t: &str, whole: &str) -> Result<u32, String> {
    let bad = || format!("pattern {whole:?}: {t:?} is not a share like 5% (0 < P < 100)");
    let num = t.strip_suffix('%').ok_or_else(bad)?;
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v > 0.0 && v < 100.0) {
        return Err(bad());
    }
    let pm = (v * 10.0).round();
    if (pm - v * 10.0).abs() > 1e-6 || pm < 1.0 {
        return Err(format!(
            "pattern {whole:?}: {t:?} has more than one decimal"
        ));
    }
    Ok(pm as u32)
}

impl FromStr for Spec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let whole = s.trim();
        if whole.is_empty() {
            return Err("empty pattern (expected asc, desc, lr, inf, streams:N, ...)".into());
        }
        let mut spec = Spec {
            rhs: false,
            lhs: false,
            mid_asc: 0,
            mid_desc: 0,
            random: false,
            random_permille: None,
        };
        let once = |flag: &mut bool, what: &str| -> Result<(), String> {
            if *flag {
                return Err(format!("pattern {whole:?}: {what} given twice"));
            }
            *flag = true;
            Ok(())
        };
        for raw in whole.split('+') {
            let t = raw.trim().to_ascii_lowercase();
            let t = t.as_str();
            match t {
                "" => return Err(format!("pattern {whole:?}: empty part between '+'")),
                "asc" | "rhs" | "right" => once(&mut spec.rhs, "the right-growing stream (asc)")?,
                "desc" | "lhs" | "left" => once(&mut spec.lhs, "the left-growing stream (desc)")?,
                "lr" => {
                    once(&mut spec.rhs, "the right-growing stream (asc)")?;
                    once(&mut spec.lhs, "the left-growing stream (desc)")?;
                }
                _ if t == "inf"
                    || t == "random"
                    || t.starts_with("inf@")
                    || t.starts_with("random@") =>
                {
                    once(&mut spec.random, "inf")?;
                    if let Some((_, p)) = t.split_once('@') {
                        spec.random_permille = Some(percent(p, whole)?);
                    }
                }
                _ => {
                    let counts = if let Some(rest) = t.strip_prefix("streams:") {
                        stream_count(rest, whole)?
                    } else if t.starts_with(|c: char| c.is_ascii_digit()) {
                        stream_count(t, whole)?
                    } else {
                        return Err(format!(
                            "pattern {whole:?}: unknown part {t:?} (expected asc, desc, lr, inf, \
                             inf@P%, streams:N, streams:Nasc, streams:Ndesc)"
                        ));
                    };
                    spec.mid_asc = spec.mid_asc.saturating_add(counts.0);
                    spec.mid_desc = spec.mid_desc.saturating_add(counts.1);
                    if spec.mid_asc + spec.mid_desc > MAX_STREAMS {
                        return Err(format!(
                            "pattern {whole:?}: more than {MAX_STREAMS} middle streams"
                        ));
                    }
                }
            }
        }
        if spec.random_permille.is_some() && spec.streams() == 0 {
            return Err(format!(
                "pattern {whole:?}: inf@P% needs streams to mix with (plain inf is all random)"
            ));
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &str) -> String {
        s.parse::<Spec>().unwrap().code().to_string()
    }

    #[test]
    fn codes_of_specs() {
        assert_eq!(code("asc"), "(nAsc:1, nRHS:1)");
        assert_eq!(code("desc"), "(nDesc:1, nLHS:1)");
        assert_eq!(code("lr"), "(nAsc:1, nDesc:1, nLHS:1, nRHS:1)");
        assert_eq!(code("asc+desc"), "(nAsc:1, nDesc:1, nLHS:1, nRHS:1)");
        assert_eq!(code("inf"), "(inf)");
        assert_eq!(code("random"), "(inf)");
        assert_eq!(code("streams:4"), "(nAsc:4)");
        assert_eq!(code("streams:3asc+2desc"), "(nAsc:3, nDesc:2)");
        assert_eq!(code("streams:1desc"), "(nDesc:1)");
        assert_eq!(code("asc+streams:2desc"), "(nAsc:1, nDesc:2, nRHS:1)");
        assert_eq!(code("asc+inf@5%"), "(nAsc:1, nRHS:1)");
        assert_eq!(code("asc+inf@10%"), "(nAsc:1, nRHS:1)");
        assert_eq!(code("asc+inf@10.5%"), "(inf)");
        assert_eq!(code("asc+inf"), "(inf)");
        assert_eq!(
            code(" LR + Streams:2 "),
            "(nAsc:3, nDesc:1, nLHS:1, nRHS:1)"
        );
    }

    #[test]
    fn canonical_text_round_trips() {
        for s in [
            "asc",
            "desc",
            "lr",
            "inf",
            "streams:4",
            "streams:2desc",
            "streams:3asc+2desc",
            "asc+streams:1desc+inf@2.5%",
            "lr+inf",
        ] {
            let p: Spec = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
            assert_eq!(p.to_string().parse::<Spec>().unwrap(), p);
        }
        assert_eq!("rhs+lhs".parse::<Spec>().unwrap().to_string(), "lr");
    }

    #[test]
    fn bad_specs_say_what_is_wrong_on_one_line() {
        for (s, want) in [
            ("", "empty pattern"),
            ("up", "unknown part \"up\""),
            ("asc+asc", "given twice"),
            ("lr+desc", "given twice"),
            ("streams:0", "no streams"),
            ("streams:x", "not a stream count"),
            ("streams:70000", "at most 65536"),
            ("asc++desc", "empty part"),
            ("inf@5%", "needs streams"),
            ("asc+inf@0%", "not a share"),
            ("asc+inf@100%", "not a share"),
            ("asc+inf@5", "not a share"),
            ("asc+inf@1.25%", "more than one decimal"),
        ] {
            let e = s.parse::<Spec>().unwrap_err();
            assert!(e.contains(want), "{s:?}: {e}");
            assert!(!e.contains('\n'));
        }
        let (n, p) = parse_named("pdc = streams:4", "pk").unwrap();
        assert_eq!((n.as_str(), p.to_string().as_str()), ("pdc", "streams:4"));
        assert_eq!(parse_named("lr", "pk").unwrap().0, "pk");
        assert!(parse_named("=asc", "pk")
            .unwrap_err()
            .contains("empty index name"));
        assert!(parse_named("x=up", "pk")
            .unwrap_err()
            .contains("unknown part"));
        assert!(p.check_keys(4).is_ok());
        let e = p.check_keys(3).unwrap_err();
        assert!(e.contains("more than the 3 keys"), "{e}");
    }
}

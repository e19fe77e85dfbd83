//! The insert-pattern geek code of seed 000: per index, the number of ascending and descending
//! insert streams and whether one of them grows at the right (or left) end, or `inf` when the
//! inserts are random with respect to the index.
//!
//! Written as seed 000 writes it, omitting zero attributes: `pk=(nAsc:1, nRHS:1)`,
//! `marketsegment=(inf)`; the long form `(nAsc:1, nDesc:0, nLHS:0, nRHS:1)` parses too.

use std::fmt;
use std::str::FromStr;

/// The insert pattern of one index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeekCode {
    /// Random with respect to the index: as many insert points as inserts.
    Inf,
    /// A finite number of insert streams.
    Streams {
        /// Streams whose keys ascend (nAsc).
        n_asc: u64,
        /// Streams whose keys descend (nDesc).
        n_desc: u64,
        /// One descending stream grows at the left end of the index (nLHS is 1).
        lhs: bool,
        /// One ascending stream grows at the right end of the index (nRHS is 1).
        rhs: bool,
    },
}

impl GeekCode {
    /// A finite code, checked against seed 000's constraints: nAsc + nDesc >= 1, nLHS only
    /// with a descending stream, nRHS only with an ascending one.
    pub fn streams(n_asc: u64, n_desc: u64, lhs: bool, rhs: bool) -> Result<Self, String> {
        if n_asc + n_desc == 0 {
            return Err("a pattern needs at least one stream (nAsc + nDesc >= 1) or inf".into());
        }
        if lhs && n_desc == 0 {
            return Err("nLHS:1 needs a descending stream (nDesc >= 1)".into());
        }
        if rhs && n_asc == 0 {
            return Err("nRHS:1 needs an ascending stream (nAsc >= 1)".into());
        }
        Ok(GeekCode::Streams {
            n_asc,
            n_desc,
            lhs,
            rhs,
        })
    }

    /// Right growing: `(nAsc:1, nRHS:1)`.
    pub const RIGHT_GROWING: GeekCode = GeekCode::Streams {
        n_asc: 1,
        n_desc: 0,
        lhs: false,
        rhs: true,
    };

    /// The code with every attribute written, zeros included (seed 000's long form).
    pub fn long_form(&self) -> String {
        match *self {
            GeekCode::Inf => "(inf)".into(),
            GeekCode::Streams {
                n_asc,
                n_desc,
                lhs,
                rhs,
            } => format!(
                "(nAsc:{n_asc}, nDesc:{n_desc}, nLHS:{}, nRHS:{})",
                lhs as u8, rhs as u8
            ),
        }
    }

    /// `name=(code)`.
    pub fn named(&self, name: &str) -> String {
        format!("{name}={self}")
    }
}

impl fmt::Display for GeekCode {
    /// Seed 000's short form: attributes that are 0 are left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GeekCode::Inf => f.write_str("(inf)"),
            GeekCode::Streams {
                n_asc,
                n_desc,
                lhs,
                rhs,
            } => {
                let mut parts: Vec<String> = Vec::with_capacity(4);
                if n_asc > 0 {
                    parts.push(format!("nAsc:{n_asc}"));
                }
                if n_desc > 0 {
                    parts.push(format!("nDesc:{n_desc}"));
                }
                if lhs {
                    parts.push("nLHS:1".into());
                }
                if rhs {
                    parts.push("nRHS:1".into());
                }
                write!(f, "({})", parts.join(", "))
            }
        }
    }
}

impl FromStr for GeekCode {
    type Err = String;

    /// `(inf)`, `(nAsc:1, nRHS:1)`, the long form, or any of them after `name=`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let t = match t.find('=') {
            Some(i) if !t[..i].contains('(') => t[i + 1..].trim(),
            _ => t,
        };
        let inner = t
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(|| format!("geek code {s:?}: expected (inf) or (nAsc:N, ...)"))?
            .trim();
        if inner == "inf" {
            return Ok(GeekCode::Inf);
        }
        let (mut a, mut d, mut l, mut r) = (0u64, 0u64, 0u64, 0u64);
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once(':')
                .ok_or_else(|| format!("geek code {s:?}: {part:?} is not NAME:VALUE"))?;
            let v: u64 = v
                .trim()
                .parse()
                .map_err(|_| format!("geek code {s:?}: {part:?} has no whole number"))?;
            match k.trim() {
                "nAsc" => a = v,
                "nDesc" => d = v,
                "nLHS" => l = v,
                "nRHS" => r = v,
                other => {
                    return Err(format!(
                        "geek code {s:?}: unknown attribute {other:?} (nAsc, nDesc, nLHS, nRHS)"
                    ))
                }
            }
        }
        if l > 1 || r > 1 {
            return Err(format!("geek code {s:?}: nLHS and nRHS are 0 or 1"));
        }
        GeekCode::streams(a, d, l == 1, r == 1).map_err(|e| format!("geek code {s:?}: {e}"))
    }
}

/// Codes of several indexes on one line, as seed 000 writes them: `pk=(nAsc:1, nRHS:1)
/// marketsegment=(inf) ...`.
pub fn line(codes: &[(String, GeekCode)]) -> String {
    codes
        .iter()
        .map(|(n, c)| c.named(n))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_form_omits_zeros_and_long_form_parses() {
        let c: GeekCode = "pk=(nAsc:1, nDesc:0, nLHS:0, nRHS:1)".parse().unwrap();
        assert_eq!(c, GeekCode::RIGHT_GROWING);
        assert_eq!(c.to_string(), "(nAsc:1, nRHS:1)");
        assert_eq!(c.named("pk"), "pk=(nAsc:1, nRHS:1)");
        assert_eq!(c.long_form(), "(nAsc:1, nDesc:0, nLHS:0, nRHS:1)");
        let lr: GeekCode = "(nAsc:1, nDesc:1, nLHS:1, nRHS:1)".parse().unwrap();
        assert_eq!(lr.to_string(), "(nAsc:1, nDesc:1, nLHS:1, nRHS:1)");
        assert_eq!("s1=(inf)".parse::<GeekCode>().unwrap(), GeekCode::Inf);
        assert_eq!(GeekCode::Inf.to_string(), "(inf)");
        assert_eq!(
            "(nAsc:2)".parse::<GeekCode>().unwrap().to_string(),
            "(nAsc:2)"
        );
    }

    #[test]
    fn constraints_of_seed_000() {
        assert!("(nLHS:1, nAsc:1)".parse::<GeekCode>().is_err());
        assert!("(nRHS:1, nDesc:1)".parse::<GeekCode>().is_err());
        assert!("(nRHS:2, nAsc:2)".parse::<GeekCode>().is_err());
        assert!("()".parse::<GeekCode>().is_err());
        assert!("(nUp:1)".parse::<GeekCode>().is_err());
        assert!("nAsc:1".parse::<GeekCode>().is_err());
        assert_eq!(
            line(&[
                ("pk".into(), GeekCode::RIGHT_GROWING),
                ("s1".into(), GeekCode::Inf)
            ]),
            "pk=(nAsc:1, nRHS:1) s1=(inf)"
        );
    }
}

//! What a person reads, formatted in one place for the terminal, the text, Markdown, CSV and
//! HTML output, at every layer (this is base: it imports nothing of the crate): numbers with 3
//! significant digits (4 from 1000 to 9999, whole numbers above), seconds, milliseconds from
//! microseconds, rates, ratios, percentages, bytes and times of day (ISO 8601 to the
//! millisecond); text on one line ([`one_line`], [`error_line`]) and escaped for HTML
//! ([`html`]). Unknown is `-` (the tables' unknown), never 0. A figure is rounded for the
//! reader only: run.json keeps it whole.

/// Text escaped for HTML, in an element or a quoted attribute (`&`, `<`, `>`, `"`).
pub fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text on one line: each run of white space (newlines among it) one space, none at the ends.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error and its causes on one line, `context: cause: cause`; a cause whose text an earlier
/// part already holds is left out (drivers often repeat the cause inside the context).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut out: Vec<String> = Vec::new();
    for p in e.chain().map(|c| c.to_string().replace('\n', " ")) {
        if !out.iter().any(|o| o.contains(p.as_str())) {
            out.push(p);
        }
    }
    out.join(": ")
}

/// A number with 3 significant digits (`0.0812`, `1.23`, `41.2`, `412`), whole from 1000 on
/// (`1234`, `364411`); `-0` is `0`; not finite is `-`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 99.95 {
        format!("{v:.0}")
    } else if a >= 9.995 {
        format!("{v:.1}")
    } else if a >= 0.9995 {
        format!("{v:.2}")
    } else {
        // 3 significant digits below 1: 0.123, 0.0123, 0.00123; the magnitude of the value
        // rounded to 3 digits (0.0999996 -> 0.100, not 0.1000)
        let r: f64 = format!("{a:.2e}").parse().unwrap_or(a);
        let mag = r.log10().floor() as i32; // -1 for 0.1..1
        let decimals = (2 - mag).clamp(0, 12) as usize;
        format!("{v:.decimals$}")
    };
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        // rounded to zero (or -0): no sign
        return s.trim_start_matches('-').to_string();
    }
    s
}

/// [`num`] of a known figure, `-` when unknown.
pub fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), num)
}

/// Microseconds as milliseconds with 3 significant digits (`0.0120`, `5.90`, `72.1`, `1234`).
pub fn ms(us: u64) -> String {
    num(us as f64 / 1000.0)
}

/// Microseconds as milliseconds with two decimals, as sysbench prints them (`5.90`, `72.13`,
/// `0.01`): the oltp summary and its table, the timeseries summary, ddl's check messages.
pub fn ms2(us: u64) -> String {
    format!("{:.2}", us as f64 / 1000.0)
}

/// A known figure formatted by `f`, `unknown` (the word, in a sentence) when unknown.
pub fn or_unknown<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| "unknown".into(), f)
}

/// [`ms`] of a known figure, `-` when unknown.
pub fn opt_ms(us: Option<u64>) -> String {
    us.map_or_else(|| "-".into(), ms)
}

/// Seconds with 3 significant digits and no unit (`0.0812`, `1.23`, `412`).
pub fn secs(v: f64) -> String {
    num(v)
}

/// [`secs`] of a known figure, `-` when unknown.
pub fn opt_secs(v: Option<f64>) -> String {
    opt(v)
}

/// A duration with its unit, for sentences: `850 ms`, `1.23 s`, `41.2 s`, `12 min 5 s`,
/// `2 h 3 min`; `-` when not finite.
pub fn duration(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v < 1.0 {
        format!("{} ms", num(v * 1000.0))
    } else if v < 600.0 {
        format!("{} s", num(v))
    } else if v < 7200.0 {
        let s = v.round() as u64;
        format!("{} min {} s", s / 60, s % 60)
    } else {
        let m = (v / 60.0).round() as u64;
        format!("{} h {} min", m / 60, m % 60)
    }
}

/// A rate per second, whole from 100 on (`364411`, `85.3`, `0.500`).
pub fn rate(v: f64) -> String {
    num(v)
}

/// A figure to one decimal (`3.5`, `104.8`; `-0.0` is `0.0`), whole from 1000 on (`1980`, not
/// `1979.7`): the ddl tables' seconds and rates, judged to the tenth of a second.
pub fn tenths(v: f64) -> String {
    if v.abs() >= 999.95 {
        format!("{v:.0}")
    } else {
        format!("{:.1}", v + 0.0).replace("-0.0", "0.0")
    }
}

/// A ratio to a base with two decimals, `0.91x`, `12.00x` (ddl's "vs base" columns).
pub fn ratio2(v: f64) -> String {
    format!("{v:.2}x")
}

/// A ratio to a base, `0.912x`, `12.0x`; `-` when unknown.
pub fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{}x", num(x)))
}

/// A fraction (0.123) as a percentage with 3 significant digits, `12.3%`.
pub fn pct(frac: f64) -> String {
    format!("{}%", num(frac * 100.0))
}

/// Bytes with a decimal unit (`512 B`, `1.23 kB`, `41.2 MB`, `1.50 GB`).
pub fn bytes(b: f64) -> String {
    if !b.is_finite() {
        return "-".into();
    }
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 999.5 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{} B", b.round())
    } else {
        format!("{} {}", num(v), units[u])
    }
}

/// Bytes as megabytes (10^6) with one decimal and no unit (`41.2`, `0.0`; index's tables and
/// lines), `-` when unknown.
pub fn mb1(b: Option<u64>) -> String {
    b.map_or_else(|| "-".into(), |v| format!("{:.1}", v as f64 / 1e6))
}

/// A time given in nanoseconds since the Unix epoch as ISO 8601 UTC to the millisecond
/// (`2026-11-28T14:51:17.123Z`).
pub fn iso_ms_from_unix_ns(ns: i128) -> String {
    let ms = ns.div_euclid(1_000_000);
    let secs = ms.div_euclid(1000) as i64;
    let milli = ms.rem_euclid(1000);
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// Seconds since the epoch as (year, month, day, hour, minute, second) in UTC.
fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// An ISO 8601 timestamp cut to the millisecond (`2026-11-28T14:51:17.123456789Z` ->
/// `2026-11-28T14:51:17.123Z`); text that is not one is returned as it is.
pub fn iso_ms(ts: &str) -> String {
    let Some(dot) = ts.find('.') else {
        return ts.to_string();
    };
    let frac: String = ts[dot + 1..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    if frac.len() <= 3 || !ts[..dot].contains('T') {
        return ts.to_string();
    }
    format!(
        "{}.{}{}",
        &ts[..dot],
        &frac[..3],
        &ts[dot + 1 + frac.len()..]
    )
}

/// An ISO 8601 timestamp cut to the second, without its offset when it is UTC, for a
/// heading (`2026-11-28T14:51:17.123456789+00:00` -> `2026-11-28 14:51:17 UTC`); text that is
/// not one is returned as it is.
pub fn iso_s(ts: &str) -> String {
    let (Some(t), true) = (ts.find('T'), ts.len() >= 19) else {
        return ts.to_string();
    };
    if t != 10 || !ts.is_char_boundary(19) {
        return ts.to_string();
    }
    let rest = ts[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    let zone = match rest {
        "Z" | "+00:00" | "" => " UTC".to_string(),
        z => format!(" {z}"),
    };
    format!("{} {}{zone}", &ts[..10], &ts[11..19])
}

/// A table cell as a person reads it: a number with a fraction and more than 4 significant
/// digits (`0.7941924819999997`, `159722.44`, from a table built outside this module) is
/// given 3 ([`num`]); any other cell is kept. The text, Markdown and HTML tables show cells
/// through this; CSV keeps them as written (for spreadsheets).
pub fn cell(c: &str) -> std::borrow::Cow<'_, str> {
    if fraction_digits(c) > 4 {
        if let Ok(v) = c.parse::<f64>() {
            return std::borrow::Cow::Owned(num(v));
        }
    }
    std::borrow::Cow::Borrowed(c)
}

/// The significant digits of a number with a fraction part as a table shows it (`0.0812`
/// -> 3, `12.34` -> 4); 0 for a whole number (`364411`: a count, exact as printed) and for
/// text. What a check of "no more than 4 significant digits" counts.
pub fn fraction_digits(cell: &str) -> usize {
    if !cell.contains('.') || cell.parse::<f64>().is_err() {
        return 0;
    }
    let digits: String = cell
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|&c| c == '0')
        .collect();
    digits.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits() {
        assert_eq!(num(0.7941924819999997), "0.794");
        assert_eq!(num(0.0812345), "0.0812");
        assert_eq!(num(0.000123456), "0.000123");
        assert_eq!(num(1.23456), "1.23");
        assert_eq!(num(41.2345), "41.2");
        assert_eq!(num(412.345), "412");
        assert_eq!(num(1234.6), "1235");
        assert_eq!(num(364411.2), "364411");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-2.5), "-2.50");
        assert_eq!(num(f64::NAN), "-");
        // rounding up across a boundary keeps 3 digits, not 4
        assert_eq!(num(9.9996), "10.0");
        assert_eq!(num(99.96), "100");
        assert_eq!(num(0.99996), "1.00");
        assert_eq!(num(0.0999996), "0.100");
    }

    #[test]
    fn no_cell_has_more_than_four_significant_digits_below_10000() {
        let mut v = 0.000_012_345_678_9;
        while v < 10_000.0 {
            let s = num(v);
            assert!(fraction_digits(&s) <= 4, "{v} -> {s}");
            v *= 1.37;
        }
    }

    #[test]
    fn units() {
        assert_eq!(ms(5899), "5.90");
        assert_eq!(ms(12), "0.0120");
        assert_eq!(ms(72127), "72.1");
        assert_eq!(opt_ms(None), "-");
        assert_eq!(ms2(72127), "72.13");
        assert_eq!(ms2(12), "0.01");
        assert_eq!(or_unknown(Some(5899), ms2), "5.90");
        assert_eq!(or_unknown(None, ms2), "unknown");
        assert_eq!(opt(None), "-");
        assert_eq!(duration(0.0125), "12.5 ms");
        assert_eq!(duration(1.234), "1.23 s");
        assert_eq!(duration(725.0), "12 min 5 s");
        assert_eq!(duration(7380.0), "2 h 3 min");
        assert_eq!(ratio(Some(0.91234)), "0.912x");
        assert_eq!(tenths(3.45), "3.5");
        assert_eq!(tenths(-0.01), "0.0");
        assert_eq!(tenths(1979.7), "1980");
        assert_eq!(ratio2(1.014), "1.01x");
        assert_eq!(ratio(None), "-");
        assert_eq!(pct(0.12345), "12.3%");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1234.0), "1.23 kB");
        assert_eq!(bytes(41_234_567.0), "41.2 MB");
        assert_eq!(bytes(1.5e9), "1.50 GB");
        assert_eq!(mb1(Some(41_234_567)), "41.2");
        assert_eq!(mb1(None), "-");
    }

    #[test]
    fn text() {
        assert_eq!(
            html(r#"<a href="x">&</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(
            one_line("  ERROR:\n  relation \"t\"\tmissing \n"),
            "ERROR: relation \"t\" missing"
        );
        let e = anyhow::anyhow!("connection refused")
            .context("cannot connect: connection refused")
            .context("run");
        assert_eq!(error_line(&e), "run: cannot connect: connection refused");
        let e = anyhow::anyhow!("line one\nline two").context("load");
        assert_eq!(error_line(&e), "load: line one line two");
    }

    #[test]
    fn times() {
        // 2026-11-28T14:51:17.123Z
        assert_eq!(
            iso_ms_from_unix_ns(1_795_877_477_123_456_789),
            "2026-11-28T14:51:17.123Z"
        );
        assert_eq!(iso_ms_from_unix_ns(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_ms("2026-11-28T14:51:17.123456789Z"),
            "2026-11-28T14:51:17.123Z"
        );
        assert_eq!(
            iso_ms("2026-11-28T14:51:17.123456+00:00"),
            "2026-11-28T14:51:17.123+00:00"
        );
        assert_eq!(iso_ms("2026-11-28T14:51:17Z"), "2026-11-28T14:51:17Z");
        assert_eq!(iso_ms("not a time"), "not a time");
        assert_eq!(
            iso_s("2026-11-28T14:51:17.123456789+00:00"),
            "2026-11-28 14:51:17 UTC"
        );
        assert_eq!(
            iso_s("2026-11-28T14:51:17+01:00"),
            "2026-11-28 14:51:17 +01:00"
        );
        assert_eq!(iso_s("yesterday"), "yesterday");
    }

    #[test]
    fn cells() {
        assert_eq!(cell("0.7941924819999997"), "0.794");
        assert_eq!(cell("159722.44"), "159722");
        assert_eq!(cell("7986.12"), "7986");
        assert_eq!(cell("12.34"), "12.34");
        assert_eq!(cell("364411"), "364411");
        assert_eq!(
            cell("n/a (step shorter than an interval)"),
            "n/a (step shorter than an interval)"
        );
        assert_eq!(cell("cache_size=-2000"), "cache_size=-2000");
    }

    #[test]
    fn counted_digits() {
        assert_eq!(fraction_digits("0.7941924819999997"), 16);
        assert_eq!(fraction_digits("0.0812"), 3);
        assert_eq!(fraction_digits("364411"), 0);
        assert_eq!(fraction_digits("12.34"), 4);
        assert_eq!(fraction_digits("-"), 0);
        assert_eq!(fraction_digits("1.2.3"), 0);
    }
}

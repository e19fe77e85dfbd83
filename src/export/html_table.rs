//! One table of already formatted cells ([`super::Table`]) as an HTML `<table>`: numbers
//! right-aligned, alarms painted, a wide table of few rows turned. Below the report
//! ([`super::html`]) and its DDL and build timelines ([`super::timelines`]), which both
//! render their tables with it.

use super::Table;
use crate::format as fmt;
use crate::format::html as esc;

fn is_number(s: &str) -> bool {
    s == "-" || (!s.is_empty() && s.parse::<f64>().is_ok())
}

/// A table wider than this many columns with few rows is shown turned (a row per column):
/// 22 narrow columns of a few points would not fit a 1400 px page.
const TURN_COLUMNS: usize = 16;

/// One cell ([`fmt::cell`]: at most 4 significant digits); numbers right-aligned, alarms
/// (`FAILED`, `NOT met`, `WORSE`) painted.
fn cell(c: &str) -> String {
    let c: &str = &fmt::cell(c);
    let bad = c.contains("failed")
        || c.contains("FAILED")
        || c.contains("NOT met")
        || c.contains("WORSE");
    let class = match (is_number(c), bad) {
        (_, true) => " class=\"bad\"",
        (true, _) => " class=\"num\"",
        _ => "",
    };
    format!("<td{class}>{}</td>", esc(c))
}

/// A column name that may break after its underscores (`after_p99_vs_base`).
fn header(h: &str) -> String {
    esc(h).replace('_', "_<wbr>")
}

/// One table as an HTML `<table>`. A wide table of few rows (`ddl`, `ddl_methods`) is turned:
/// one row per column, one column per row, headed by each row's first cell.
pub fn table(t: &Table) -> String {
    let mut out = String::from("<div class=\"tw\"><table>\n<tr>");
    if t.headers.len() > TURN_COLUMNS && t.rows.len() * 2 < t.headers.len() {
        out.push_str(&format!("<th>{}</th>", header(&t.headers[0])));
        for r in &t.rows {
            out.push_str(&format!("<th>{}</th>", esc(&r[0])));
        }
        out.push_str("</tr>\n");
        for (i, h) in t.headers.iter().enumerate().skip(1) {
            out.push_str(&format!("<tr><th class=\"row\">{}</th>", header(h)));
            for r in &t.rows {
                out.push_str(&cell(r.get(i).map(String::as_str).unwrap_or("")));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
        return out;
    }
    for h in &t.headers {
        out.push_str(&format!("<th>{}</th>", header(h)));
    }
    out.push_str("</tr>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            out.push_str(&cell(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_classes() {
        let mut t = Table::new(["step", "ips", "status"]);
        t.push(vec![
            "<l.i0>".into(),
            "1234".into(),
            "ok (rate NOT met)".into(),
        ]);
        let h = table(&t);
        assert!(h.contains("<td>&lt;l.i0&gt;</td>"), "{h}");
        assert!(h.contains("<td class=\"num\">1234</td>"), "{h}");
        assert!(
            h.contains("<td class=\"bad\">ok (rate NOT met)</td>"),
            "{h}"
        );
    }
}

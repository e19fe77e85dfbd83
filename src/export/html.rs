//! A self-contained HTML report (no scripts, no external files): the run's header facts and
//! its tables, numbers right-aligned, failed statuses highlighted.

use super::Table;
use crate::results::RunResult;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn is_number(s: &str) -> bool {
    s == "-" || (!s.is_empty() && s.parse::<f64>().is_ok())
}

/// One table as an HTML `<table>`.
pub fn table(t: &Table) -> String {
    let mut out = String::from("<table>\n<tr>");
    for h in &t.headers {
        out.push_str(&format!("<th>{}</th>", esc(h)));
    }
    out.push_str("</tr>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            let bad = c.contains("failed") || c.contains("NOT met") || c.contains("WORSE");
            let class = match (is_number(c), bad) {
                (_, true) => " class=\"bad\"",
                (true, _) => " class=\"num\"",
                _ => "",
            };
            out.push_str(&format!("<td{class}>{}</td>", esc(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// The report of a run: what ran where, then each (title, table).
pub fn report(run: &RunResult, tables: &[(&str, Table)]) -> String {
    let t = &run.target;
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ixbench report</title>\n<style>\
         body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}\
         th,td{border:1px solid #ccc;padding:3px 8px}th{background:#eee}td.num{text-align:right;\
         font-variant-numeric:tabular-nums}td.bad{background:#fdd}</style></head><body>\n",
    );
    out.push_str(&format!(
        "<h1>ixbench {}</h1>\n<p>{} {}{} &middot; {} &middot; status <b>{}</b></p>\n",
        esc(&run.ixbench_version),
        esc(&t.kind),
        esc(&t.version),
        t.engine
            .as_deref()
            .map(|e| format!(" ({})", esc(e)))
            .unwrap_or_default(),
        esc(&t.location),
        esc(&format!("{:?}", run.status).to_lowercase()),
    ));
    out.push_str(&format!(
        "<p>host {} &middot; {} CPUs &middot; {:.1} GiB &middot; {} &middot; started {}</p>\n",
        esc(&run.host.hostname),
        run.host.cpus,
        run.host.memory_bytes as f64 / (1u64 << 30) as f64,
        esc(&run.host.kernel),
        esc(&run.started_at)
    ));
    for n in &t.notes {
        out.push_str(&format!("<p><i>{}</i></p>\n", esc(n)));
    }
    if let Some(e) = &run.error {
        out.push_str(&format!("<p class=\"bad\"><b>error:</b> {}</p>\n", esc(e)));
    }
    for (title, tab) in tables {
        out.push_str(&format!("<h2>{}</h2>\n{}", esc(title), table(tab)));
    }
    out.push_str("</body></html>\n");
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

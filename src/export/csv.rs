//! CSV (RFC 4180): one header line, then one line per row; cells with commas, quotes or line
//! breaks are quoted.

use super::Table;

fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Render `t` as CSV.
pub fn render(t: &Table) -> String {
    let mut out = String::new();
    for row in std::iter::once(&t.headers).chain(t.rows.iter()) {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let mut t = Table::new(["a", "b"]);
        t.push(vec!["1,5".into(), "say \"hi\"".into()]);
        t.push(vec!["x".into()]);
        assert_eq!(render(&t), "a,b\n\"1,5\",\"say \"\"hi\"\"\"\nx,\n");
    }
}

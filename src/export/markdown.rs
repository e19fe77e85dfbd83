//! Markdown (GitHub) tables: numbers right-aligned, text left-aligned.

use super::Table;

fn is_number(s: &str) -> bool {
    !s.is_empty()
        && s.trim_start_matches('-')
            .replace(['.', ',', '%', 'x'], "")
            .chars()
            .all(|c| c.is_ascii_digit())
}

/// Render `t` as a Markdown table.
pub fn render(t: &Table) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "| {} |\n",
        t.headers
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let numeric: Vec<bool> = (0..t.headers.len())
        .map(|i| !t.rows.is_empty() && t.rows.iter().all(|r| r[i].is_empty() || is_number(&r[i])))
        .collect();
    let align: Vec<&str> = numeric
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in &t.rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter()
                .map(|c| esc(&crate::format::cell(c)))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_numbers_right() {
        let mut t = Table::new(["knob", "secs"]);
        t.push(vec!["a|b".into(), "1.25".into()]);
        assert_eq!(
            render(&t),
            "| knob | secs |\n|---|---:|\n| a\\|b | 1.25 |\n"
        );
    }
}

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

/// Read back what [`render`] wrote: the first line is the header. `None` when `text` is
/// empty or a quote is not closed.
pub fn parse(text: &str) -> Option<Table> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    if quoted {
        return None;
    }
    if !cell.is_empty() || !row.is_empty() {
        row.push(cell);
        rows.push(row);
    }
    let mut it = rows.into_iter();
    let mut t = Table::new(it.next()?);
    for r in it {
        t.push(r);
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_renders() {
        let mut t = Table::new(["a", "b,c"]);
        t.push(vec!["1,5".into(), "say \"hi\"\nthere".into()]);
        t.push(vec!["x".into(), String::new()]);
        assert_eq!(parse(&render(&t)), Some(t));
        assert_eq!(parse(""), None);
        assert_eq!(parse("a,\"b\n"), None);
    }

    #[test]
    fn quoting() {
        let mut t = Table::new(["a", "b"]);
        t.push(vec!["1,5".into(), "say \"hi\"".into()]);
        t.push(vec!["x".into()]);
        assert_eq!(render(&t), "a,b\n\"1,5\",\"say \"\"hi\"\"\"\nx,\n");
    }
}

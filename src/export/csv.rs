//! CSV (RFC 4180): one header line, then one line per row; cells with commas, quotes or line
//! breaks are quoted.

use super::Table;

/// Render `t` as CSV, with the `csv` crate: a cell is quoted only when it holds a comma, a
/// quote or a line break, quotes doubled, lines end in `\n`.
pub fn render(t: &Table) -> String {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for row in std::iter::once(&t.headers).chain(t.rows.iter()) {
        // Writing into memory cannot fail.
        w.write_record(row).expect("CSV into memory");
    }
    let bytes = w.into_inner().expect("CSV into memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
}

/// Read back what [`render`] wrote: the first line is the header. `None` when `text` is
/// empty or a quote is not closed (the `csv` reader takes an unclosed quote to the end of the
/// text; in what [`render`] writes quotes come in pairs, so an odd count is the unclosed one).
pub fn parse(text: &str) -> Option<Table> {
    if text.matches('"').count() % 2 == 1 {
        return None;
    }
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = r.records().map(|rec| {
        rec.ok()
            .map(|rec| rec.iter().map(String::from).collect::<Vec<_>>())
    });
    let mut t = Table::new(rows.next()??);
    for row in rows {
        t.push(row?);
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
        // A lone empty cell is written `""`, so the row is not an empty line readers skip.
        let mut one = Table::new(["a"]);
        one.push(vec![String::new()]);
        one.push(vec!["cr\r".into()]);
        assert_eq!(render(&one), "a\n\"\"\n\"cr\r\"\n");
        assert_eq!(parse(&render(&one)), Some(one));
    }
}

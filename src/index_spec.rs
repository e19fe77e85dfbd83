//! `--index 'NAME: col1, col2 [DESC], ...'`: user-defined secondary indexes for `ixbench index`,
//! on ixbench's own tables and on copies of the user's tables. Parsed and checked (names,
//! columns that exist, duplicates, what the DBMS has) before anything runs, then handed to the
//! DBMS drivers as generic [`IndexSpec`]s.

use anyhow::{bail, Context, Result};

use crate::dbms::{Conn, IndexSpec};

/// One column of a user index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexCol {
    /// The column, or the expression with its parentheses (`(lower(c))`) when `expr`.
    pub name: String,
    /// An expression (`(lower(c))`) rather than a column: PostgreSQL, SQLite and MySQL
    /// 8.0.13+ have them (MariaDB refuses them when the index is built).
    pub expr: bool,
    /// A prefix length (`col(10)`; MySQL/MariaDB only).
    pub prefix: Option<u32>,
    /// Descending?
    pub desc: bool,
    /// Given in double quotes (`"Key Col"`, `"select"`): the name exactly as the catalog spells
    /// it, quoted the DBMS's way wherever it enters SQL.
    pub quoted: bool,
}

/// A user index as given with `--index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserIndex {
    /// The index's name.
    pub name: String,
    /// UNIQUE?
    pub unique: bool,
    /// Its columns, in order.
    pub cols: Vec<IndexCol>,
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parse one `--index` value: `[UNIQUE] NAME: col1, col2 [DESC|ASC], col3(10), ...`.
pub fn parse(spec: &str) -> Result<UserIndex> {
    let bad = |why: &str| anyhow::anyhow!("bad --index {spec:?}: {why}");
    let (head, cols) = spec
        .split_once(':')
        .ok_or_else(|| bad("expected 'NAME: col1, col2 [DESC], ...'"))?;
    let words: Vec<&str> = head.split_whitespace().collect();
    let (unique, name) = match words.as_slice() {
        [n] => (false, *n),
        [u, n] if u.eq_ignore_ascii_case("unique") => (true, *n),
        [n, u] if u.eq_ignore_ascii_case("unique") => (true, *n),
        _ => return Err(bad("expected '[UNIQUE] NAME:' before the columns")),
    };
    if !ident_ok(name) {
        return Err(bad(&format!(
            "index name {name:?}: use letters, digits and _ (at most 63)"
        )));
    }
    let mut out = Vec::new();
    for c in split_top(cols).map_err(|e| bad(&e))? {
        let t = c.trim();
        if t.starts_with('(') {
            // An expression: up to its matching parenthesis, then ASC/DESC.
            let close = matching_paren(t).ok_or_else(|| bad("unbalanced parentheses"))?;
            let (e, rest) = t.split_at(close + 1);
            let desc = match rest.trim() {
                "" => false,
                d if d.eq_ignore_ascii_case("desc") => true,
                a if a.eq_ignore_ascii_case("asc") => false,
                other => return Err(bad(&format!("after expression {e}: {other:?}"))),
            };
            if e.contains(';') || e.contains("--") || e.contains("/*") || e.len() <= 2 {
                return Err(bad(&format!("expression {e}: not an expression")));
            }
            out.push(IndexCol {
                name: e.to_string(),
                expr: true,
                prefix: None,
                desc,
                quoted: false,
            });
            continue;
        }
        if t.starts_with('"') {
            out.push(quoted_col(t).map_err(|e| bad(&e))?);
            if out[..out.len() - 1]
                .iter()
                .any(|x| x.name == out[out.len() - 1].name)
            {
                return Err(bad(&format!("column {t} given twice")));
            }
            continue;
        }
        let words: Vec<&str> = c.split_whitespace().collect();
        let (col, desc) = match words.as_slice() {
            [] => return Err(bad("an empty column")),
            [c] => (*c, false),
            [c, d] if d.eq_ignore_ascii_case("desc") => (*c, true),
            [c, a] if a.eq_ignore_ascii_case("asc") => (*c, false),
            _ => {
                return Err(bad(&format!(
                    "column {:?}: expected 'col', 'col(N)', 'col DESC', '(expression)'",
                    c.trim()
                )))
            }
        };
        let (cname, prefix) = match col.split_once('(') {
            Some((n, rest)) => {
                let len = rest
                    .strip_suffix(')')
                    .and_then(|l| l.parse::<u32>().ok())
                    .filter(|l| *l > 0)
                    .ok_or_else(|| bad(&format!("prefix length in {col:?}")))?;
                (n, Some(len))
            }
            None => (col, None),
        };
        if !ident_ok(cname) {
            return Err(bad(&format!(
                "column name {cname:?}: use letters, digits and _"
            )));
        }
        if out
            .iter()
            .any(|x: &IndexCol| x.name.eq_ignore_ascii_case(cname))
        {
            return Err(bad(&format!("column {cname} given twice")));
        }
        out.push(IndexCol {
            name: cname.to_string(),
            expr: false,
            prefix,
            desc,
            quoted: false,
        });
    }
    Ok(UserIndex {
        name: name.to_string(),
        unique,
        cols: out,
    })
}

/// A column in double quotes (`"Key Col"`, `"a""b"` for `a"b`), then an optional prefix
/// length `(N)` and ASC/DESC.
fn quoted_col(t: &str) -> std::result::Result<IndexCol, String> {
    let mut name = String::new();
    let mut chars = t[1..].char_indices().peekable();
    let mut end = None;
    while let Some((i, ch)) = chars.next() {
        if ch == '"' {
            if chars.peek().is_some_and(|(_, c)| *c == '"') {
                chars.next();
                name.push('"');
                continue;
            }
            end = Some(i + 2);
            break;
        }
        name.push(ch);
    }
    let end = end.ok_or_else(|| format!("column {t}: no closing double quote"))?;
    if name.is_empty() || name.chars().any(|c| c.is_control()) {
        return Err(format!("column {t}: not a column name"));
    }
    let mut rest = t[end..].trim();
    let mut prefix = None;
    if let Some(r) = rest.strip_prefix('(') {
        let (len, after) = r
            .split_once(')')
            .ok_or_else(|| format!("prefix length in {t}"))?;
        prefix = Some(
            len.trim()
                .parse::<u32>()
                .ok()
                .filter(|l| *l > 0)
                .ok_or_else(|| format!("prefix length in {t}"))?,
        );
        rest = after.trim();
    }
    let desc = match rest {
        "" => false,
        d if d.eq_ignore_ascii_case("desc") => true,
        a if a.eq_ignore_ascii_case("asc") => false,
        other => return Err(format!("after column {t}: {other:?}")),
    };
    Ok(IndexCol {
        name,
        expr: false,
        prefix,
        desc,
        quoted: true,
    })
}

/// The byte index of the parenthesis that closes the one `s` starts with.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quoted = false;
    for (i, ch) in s.char_indices() {
        match ch {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Split a column list at the commas outside parentheses and quotes (`'...'`, `"..."`).
fn split_top(s: &str) -> std::result::Result<Vec<&str>, String> {
    let (mut out, mut depth, mut quoted, mut from) = (Vec::new(), 0i32, false, 0);
    let mut dquoted = false;
    for (i, ch) in s.char_indices() {
        match ch {
            '"' if !quoted => dquoted = !dquoted,
            _ if dquoted => {}
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced parentheses".into());
                }
            }
            ',' if !quoted && depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quoted || dquoted {
        return Err("unbalanced parentheses or quotes".into());
    }
    out.push(&s[from..]);
    Ok(out)
}

/// Parse every `--index` value; two with the same name are an error.
pub fn parse_all(specs: &[String]) -> Result<Vec<UserIndex>> {
    let mut out: Vec<UserIndex> = Vec::new();
    for s in specs {
        let u = parse(s)?;
        if out.iter().any(|x| x.name.eq_ignore_ascii_case(&u.name)) {
            bail!("--index {}: two indexes with that name", u.name);
        }
        out.push(u);
    }
    Ok(out)
}

impl UserIndex {
    /// The index as DDL takes it on `table` of a target of `kind`; an error when the DBMS has
    /// no such thing (a prefix length outside MySQL/MariaDB).
    pub fn spec(&self, table: &str, kind: &str) -> Result<IndexSpec> {
        let mut columns = Vec::new();
        for c in &self.cols {
            if c.expr {
                // PostgreSQL and MySQL want an expression in its own parentheses: `((lower(c)))`.
                let mut s = format!("({})", c.name);
                if c.desc {
                    s.push_str(" DESC");
                }
                columns.push(s);
                continue;
            }
            let mut s = if c.quoted {
                crate::dbms::registry::dialect(kind).quote_ident(&c.name)
            } else {
                c.name.clone()
            };
            if let Some(p) = c.prefix {
                if !crate::dbms::registry::dialect(kind).index_prefix_lengths() {
                    bail!(
                        "--index {}: prefix lengths ({}({p})) are MySQL/MariaDB only",
                        self.name,
                        c.name
                    );
                }
                s.push_str(&format!("({p})"));
            }
            if c.desc {
                s.push_str(" DESC");
            }
            columns.push(s);
        }
        Ok(IndexSpec {
            table: table.to_string(),
            name: self.name.clone(),
            columns,
            unique: self.unique,
        })
    }
}

/// The columns of `table` (lower case), from the DBMS's catalog; an error when it has none
/// (no such table, or it cannot be read).
pub fn table_columns(conn: &mut dyn Conn, kind: &str, table: &str) -> Result<Vec<String>> {
    let Some(sql) = crate::dbms::registry::dialect(kind).columns_sql(table) else {
        bail!("{kind} has no catalog of table columns");
    };
    let cols: Vec<String> = conn
        .query_rows(&sql)
        .with_context(|| format!("cannot read the columns of {table}"))?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if cols.is_empty() {
        bail!("table {table} does not exist (or ixbench cannot read it)");
    }
    Ok(cols)
}

/// Check every column of every index exists in `cols` (the table's columns).
pub fn check_columns(idxs: &[UserIndex], table: &str, cols: &[String]) -> Result<()> {
    for i in idxs {
        for c in i.cols.iter().filter(|c| !c.expr) {
            if !cols.iter().any(|x| x.eq_ignore_ascii_case(&c.name)) {
                bail!(
                    "--index {}: table {table} has no column {} (it has {})",
                    i.name,
                    c.name,
                    cols.join(", ")
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_columns_are_quoted_the_dbms_way() {
        let u = parse(r#"k: "select", "Key Col"(10) DESC, "a,""b", plain"#).unwrap();
        let names: Vec<(&str, bool)> = u.cols.iter().map(|c| (c.name.as_str(), c.quoted)).collect();
        assert_eq!(
            names,
            [
                ("select", true),
                ("Key Col", true),
                ("a,\"b", true),
                ("plain", false)
            ]
        );
        assert_eq!(
            u.spec("t", "mysql").unwrap().columns,
            ["`select`", "`Key Col`(10) DESC", "`a,\"b`", "plain"]
        );
        let u = parse(r#"k: "select", "Key Col" DESC"#).unwrap();
        assert_eq!(
            u.spec("t", "postgres").unwrap().columns,
            ["\"select\"", "\"Key Col\" DESC"]
        );
        for bad in [r#"k: "open"#, r#"k: "a" b"#, r#"k: """#, r#"k: "a", "a""#] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn specs() {
        let u = parse("UNIQUE by_k: k, c(10), id DESC").unwrap();
        assert!(u.unique);
        assert_eq!(u.name, "by_k");
        assert_eq!(u.cols.len(), 3);
        let s = u.spec("t", "mysql").unwrap();
        assert_eq!(s.columns, vec!["k", "c(10)", "id DESC"]);
        assert_eq!(
            s.create_sql(),
            "CREATE UNIQUE INDEX by_k ON t (k, c(10), id DESC)"
        );
        assert!(u
            .spec("t", "postgres")
            .unwrap_err()
            .to_string()
            .contains("prefix"));
        let p = parse("x: a asc,b").unwrap();
        assert!(!p.unique);
        assert_eq!(p.spec("t", "postgres").unwrap().columns, vec!["a", "b"]);
        for bad in [
            "nocolon",
            "x:",
            "x: a,,b",
            "1x: a",
            "x: a;drop",
            "x: a(0)",
            "x: a b c",
            "x: a, A",
            "a b: c",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // Expressions, with commas and parentheses inside.
        let e = parse("lc: (lower(c)), (substr(pad, 1, 5)) DESC, k").unwrap();
        assert_eq!(
            e.spec("t", "postgres").unwrap().create_sql(),
            "CREATE INDEX lc ON t (((lower(c))), ((substr(pad, 1, 5))) DESC, k)"
        );
        assert!(check_columns(&[e], "t", &["k".to_string()]).is_ok());
        for bad in ["x: (lower(c)", "x: (a; drop)", "x: (a) b", "x: ()"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let e = parse_all(&["a: x".into(), "A: y".into()]).unwrap_err();
        assert!(e.to_string().contains("two indexes"), "{e}");
        let cols = vec!["id".to_string(), "k".to_string()];
        assert!(check_columns(&[parse("i: k, id").unwrap()], "t", &cols).is_ok());
        let e = check_columns(&[parse("i: k, nope").unwrap()], "t", &cols).unwrap_err();
        assert!(e.to_string().contains("no column nope"), "{e}");
    }
}

//! The DBMS's own code of an error, whichever driver raised it, for counting errors by code
//! (`40P01` deadlock on PostgreSQL, `1213` on MySQL, `sqlite:DatabaseBusy`). Server errors come
//! from ixbench's own clients only ([`super::pgwire`] as `PgError`, [`super::mywire`] as
//! `MysqlError`) and SQLite's; each kind's row in [`super::registry`] says how its errors read.

use super::registry::{ErrorClasses, KINDS};

/// The error's code as the DBMS gives it: the SQLSTATE on PostgreSQL, the error number on
/// MySQL/MariaDB, `sqlite:<code>` on SQLite; `other` when the error came from elsewhere (a
/// lost connection, ixbench itself).
pub fn error_code(e: &anyhow::Error) -> String {
    coded(e).map_or_else(|| "other".into(), |(code, ..)| code)
}

/// The first error of `e`'s chain that a kind's driver gave a code: the code, the kind's error
/// classes and that error (each kind's row says how its errors read: [`ErrorClasses`]).
fn coded<'e>(
    e: &'e anyhow::Error,
) -> Option<(
    String,
    &'static ErrorClasses,
    &'e (dyn std::error::Error + 'static),
)> {
    e.chain().find_map(|c| {
        KINDS
            .iter()
            .copied()
            .find_map(|k| (k.errors.code)(c).map(|code| (code, &k.errors, c)))
    })
}

/// True when an error of `e`'s chain is transient as its kind's classes say
/// ([`ErrorClasses::retryable`]: a deadlock, a serialization failure, a busy database), so the
/// operation is run again and counted as a retry; false for an error no driver raised.
pub fn is_retryable(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| KINDS.iter().any(|k| (k.errors.retryable)(c)))
}

/// True for a duplicate-key error (PostgreSQL `23505`, MySQL `1062`, SQLite's PRIMARY KEY or
/// UNIQUE constraint): what a concurrent DELETE+INSERT of the same key may get, which sysbench
/// treats as an error to ignore (roll back and run the transaction again).
pub fn is_duplicate_key(e: &anyhow::Error) -> bool {
    coded(e).is_some_and(|(_, classes, c)| (classes.duplicate_key)(c))
}

#[cfg(test)]
mod tests {
    use super::super::mysql::MysqlError;
    use super::super::postgres::PgError;
    use super::*;

    #[test]
    fn codes() {
        let e = anyhow::Error::new(MysqlError {
            code: Some(1213),
            message: "ERROR 1213 (40001): Deadlock found".into(),
        });
        assert_eq!(error_code(&e), "1213");
        let e = anyhow::Error::new(MysqlError {
            code: Some(1062),
            message: "dup".into(),
        })
        .context("delete+insert");
        assert!(is_duplicate_key(&e));
        assert_eq!(error_code(&anyhow::anyhow!("lost")), "other");
        let pg = |code: &str| {
            anyhow::Error::new(PgError::from_wire(&super::super::pgwire::WireError::Db(
                super::super::pgwire::DbError {
                    severity: "ERROR".into(),
                    fatal: false,
                    code: code.into(),
                    message: "m".into(),
                    detail: None,
                },
            )))
            .context("insert")
        };
        assert_eq!(error_code(&pg("40P01")), "40P01");
        assert!(is_duplicate_key(&pg("23505")));
        assert!(!is_duplicate_key(&pg("40001")));
        crate::dbms::sqlite::mem::use_process_allocator();
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .unwrap();
        c.execute("INSERT INTO t VALUES (1)", []).unwrap();
        let e = anyhow::Error::new(c.execute("INSERT INTO t VALUES (1)", []).unwrap_err());
        assert_eq!(error_code(&e), "sqlite:ConstraintViolation");
        assert!(is_duplicate_key(&e));
    }
}

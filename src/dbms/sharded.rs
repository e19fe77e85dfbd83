//! A DBMS whose tables are sharded by hash of their primary key over backend servers behind a
//! head (`--target pg-shards`: a PostgreSQL coordinator whose partitioned tables have
//! postgres_fdw foreign-table partitions on the shards; `--target spider`: a MariaDB Spider
//! head whose Spider tables are hash-partitioned over MariaDB shards).
//!
//! The workloads speak to the head as to one server of its kind; this driver changes only what
//! a sharded cluster must do differently, on the connection ([`ShardedConn`]):
//! - `CREATE TABLE` becomes the table on every shard (with its primary key; the shards own
//!   uniqueness and indexes) and, on the head, a table `PARTITION BY HASH (pk)` whose
//!   partitions are foreign tables on the shards ([`pg_create_sql`]).
//!   Spider: the table (engine and identity comment as given) on every shard and, on the
//!   head, an `ENGINE=SPIDER` table `PARTITION BY HASH (pk)`, one partition per shard
//!   ([`spider_create_sql`]); the head's comment carries the identity marker as Spider's
//!   `dfg` (default group) parameter, since Spider refuses any comment it cannot parse.
//! - `CREATE INDEX`, `DROP INDEX` (and on Spider `ALTER TABLE ... ADD|DROP INDEX`) run on
//!   every shard, one after the other, each timed (PostgreSQL builds no index on a foreign
//!   table). The times are kept for the step to report per shard
//!   ([`ShardedDbms::take_builds`]). Spider's head must declare the indexes (the range
//!   queries name them in `FORCE INDEX`): it is dropped and created again with them, which
//!   changes only its definition (a Spider table holds no rows; an `ALTER TABLE` there would
//!   copy every row through Spider).
//! - `DROP TABLE` drops the head's table and the shards' tables of the same name.
//! - An index exists (and is valid) when it does on every shard; a query's plan
//!   ([`Conn::explain`]) is the plan of the same query on every shard (`[shard1] ... [shard2]
//!   ...`): on the head it is a foreign scan that shows no index, so the index-only-scan check
//!   holds on every shard instead.
//!
//! - Spider: a `DELETE` through the head reports 0 rows changed whenever Spider pushes it to
//!   the shards whole (its "direct delete", MariaDB 10.11), so the rows a `DELETE` removes are
//!   counted first by `SELECT count(*) ... FOR UPDATE` with the same condition in the same
//!   transaction (the rows stay locked until the `DELETE` removed them).
//!
//! Everything else (inserts, queries, deletes, counts, the identity of the table ixbench
//! created) goes through the head. The DBMS's row counters, sizes and maintenance are the
//! shards' (summed): the head stores no rows.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::{
    Admin, Conn, Dbms, Driver, IndexLab, IndexSpec, KnobScope, MaintAction, RowCounters, Sizes,
    SqlDialect, Stmt, TargetInfo, TxnKind, Value,
};
use crate::dbms::FigureClock;
use crate::deadline::Deadline;

/// The role the coordinator logs in to the shards as: the pg-shards cluster ixbench starts
/// (`server::pg_shards`) makes it on every shard.
pub const FDW_USER: &str = "ixbench_fdw";

/// Rows postgres_fdw sends to a shard in one remote INSERT (its `batch_size`; 1 by default,
/// a round trip per row).
pub const FDW_BATCH_SIZE: usize = 100;

/// How long the row counters wait for the shards' postgres_fdw sessions to end (they report
/// their statistics as they exit); past it the counters are unknown.
const FDW_SESSIONS_END: Duration = Duration::from_secs(20);

/// One statement run on one shard by a sharded DDL (an index build), timed.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardBuild {
    /// 0-based shard.
    pub shard: usize,
    /// The statement.
    pub statement: String,
    /// Wall seconds on that shard.
    pub seconds: f64,
}

/// How the head reaches the shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharding {
    /// PostgreSQL: partitions that are postgres_fdw foreign tables.
    PgFdw,
    /// MariaDB: Spider tables partitioned by hash.
    Spider,
}

/// What the Spider head's table is made of, to create it again with other indexes.
#[derive(Debug, Clone, Default)]
struct HeadDef {
    columns: Vec<String>,
    indexes: Vec<(String, String)>,
    tail: String,
}

impl HeadDef {
    fn create_sql(&self, name: &str) -> String {
        let mut cols = self.columns.clone();
        cols.extend(self.indexes.iter().map(|(_, d)| d.clone()));
        format!("CREATE TABLE {name} ({}) {}", cols.join(", "), self.tail)
    }
}

type HeadDefs = Arc<Mutex<std::collections::HashMap<String, HeadDef>>>;

/// The head and the shards (see the module doc).
pub struct ShardedDbms {
    head: Arc<dyn Dbms>,
    shards: Vec<Arc<dyn Dbms>>,
    sharding: Sharding,
    pids: Vec<u32>,
    builds: Arc<Mutex<Vec<ShardBuild>>>,
    defs: HeadDefs,
    clock: Clock,
    /// Spider: parameters of its connections to the shards, added to each head table's
    /// comment (see [`ShardedDbms::with_spider_link`]).
    spider_link: Arc<str>,
}

/// The measuring clock the shard builds are timed with (see [`FigureClock`]).
type Clock = Arc<dyn FigureClock + Send + Sync>;

impl ShardedDbms {
    /// A sharded cluster of `head` (a PostgreSQL coordinator or a Spider head) laid out as
    /// `sharding` says (its kind's row's: `registry::sharding`; `None`: not a sharded kind) over
    /// `shards` (drivers of the shards, in order: shard1 first, of the head's kind), with every
    /// node's server `pids`; the index builds on the shards are timed with `clock`.
    pub fn new(
        head: Arc<dyn Dbms>,
        sharding: Option<Sharding>,
        shards: Vec<Arc<dyn Dbms>>,
        pids: Vec<u32>,
        clock: Clock,
    ) -> Result<Self> {
        if shards.is_empty() {
            bail!("a sharded cluster needs at least one shard");
        }
        let Some(sharding) = sharding else {
            bail!(
                "{} is not a sharded target (PostgreSQL over postgres_fdw, Spider)",
                head.kind()
            );
        };
        if shards.iter().any(|s| s.kind() != head.kind()) {
            bail!("the shards must be of the head's kind");
        }
        Ok(ShardedDbms {
            head,
            shards,
            sharding,
            pids,
            builds: Arc::default(),
            defs: Arc::default(),
            clock,
            spider_link: Arc::from(""),
        })
    }

    /// Spider: `params` (Spider's table parameters, e.g. `ssl_ca "/path/ca.crt"` for TLS to
    /// shards that require it) go in each head table's comment, so Spider's own connections
    /// to the shards use them.
    pub fn with_spider_link(mut self, params: &str) -> Self {
        self.spider_link = Arc::from(params);
        self
    }

    /// How the head reaches the shards.
    pub fn sharding(&self) -> Sharding {
        self.sharding
    }

    /// The statements run on shards since the last call (index builds, per shard, timed).
    pub fn take_builds(&self) -> Vec<ShardBuild> {
        std::mem::take(&mut *self.builds.lock().unwrap())
    }

    /// The shared list [`ShardedDbms::take_builds`] drains (for whoever watches the steps).
    pub fn builds(&self) -> Arc<Mutex<Vec<ShardBuild>>> {
        self.builds.clone()
    }

    /// What the index lab needs to build on the shards itself (see [`ShardedHandle`]).
    pub fn handle(&self) -> ShardedHandle {
        ShardedHandle {
            head: self.head.clone(),
            shards: self.shards.clone(),
            sharding: self.sharding,
            defs: self.defs.clone(),
        }
    }

    fn wrap(&self, head: Box<dyn Conn>) -> Box<dyn Conn> {
        Box::new(ShardedConn {
            head,
            shards: self.shards.clone(),
            builds: self.builds.clone(),
            sharding: self.sharding,
            defs: self.defs.clone(),
            clock: self.clock.clone(),
            spider_link: self.spider_link.clone(),
            delete_counts: Default::default(),
            in_txn: false,
        })
    }

    /// Wait until no postgres_fdw session of the coordinator is open on any shard (the
    /// control connection's are closed here; the workers' end with them): a shard's session
    /// reports its row counts to the statistics as it exits. False when some did not end
    /// within [`FDW_SESSIONS_END`].
    fn fdw_sessions_ended(&self, conn: &mut dyn Conn) -> Result<bool> {
        if self.sharding != Sharding::PgFdw {
            return Ok(true);
        }
        conn.query_rows("SELECT postgres_fdw_disconnect_all()")?;
        let deadline = Deadline::after(FDW_SESSIONS_END);
        for s in &self.shards {
            let mut c = s.connect_admin()?;
            loop {
                c.query_rows("SELECT pg_stat_clear_snapshot()")?;
                let open = c
                    .query_i64(&format!(
                        "SELECT count(*) FROM pg_stat_activity WHERE usename = '{FDW_USER}'"
                    ))?
                    .unwrap_or(0);
                if open == 0 {
                    break;
                }
                if deadline.expired() {
                    return Ok(false);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(true)
    }
}

/// The head and shards of a [`ShardedDbms`], for `ixbench index`, which builds an index on
/// every shard's own connection at once (see `crate::cmd::index::sharded`) rather than through a
/// connection to the head (which runs index DDL on one shard after the other).
#[derive(Clone)]
pub struct ShardedHandle {
    head: Arc<dyn Dbms>,
    shards: Vec<Arc<dyn Dbms>>,
    sharding: Sharding,
    defs: HeadDefs,
}

impl ShardedHandle {
    /// The shards' drivers, shard1 first.
    pub fn shards(&self) -> &[Arc<dyn Dbms>] {
        &self.shards
    }

    /// How the head reaches the shards.
    pub fn sharding(&self) -> Sharding {
        self.sharding
    }

    /// After index DDL `statements` ran on every shard directly: make the head agree. Spider:
    /// the head's table is created again declaring the shards' indexes (it holds no rows; the
    /// range queries name the indexes in `FORCE INDEX`); returns true (the caller times it).
    /// PostgreSQL: nothing (the coordinator's partitions are foreign tables, which have no
    /// indexes); false. Statements that are not index DDL (a table rebuild) change nothing.
    pub fn declare_on_head(&self, table: &str, statements: &[String]) -> Result<bool> {
        if self.sharding != Sharding::Spider {
            return Ok(false);
        }
        let ddl: Vec<&String> = statements
            .iter()
            .filter(|q| matches!(classify(q), Ddl::OnShards(_)))
            .collect();
        if ddl.is_empty() {
            return Ok(false);
        }
        let create = {
            let mut defs = self.defs.lock().unwrap();
            let Some(def) = defs.get_mut(table) else {
                bail!("{table}: ixbench did not create this Spider table in this run, so it cannot declare its indexes on the head");
            };
            for q in ddl {
                apply_index_ddl(def, q);
            }
            def.create_sql(table)
        };
        let mut c = self.head.connect_admin()?;
        c.execute(&format!("DROP TABLE {table}"))?;
        c.execute(&create)
            .with_context(|| format!("declaring the indexes of {table} on the Spider head"))?;
        Ok(true)
    }
}

/// A connection to the head that runs DDL sharded (see the module doc).
pub struct ShardedConn {
    head: Box<dyn Conn>,
    shards: Vec<Arc<dyn Dbms>>,
    builds: Arc<Mutex<Vec<ShardBuild>>>,
    sharding: Sharding,
    defs: HeadDefs,
    clock: Clock,
    spider_link: Arc<str>,
    /// Spider: per prepared DELETE, its prepared `SELECT count(*) ... FOR UPDATE`.
    delete_counts: std::collections::HashMap<Stmt, Stmt>,
    /// A transaction is open (begun through this connection).
    in_txn: bool,
}

/// The query that counts (and locks) the rows a `DELETE FROM t WHERE ...` removes.
fn delete_count_sql(sql: &str) -> Option<String> {
    let s = sql.trim();
    let up = s.get(..12)?.to_ascii_uppercase();
    (up == "DELETE FROM ").then(|| format!("SELECT count(*) FROM {} FOR UPDATE", &s[12..]))
}

/// What a statement given to [`ShardedConn::execute`] is to a sharded cluster.
#[derive(Debug, PartialEq)]
enum Ddl {
    /// `CREATE TABLE` of a workload table.
    CreateTable,
    /// `CREATE [UNIQUE] INDEX`, `DROP INDEX`, `ALTER TABLE t ADD|DROP INDEX`: run on every
    /// shard (the table, when the statement names it).
    OnShards(Option<String>),
    /// `DROP TABLE name`: on the head, then on every shard.
    DropTable(String),
    /// Anything else: the head only.
    Head,
}

fn classify(sql: &str) -> Ddl {
    let s = sql.trim_start();
    let up = s
        .get(..s.len().min(40))
        .unwrap_or_default()
        .to_ascii_uppercase();
    let whole = s.to_ascii_uppercase();
    if up.starts_with("CREATE TABLE ") && !up.starts_with("CREATE TABLE IF NOT EXISTS") {
        Ddl::CreateTable
    } else if up.starts_with("CREATE INDEX ")
        || up.starts_with("CREATE UNIQUE INDEX ")
        || up.starts_with("DROP INDEX ")
    {
        Ddl::OnShards(None)
    } else if up.starts_with("ALTER TABLE ")
        && (whole.contains(" ADD INDEX ")
            || whole.contains(" ADD UNIQUE INDEX ")
            || whole.contains(" DROP INDEX "))
    {
        let name = s["ALTER TABLE ".len()..]
            .split_whitespace()
            .next()
            .unwrap_or_default();
        Ddl::OnShards(Some(name.to_string()))
    } else if up.starts_with("DROP TABLE ") && !s.contains(';') {
        let name = s["DROP TABLE ".len()..].trim();
        let name = name
            .strip_prefix("IF EXISTS ")
            .or_else(|| name.strip_prefix("if exists "))
            .unwrap_or(name)
            .trim();
        Ddl::DropTable(name.to_string())
    } else {
        Ddl::Head
    }
}

/// Split `s` at the commas outside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A `CREATE TABLE name (columns) rest` taken apart: (name, columns, rest).
fn parse_create(sql: &str) -> Result<(String, Vec<String>, String)> {
    let s = sql.trim();
    let body = s
        .get("CREATE TABLE ".len()..)
        .context("not a CREATE TABLE")?;
    let open = body.find('(').context("CREATE TABLE without columns")?;
    let name = body[..open].trim().to_string();
    let mut depth = 0i32;
    let mut close = None;
    for (i, ch) in body.char_indices().skip(open) {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close.context("CREATE TABLE: unbalanced parentheses")?;
    Ok((
        name,
        split_top(&body[open + 1..close]),
        body[close + 1..].trim().to_string(),
    ))
}

/// The statements that create a workload's table sharded by hash of its primary key over
/// `shards` PostgreSQL shards: (on every shard, on the coordinator). The primary key column
/// (`... PRIMARY KEY`, an identity or not) is a plain `bigint NOT NULL` primary key on the
/// shards; on the coordinator it has no constraint, and an identity becomes a `bigserial`
/// (its sequence on the coordinator, which numbers the rows before routing them; PostgreSQL
/// before 17 has no identity on a partitioned table).
pub fn pg_create_sql(create: &str, shards: usize) -> Result<(Vec<String>, Vec<String>)> {
    let (name, cols, rest) = parse_create(create)?;
    if !rest.is_empty() {
        bail!("CREATE TABLE {name}: table options ({rest}) are not supported on a sharded target");
    }
    let mut key = None;
    let (mut on_shard, mut on_coord) = (Vec::new(), Vec::new());
    for c in &cols {
        let up = c.to_ascii_uppercase();
        if let Some(at) = up.find(" PRIMARY KEY") {
            let col = c.split_whitespace().next().unwrap_or_default().to_string();
            let ty = c.split_whitespace().nth(1).unwrap_or("bigint").to_string();
            let identity = up.contains(" GENERATED ");
            on_shard.push(format!("{col} {ty} NOT NULL"));
            on_coord.push(if identity {
                format!("{col} bigserial")
            } else {
                format!("{col} {ty} NOT NULL{}", &c[at + " PRIMARY KEY".len()..])
            });
            key = Some(col);
        } else {
            on_shard.push(c.clone());
            on_coord.push(c.clone());
        }
    }
    let Some(key) = key else {
        bail!("CREATE TABLE {name}: a sharded table needs a primary key column to shard by");
    };
    let shard_sql = vec![
        format!(
            "CREATE TABLE {name} ({}, PRIMARY KEY ({key}))",
            on_shard.join(", ")
        ),
        format!("GRANT ALL ON TABLE {name} TO {FDW_USER}"),
    ];
    let mut coord_sql = vec![format!(
        "CREATE TABLE {name} ({}) PARTITION BY HASH ({key})",
        on_coord.join(", ")
    )];
    for k in 1..=shards {
        coord_sql.push(format!(
            "CREATE FOREIGN TABLE {name}_shard{k} PARTITION OF {name} FOR VALUES WITH \
             (MODULUS {shards}, REMAINDER {}) SERVER shard{k} OPTIONS (schema_name 'public', \
             table_name '{name}', batch_size '{FDW_BATCH_SIZE}')",
            k - 1
        ));
    }
    Ok((shard_sql, coord_sql))
}

/// The statements that create a workload's table sharded by hash of its primary key over
/// `shards` MariaDB shards behind a Spider head: (on every shard, on the head, what the head's
/// table is made of). The shards get the statement as it is; the head the same columns with
/// `ENGINE=SPIDER`, a comment naming the shards' table and carrying ixbench's identity marker
/// (from the statement's `COMMENT='ixbench:...'`) as Spider's `dfg` parameter, and one hash
/// partition per shard. `link` (Spider's parameters of its connections to the shards, e.g. TLS)
/// is added to that comment.
fn spider_create_sql(create: &str, shards: usize, link: &str) -> Result<(String, String, HeadDef)> {
    let (name, cols, rest) = parse_create(create)?;
    let key = cols
        .iter()
        .find(|c| c.to_ascii_uppercase().contains(" PRIMARY KEY"))
        .and_then(|c| c.split_whitespace().next())
        .with_context(|| {
            format!("CREATE TABLE {name}: a sharded table needs a primary key column to shard by")
        })?
        .to_string();
    let marker = rest.find("ixbench:").map(|at| {
        rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == ':')
            .collect::<String>()
    });
    let mut comment = match marker {
        Some(m) => format!("table \"{name}\", dfg \"{m}\""),
        None => format!("table \"{name}\""),
    };
    if !link.is_empty() {
        comment.push_str(&format!(", {link}"));
    }
    let parts: Vec<String> = (1..=shards)
        .map(|k| format!("PARTITION p{k} COMMENT = 'srv \"shard{k}\"'"))
        .collect();
    let def = HeadDef {
        columns: cols,
        indexes: Vec::new(),
        tail: format!(
            "ENGINE=SPIDER COMMENT='{comment}' PARTITION BY HASH ({key}) ({})",
            parts.join(", ")
        ),
    };
    Ok((create.to_string(), def.create_sql(&name), def))
}

/// The head's definition after an index DDL statement (`ALTER TABLE t ADD INDEX a (..), DROP
/// INDEX b, LOCK=...`; `CREATE [UNIQUE] INDEX a ON t (..)`).
fn apply_index_ddl(def: &mut HeadDef, sql: &str) {
    let s = sql.trim();
    let up = s.to_ascii_uppercase();
    let mut changes: Vec<String> = Vec::new();
    if up.starts_with("ALTER TABLE ") {
        let body = s["ALTER TABLE ".len()..].trim_start();
        let body = body.split_once(char::is_whitespace).map_or("", |x| x.1);
        changes = split_top(body);
    } else if up.starts_with("CREATE ") {
        // CREATE [UNIQUE] INDEX a ON t (cols)
        let unique = up.starts_with("CREATE UNIQUE ");
        let words: Vec<&str> = s.split_whitespace().collect();
        let at = if unique { 3 } else { 2 };
        if let (Some(name), Some(open)) = (words.get(at), s.find('(')) {
            changes.push(format!(
                "ADD {}INDEX {name} {}",
                if unique { "UNIQUE " } else { "" },
                &s[open..]
            ));
        }
    }
    for c in changes {
        let cu = c.to_ascii_uppercase();
        if let Some(rest) = cu.strip_prefix("ADD ") {
            if rest.starts_with("INDEX ") || rest.starts_with("UNIQUE INDEX ") {
                let decl = c["ADD ".len()..].to_string();
                let name = decl
                    .split_whitespace()
                    .find(|w| !w.eq_ignore_ascii_case("UNIQUE") && !w.eq_ignore_ascii_case("INDEX"))
                    .unwrap_or_default()
                    .to_string();
                def.indexes.retain(|(n, _)| *n != name);
                def.indexes.push((name, decl));
            }
        } else if cu.starts_with("DROP INDEX ") {
            let name = c.split_whitespace().nth(2).unwrap_or_default().to_string();
            def.indexes.retain(|(n, _)| *n != name);
        }
    }
}

impl ShardedConn {
    /// Spider: create the head's table `name` again with the indexes the shards now have.
    fn redeclare(&mut self, name: &str, sql: &str) -> Result<()> {
        let create = {
            let mut defs = self.defs.lock().unwrap();
            let Some(def) = defs.get_mut(name) else {
                bail!("{name}: ixbench did not create this Spider table in this run, so it cannot declare its indexes on the head");
            };
            apply_index_ddl(def, sql);
            def.create_sql(name)
        };
        self.head.execute(&format!("DROP TABLE {name}"))?;
        self.head
            .execute(&create)
            .with_context(|| format!("declaring the indexes of {name} on the Spider head"))
    }

    fn on_each_shard(&self, what: &str, sql: &[String], record: bool) -> Result<()> {
        for (k, s) in self.shards.iter().enumerate() {
            let mut c = s
                .connect_admin()
                .with_context(|| format!("connecting to shard{}", k + 1))?;
            let t0 = self.clock.start();
            for q in sql {
                c.execute(q)
                    .with_context(|| format!("{what} on shard{}", k + 1))?;
            }
            if record {
                self.builds.lock().unwrap().push(ShardBuild {
                    shard: k,
                    statement: sql.join("; "),
                    seconds: t0(),
                });
            }
        }
        Ok(())
    }

    fn each_shard<T>(&self, mut f: impl FnMut(&mut dyn Conn) -> Result<T>) -> Result<Vec<T>> {
        self.shards
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let mut c = s
                    .connect_admin()
                    .with_context(|| format!("connecting to shard{}", k + 1))?;
                f(c.as_mut()).with_context(|| format!("on shard{}", k + 1))
            })
            .collect()
    }
}

impl ShardedConn {
    /// Spider: run a DELETE (`run`) after counting its rows with `count`, in one transaction.
    fn counted_delete(
        &mut self,
        count: impl FnOnce(&mut dyn Conn) -> Result<u64>,
        run: impl FnOnce(&mut dyn Conn) -> Result<()>,
    ) -> Result<u64> {
        let own = !self.in_txn;
        if own {
            self.head.begin(TxnKind::Write)?;
        }
        let r = count(self.head.as_mut()).and_then(|n| run(self.head.as_mut()).map(|_| n));
        if own {
            match &r {
                Ok(_) => self.head.commit()?,
                Err(_) => {
                    let _ = self.head.rollback();
                }
            }
        }
        r
    }
}

impl Conn for ShardedConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        let st = self.head.prepare(sql)?;
        if self.sharding == Sharding::Spider {
            if let Some(count) = delete_count_sql(sql) {
                let c = self.head.prepare(&count)?;
                self.delete_counts.insert(st, c);
            }
        }
        Ok(st)
    }
    fn exec(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        match self.delete_counts.get(&st).copied() {
            Some(c) => self.counted_delete(
                |h| Ok(h.query_int(c, params)?.unwrap_or(0).max(0) as u64),
                |h| h.exec(st, params).map(|_| ()),
            ),
            None => self.head.exec(st, params),
        }
    }
    fn query(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        self.head.query(st, params)
    }
    fn query_int(&mut self, st: Stmt, params: &[Value]) -> Result<Option<i64>> {
        self.head.query_int(st, params)
    }
    fn begin(&mut self, kind: TxnKind) -> Result<()> {
        self.head.begin(kind)?;
        self.in_txn = true;
        Ok(())
    }
    fn commit(&mut self) -> Result<()> {
        self.in_txn = false;
        self.head.commit()
    }
    fn rollback(&mut self) -> Result<()> {
        self.in_txn = false;
        self.head.rollback()
    }

    fn execute(&mut self, sql: &str) -> Result<()> {
        match classify(sql) {
            Ddl::Head => self.head.execute(sql),
            Ddl::CreateTable if self.sharding == Sharding::Spider => {
                let (on_shard, on_head, def) =
                    spider_create_sql(sql, self.shards.len(), &self.spider_link)?;
                let (name, _, _) = parse_create(sql)?;
                self.on_each_shard("creating the table", &[on_shard], false)?;
                self.head.execute(&on_head)?;
                self.defs.lock().unwrap().insert(name, def);
                Ok(())
            }
            Ddl::CreateTable => {
                let (on_shard, on_coord) = pg_create_sql(sql, self.shards.len())?;
                self.on_each_shard("creating the table", &on_shard, false)?;
                for q in &on_coord {
                    self.head.execute(q)?;
                }
                Ok(())
            }
            Ddl::OnShards(table) => {
                self.on_each_shard("index DDL", &[sql.to_string()], true)?;
                if self.sharding == Sharding::Spider {
                    let table = match table {
                        Some(t) => t,
                        None => sql
                            .split_whitespace()
                            .skip_while(|w| !w.eq_ignore_ascii_case("ON"))
                            .nth(1)
                            .unwrap_or_default()
                            .to_string(),
                    };
                    self.redeclare(&table, sql)?;
                }
                Ok(())
            }
            Ddl::DropTable(name) => {
                self.head.execute(sql)?;
                self.on_each_shard(
                    "dropping the table",
                    &[format!("DROP TABLE IF EXISTS {name}")],
                    false,
                )
            }
        }
    }

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.head.query_rows(sql)
    }
    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        match delete_count_sql(sql).filter(|_| self.sharding == Sharding::Spider) {
            Some(count) => self.counted_delete(
                |h| Ok(h.query_i64(&count)?.unwrap_or(0).max(0) as u64),
                |h| h.exec_text(sql).map(|_| ()),
            ),
            None => self.head.exec_text(sql),
        }
    }
    fn query_text(&mut self, sql: &str) -> Result<u64> {
        self.head.query_text(sql)
    }
    fn table_exists(&mut self, table: &str) -> Result<bool> {
        self.head.table_exists(table)
    }

    fn index_exists(&mut self, table: &str, index: &str) -> Result<bool> {
        let (t, i) = (table.to_string(), index.to_string());
        Ok(self
            .each_shard(|c| c.index_exists(&t, &i))?
            .into_iter()
            .all(|x| x))
    }

    fn explain(&mut self, sql: &str) -> Result<String> {
        let plans = self.each_shard(|c| c.explain(sql))?;
        Ok(join_plans(&plans))
    }
}

/// Every shard's plan of a query on one line: `[shard1] plan [shard2] plan`, after what the
/// check is and why.
fn join_plans(plans: &[String]) -> String {
    let mut out = String::from(
        "checked on every shard, where the index is read (the head's plan of a sharded table \
         does not show the shards' plans):",
    );
    for (k, p) in plans.iter().enumerate() {
        out.push_str(&format!(" [shard{}] {p}", k + 1));
    }
    out
}

/// The shards' plans in a [`join_plans`] text.
fn split_plans(plan: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut k = 1;
    let mut rest = match plan.find("[shard1] ") {
        Some(at) => &plan[at..],
        None => return out,
    };
    loop {
        let marker = format!("[shard{k}] ");
        let Some(body) = rest.strip_prefix(marker.as_str()) else {
            break;
        };
        let next = format!(" [shard{}] ", k + 1);
        match body.find(&next) {
            Some(at) => {
                out.push(&body[..at]);
                rest = &body[at + 1..];
                k += 1;
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

impl Driver for ShardedDbms {
    fn kind(&self) -> &'static str {
        self.head.kind()
    }
    fn dialect(&self) -> &SqlDialect {
        self.head.dialect()
    }
    fn connect(&self) -> Result<Box<dyn Conn>> {
        Ok(self.wrap(self.head.connect()?))
    }
    fn connect_admin(&self) -> Result<Box<dyn Conn>> {
        Ok(self.wrap(self.head.connect_admin()?))
    }
    fn info(&self, conn: &mut dyn Conn) -> Result<TargetInfo> {
        self.head.info(conn)
    }
    fn server_pids(&self) -> Vec<u32> {
        self.pids.clone()
    }
    fn local_port(&self) -> Option<u16> {
        self.head.local_port()
    }
}

impl Admin for ShardedDbms {
    /// The head's (the session `conn` is on).
    fn written_so_far(&self, conn: &mut dyn Conn) -> Option<(u64, String)> {
        self.head.written_so_far(conn)
    }

    fn maintenance(
        &self,
        _conn: &mut dyn Conn,
        tables: &[String],
        clock: &dyn FigureClock,
    ) -> Result<Vec<MaintAction>> {
        let mut out = Vec::new();
        for (k, s) in self.shards.iter().enumerate() {
            let mut c = s.connect_admin()?;
            for mut a in s.maintenance(c.as_mut(), tables, clock)? {
                a.action = format!("shard{}: {}", k + 1, a.action);
                out.push(a);
            }
        }
        Ok(out)
    }

    fn sizes(&self, _conn: &mut dyn Conn, tables: &[String], detailed: bool) -> Result<Sizes> {
        let mut sum = Sizes {
            database_bytes: Some(0),
            objects: Vec::new(),
            // Summed over the shards: the head stores no rows.
            notes: Vec::new(),
        };
        for s in &self.shards {
            let mut c = s.connect_admin()?;
            let z = s.sizes(c.as_mut(), tables, detailed)?;
            sum.database_bytes = match (sum.database_bytes, z.database_bytes) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
            for (name, b) in z.objects {
                match sum.objects.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => *v += b,
                    None => sum.objects.push((name, b)),
                }
            }
            sum.notes.extend(z.notes);
        }
        Ok(sum)
    }

    fn row_counters(&self, conn: &mut dyn Conn, tables: &[String]) -> Result<Option<RowCounters>> {
        if self.sharding == Sharding::Spider {
            // MariaDB 10.11 keeps no InnoDB row counters; its Handler_write/Handler_delete also
            // count writes that are not the workload's rows (on a Spider shard a qp100 step of
            // 100 inserted rows counted 2,639, from the statements Spider itself sends): unknown.
            return Ok(None);
        }
        if !self.fdw_sessions_ended(conn)? {
            return Ok(None);
        }
        let mut sum = RowCounters::default();
        for s in &self.shards {
            let mut c = s.connect_admin()?;
            match s.row_counters(c.as_mut(), tables)? {
                Some(r) => {
                    sum.inserted += r.inserted;
                    sum.deleted += r.deleted;
                }
                None => return Ok(None),
            }
        }
        Ok(Some(sum))
    }
}

impl IndexLab for ShardedDbms {
    /// Every shard's plan reads it as covering (unknown when a shard cannot tell).
    fn plan_uses_index(&self, plan: &str, index: &str) -> Option<bool> {
        let plans = split_plans(plan);
        if plans.len() != self.shards.len() {
            return Some(false);
        }
        let mut all = true;
        for (p, s) in plans.iter().zip(&self.shards) {
            all &= s.plan_uses_index(p, index)?;
        }
        Some(all)
    }

    fn index_build_plan(&self, idxs: &[IndexSpec], online: bool) -> Result<Vec<Vec<String>>> {
        // One CREATE INDEX after another (each runs on every shard).
        let plan = self.head.index_build_plan(idxs, online)?;
        Ok(vec![plan.into_iter().flatten().collect()])
    }

    fn drop_index_sql(&self, idx: &IndexSpec) -> String {
        self.head.drop_index_sql(idx)
    }

    /// The shards' scope of the knob (asked on shard1: the shards run the same server; the
    /// lab applies the knob on every shard, see `crate::cmd::index::sharded`).
    fn knob_scope(&self, _conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
        let mut c = self.shards[0].connect_admin()?;
        self.shards[0].knob_scope(c.as_mut(), name)
    }

    fn set_session_knob(&self, _conn: &mut dyn Conn, name: &str, _value: &str) -> Result<String> {
        bail!(
            "a sharded target: {name} is a session knob of the shards' build sessions, set on \
             each shard's own session (not on a connection to the head)"
        )
    }

    /// The value shard1 reports (the lab reads it on every shard).
    fn knob_value(&self, _conn: &mut dyn Conn, name: &str) -> Result<String> {
        let mut c = self.shards[0].connect_admin()?;
        self.shards[0].knob_value(c.as_mut(), name)
    }

    /// The shards' rebuilds: run on every shard's table directly (the head's table is a
    /// mapping with no rows; rebuilding it through the head would copy every row through it).
    fn rebuild_statements(&self, table: &str) -> Vec<(String, String)> {
        self.shards[0].rebuild_statements(table)
    }

    fn index_valid(&self, _conn: &mut dyn Conn, table: &str, index: &str) -> Result<bool> {
        for s in &self.shards {
            let mut c = s.connect_admin()?;
            if !s.index_valid(c.as_mut(), table, index)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_table_is_sharded_by_its_primary_key() {
        let create = "CREATE TABLE pi1 (transactionid bigint GENERATED BY DEFAULT AS IDENTITY \
                      (CACHE 1000) PRIMARY KEY, dateandtime timestamp NOT NULL, data \
                      varchar(4000) NOT NULL)";
        let (s, c) = pg_create_sql(create, 2).unwrap();
        assert_eq!(
            s[0],
            "CREATE TABLE pi1 (transactionid bigint NOT NULL, dateandtime timestamp NOT NULL, \
             data varchar(4000) NOT NULL, PRIMARY KEY (transactionid))"
        );
        assert_eq!(s[1], "GRANT ALL ON TABLE pi1 TO ixbench_fdw");
        assert_eq!(
            c[0],
            "CREATE TABLE pi1 (transactionid bigserial, dateandtime timestamp NOT NULL, data \
             varchar(4000) NOT NULL) PARTITION BY HASH (transactionid)"
        );
        assert!(c[1]
            .contains("PARTITION OF pi1 FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER shard1"));
        assert!(c[2].contains("(MODULUS 2, REMAINDER 1) SERVER shard2"));
        assert_eq!(c.len(), 3);
        // An explicit PK (a key pattern) stays a plain column on the coordinator.
        let (s, c) = pg_create_sql("CREATE TABLE t (id bigint PRIMARY KEY, v int)", 3).unwrap();
        assert!(
            s[0].ends_with("(id bigint NOT NULL, v int, PRIMARY KEY (id))"),
            "{}",
            s[0]
        );
        assert!(c[0].starts_with("CREATE TABLE t (id bigint NOT NULL, v int) PARTITION"));
        assert_eq!(c.len(), 4);
        assert!(pg_create_sql("CREATE TABLE t (v int)", 2).is_err());
        assert!(pg_create_sql("CREATE TABLE t (id int PRIMARY KEY) WITH (x=1)", 2).is_err());
    }

    #[test]
    fn spider_head_declares_the_shards_indexes() {
        let create = "CREATE TABLE pi1 (transactionid bigint NOT NULL AUTO_INCREMENT PRIMARY \
                      KEY, price int NOT NULL) ENGINE=InnoDB COMMENT='ixbench:ab12'";
        let (shard, head, mut def) = spider_create_sql(create, 2, "").unwrap();
        assert_eq!(shard, create);
        assert_eq!(
            head,
            "CREATE TABLE pi1 (transactionid bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, price \
             int NOT NULL) ENGINE=SPIDER COMMENT='table \"pi1\", dfg \"ixbench:ab12\"' \
             PARTITION BY HASH (transactionid) (PARTITION p1 COMMENT = 'srv \"shard1\"', \
             PARTITION p2 COMMENT = 'srv \"shard2\"')"
        );
        apply_index_ddl(
            &mut def,
            "ALTER TABLE pi1 ADD INDEX pi1_a (price, x), ADD INDEX pi1_b (x), LOCK=SHARED",
        );
        let h = def.create_sql("pi1");
        assert!(
            h.contains(
                "price int NOT NULL, INDEX pi1_a (price, x), INDEX pi1_b (x)) ENGINE=SPIDER"
            ),
            "{h}"
        );
        apply_index_ddl(
            &mut def,
            "ALTER TABLE pi1 DROP INDEX pi1_a, ALGORITHM=INPLACE",
        );
        apply_index_ddl(&mut def, "CREATE UNIQUE INDEX pi1_c ON pi1 (price)");
        let h = def.create_sql("pi1");
        assert!(
            h.contains("INDEX pi1_b (x), UNIQUE INDEX pi1_c (price))"),
            "{h}"
        );
        assert!(!h.contains("pi1_a"), "{h}");
    }

    #[test]
    fn statements_are_sent_where_they_belong() {
        assert_eq!(classify("CREATE TABLE t (a int)"), Ddl::CreateTable);
        assert_eq!(
            classify("CREATE TABLE IF NOT EXISTS ixbench_tables (name int)"),
            Ddl::Head
        );
        assert_eq!(classify("CREATE INDEX i ON t (a)"), Ddl::OnShards(None));
        assert_eq!(classify("DROP INDEX i"), Ddl::OnShards(None));
        assert_eq!(
            classify("ALTER TABLE t ADD INDEX a (x), ADD INDEX b (y), LOCK=SHARED"),
            Ddl::OnShards(Some("t".into()))
        );
        assert_eq!(classify("DROP TABLE t"), Ddl::DropTable("t".into()));
        assert_eq!(classify("INSERT INTO t VALUES (1)"), Ddl::Head);
        assert_eq!(
            delete_count_sql("DELETE FROM t WHERE a >= ? AND a <= ?").unwrap(),
            "SELECT count(*) FROM t WHERE a >= ? AND a <= ? FOR UPDATE"
        );
        assert_eq!(delete_count_sql("DELETE t"), None);
        assert_eq!(
            classify("DELETE FROM ixbench_tables WHERE name = 't'"),
            Ddl::Head
        );
    }

    #[test]
    fn plans_of_every_shard() {
        let p = join_plans(&["Index Only Scan using a on t".into(), "Seq Scan".into()]);
        assert!(p.starts_with("checked on every shard"), "{p}");
        assert_eq!(
            split_plans(&p),
            vec!["Index Only Scan using a on t", "Seq Scan"]
        );
        assert!(split_plans("Foreign Scan").is_empty());
    }
}

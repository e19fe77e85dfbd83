//! A throwaway sharded PostgreSQL: `shard1`..`shardN`, plain PostgreSQL servers, and a
//! `coordinator`, a PostgreSQL server with `postgres_fdw` (in Debian's `postgresql` package)
//! that knows each shard as a foreign server (`CREATE SERVER shardK FOREIGN DATA WRAPPER
//! postgres_fdw OPTIONS (host '127.0.0.1', port 'P', dbname 'ixbench')`).
//!
//! The coordinator logs in to the shards as `ixbench_fdw`, a role made on each shard with its
//! own generated password (a user mapping for `postgres` holds it; user mappings are readable
//! by superusers only); the shards' superuser passwords stay in their data directories.
//!
//! A sharded table ([`create_sharded_table`]) is a table of the same name on every shard
//! (with its primary key and indexes, created on the shard directly, `ixbench_fdw` granted
//! its use) and, on the coordinator, a table `PARTITION BY HASH (key)` whose partitions are
//! foreign tables `NAME_shardK ... PARTITION OF NAME FOR VALUES WITH (MODULUS N, REMAINDER
//! K-1) SERVER shardK`. The coordinator's table has no index or primary key (PostgreSQL builds
//! no index on a foreign table): uniqueness and secondary indexes live on the shards, where
//! [`add_index_on_shards`] builds them.

use anyhow::{bail, Context, Result};

use crate::dbms::session::{Session, SessionOptions};

use super::cluster::{
    any_settings, no_link_params, ClusterKind, ClusterOptions, ClusterRow, RunningCluster,
};
use super::{start_node, NodeInit, RunningServer, ServerKind, ServerOptions};

/// The pg-shards kind's row (registered in `super::CLUSTERS`): sharded behind its
/// coordinator through postgres_fdw.
pub(super) const CLUSTER: ClusterRow = ClusterRow {
    kind: ClusterKind::PgShards,
    name: "pg-shards",
    sharded: true,
    sharding: "postgres_fdw",
    node_kind: "postgres",
    node_server: ServerKind::Postgres,
    size_range: (1, 8),
    entry_role: "coordinator",
    check_settings: any_settings,
    start,
    link_params: no_link_params,
};

/// The role the coordinator uses on the shards (the pg-shards driver's, which logs in as it).
pub use crate::dbms::sharded::FDW_USER;

/// Fail with one line naming the package when PostgreSQL or postgres_fdw is missing.
pub fn check_installed() -> Result<()> {
    super::check_installed(ServerKind::Postgres)?;
    let bins = super::ServerKind::Postgres.flavor().find()?;
    // BINDIR/../lib/postgres_fdw.so in Debian's layout (/usr/lib/postgresql/V/lib).
    let lib = bins
        .server
        .parent()
        .and_then(|b| b.parent())
        .map(|v| v.join("lib/postgres_fdw.so"));
    if !lib.as_ref().is_some_and(|l| l.is_file()) {
        bail!(
            "postgres_fdw is missing ({} not found): install the Debian package postgresql \
             (postgresql-contrib on older releases)",
            lib.map_or_else(|| "postgres_fdw.so".into(), |l| l.display().to_string())
        );
    }
    Ok(())
}

/// Start the shards, then the coordinator (see the module doc).
pub(crate) fn start(mut cluster: RunningCluster, opts: &ClusterOptions) -> Result<RunningCluster> {
    check_installed()?;
    let fdw_pw = super::secret::generate()?;
    for k in 1..=opts.size {
        let role = format!("shard{k}");
        let shard = start_one(&mut cluster, &role, opts)?;
        connect(shard)?
            .execute_secret(&format!(
                "CREATE ROLE {FDW_USER} LOGIN PASSWORD '{fdw_pw}'; \
                 GRANT USAGE, CREATE ON SCHEMA public TO {FDW_USER}"
            ))
            .with_context(|| format!("creating role {FDW_USER} on {role}"))?;
    }
    let coord = start_one(&mut cluster, "coordinator", opts)?;
    let mut c = connect(coord)?;
    c.execute("CREATE EXTENSION postgres_fdw")
        .context("CREATE EXTENSION postgres_fdw on the coordinator")?;
    let shards: Vec<(String, u16)> = cluster
        .nodes()
        .iter()
        .filter(|n| n.role.starts_with("shard"))
        .map(|n| (n.role.clone(), n.server.port))
        .collect();
    // With TLS (`--server-tls`: the shards take TCP over TLS only), postgres_fdw's libpq
    // verifies each shard's certificate and host name against the coordinator's copy of the
    // root certificate.
    let tls = match coord_ca(&cluster)? {
        Some(ca) => format!(", sslmode 'verify-full', sslrootcert '{ca}'"),
        None => String::new(),
    };
    for (role, port) in shards {
        c.execute_secret(&format!(
            "CREATE SERVER {role} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', \
             port '{port}', dbname 'ixbench'{tls}); \
             CREATE USER MAPPING FOR postgres SERVER {role} OPTIONS (user '{FDW_USER}', \
             password '{fdw_pw}')"
        ))
        .with_context(|| format!("CREATE SERVER {role} on the coordinator"))?;
    }
    Ok(cluster)
}

/// The coordinator's copy of the root certificate, when the cluster runs with TLS (a path
/// for a string literal: a quote in it is doubled).
fn coord_ca(cluster: &RunningCluster) -> Result<Option<String>> {
    let coord = cluster
        .node("coordinator")
        .context("the cluster has no coordinator")?;
    Ok(coord
        .tls_ca_for_server()
        .map(|p| p.display().to_string().replace('\'', "''")))
}

fn start_one<'a>(
    cluster: &'a mut RunningCluster,
    role: &str,
    opts: &ClusterOptions,
) -> Result<&'a RunningServer> {
    cluster.announce(role)?;
    let sopts = ServerOptions {
        datadir: cluster.node_dir(role),
        port: None,
        settings: opts.settings.clone(),
        tls: opts.tls.clone(),
    };
    let server = start_node(ServerKind::Postgres, &sopts, &NodeInit::default())
        .with_context(|| format!("starting PostgreSQL {role}"))?;
    cluster.add(role, server)?;
    Ok(cluster.node(role).expect("just added"))
}

/// A superuser connection to a node of the cluster, database `ixbench`.
pub fn connect(server: &RunningServer) -> Result<Session> {
    Session::connect(&server.url_with_password(), &SessionOptions::default())
}

/// The statements that make `name` a table sharded by hash of `key` over `shards` servers:
/// (on every shard, on the coordinator). `columns` are the column definitions (no
/// constraints), `shard_constraints` what only the shards get (e.g. `PRIMARY KEY (id)`).
pub fn sharded_table_sql(
    name: &str,
    columns: &str,
    shard_constraints: &str,
    key: &str,
    shards: usize,
) -> (String, String) {
    let extra = if shard_constraints.trim().is_empty() {
        String::new()
    } else {
        format!(", {shard_constraints}")
    };
    let on_shard =
        format!("CREATE TABLE {name} ({columns}{extra}); GRANT ALL ON TABLE {name} TO {FDW_USER}");
    let mut on_coord = format!("CREATE TABLE {name} ({columns}) PARTITION BY HASH ({key});");
    for k in 1..=shards {
        on_coord.push_str(&format!(
            " CREATE FOREIGN TABLE {name}_shard{k} PARTITION OF {name} FOR VALUES WITH \
             (MODULUS {shards}, REMAINDER {}) SERVER shard{k} OPTIONS (schema_name 'public', \
             table_name '{name}');",
            k - 1
        ));
    }
    (on_shard, on_coord)
}

/// Create `name` sharded by hash of `key` (see [`sharded_table_sql`]): the shard tables first,
/// then the partitioned table and its foreign partitions on the coordinator.
pub fn create_sharded_table(
    cluster: &RunningCluster,
    name: &str,
    columns: &str,
    shard_constraints: &str,
    key: &str,
) -> Result<()> {
    let shards = cluster.shards();
    let (on_shard, on_coord) =
        sharded_table_sql(name, columns, shard_constraints, key, shards.len());
    for (k, s) in shards.iter().enumerate() {
        connect(s)?
            .execute(&on_shard)
            .with_context(|| format!("creating {name} on shard{}", k + 1))?;
    }
    let coord = cluster
        .node("coordinator")
        .context("the cluster has no coordinator")?;
    connect(coord)?
        .execute(&on_coord)
        .with_context(|| format!("creating the partitioned table {name} on the coordinator"))
}

/// Build a secondary index on every shard (`CREATE INDEX index ON name (columns)`), one after
/// the other; returns the number of shards.
pub fn add_index_on_shards(
    cluster: &RunningCluster,
    name: &str,
    index: &str,
    columns: &str,
) -> Result<usize> {
    let sql = format!("CREATE INDEX {index} ON {name} ({columns})");
    cluster.on_shards(&sql, |s| connect(s)?.execute(&sql))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_foreign_tables_on_each_shard() {
        let (s, c) = sharded_table_sql(
            "t",
            "id bigint NOT NULL, v int",
            "PRIMARY KEY (id)",
            "id",
            2,
        );
        assert_eq!(
            s,
            "CREATE TABLE t (id bigint NOT NULL, v int, PRIMARY KEY (id)); GRANT ALL ON TABLE t \
             TO ixbench_fdw"
        );
        assert!(c.starts_with("CREATE TABLE t (id bigint NOT NULL, v int) PARTITION BY HASH (id);"));
        assert!(c.contains("PARTITION OF t FOR VALUES WITH (MODULUS 2, REMAINDER 0) SERVER shard1"));
        assert!(c.contains("PARTITION OF t FOR VALUES WITH (MODULUS 2, REMAINDER 1) SERVER shard2"));
        assert!(!c.contains("PRIMARY KEY"), "{c}");
    }
}

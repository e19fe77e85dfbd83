//! A throwaway MariaDB Spider cluster: `shard1`..`shardN`, plain MariaDB servers (InnoDB), and a
//! `head`, a MariaDB server with the Spider storage engine (`INSTALL SONAME 'ha_spider'`, Debian
//! package `mariadb-plugin-spider`) that knows each shard as a server (`CREATE SERVER shardK
//! FOREIGN DATA WRAPPER mysql ...`).
//!
//! Spider logs in to the shards as `ixbench_spider`, an account made on each shard with its own
//! generated password and the privileges of the database `ixbench` only (the head keeps that
//! password in its `mysql.servers`, readable by its root only); the shards' root passwords stay
//! in their data directories.
//!
//! A sharded table ([`create_sharded_table`]) is a table of the same name on every shard
//! (`ENGINE=InnoDB`, created on the shard directly, indexes included) and a Spider table on the
//! head, `PARTITION BY HASH (key)` with one partition per shard whose comment names it
//! (`COMMENT = 'srv "shardK"'`). Rows inserted through the head land on the shard their key
//! hashes to; secondary indexes are built on the shards (`ALTER TABLE ... ADD INDEX` on each
//! shard), the head only needs them declared to plan with them.

use anyhow::{bail, Context, Result};

use crate::dbms::session::Session;

use super::cluster::{any_settings, ClusterKind, ClusterOptions, ClusterRow, RunningCluster};
use super::{start_node, NodeInit, RunningServer, ServerKind, ServerOptions};

/// The Spider kind's row (registered in `super::CLUSTERS`): sharded behind its head, whose
/// tables reach the shards with [`link_params`].
pub(super) const CLUSTER: ClusterRow = ClusterRow {
    kind: ClusterKind::Spider,
    name: "spider",
    sharded: true,
    sharding: "Spider",
    node_kind: "mysql",
    node_server: ServerKind::Mariadb,
    size_range: (1, 8),
    entry_role: "head",
    check_settings: any_settings,
    start,
    link_params,
};

/// Where Debian's mariadb-plugin-spider installs Spider.
pub const PLUGIN: &str = "/usr/lib/mysql/plugin/ha_spider.so";

/// The account Spider uses on the shards.
pub const SPIDER_USER: &str = "ixbench_spider";

/// Fail with one line naming the package when Spider is not installed.
pub fn check_installed() -> Result<()> {
    super::check_installed(ServerKind::Mariadb)?;
    if !std::path::Path::new(PLUGIN).is_file() {
        bail!(
            "the Spider plugin {PLUGIN} is missing: install the Debian package \
             mariadb-plugin-spider"
        );
    }
    Ok(())
}

/// Start the shards, then the head (see the module doc).
pub(crate) fn start(mut cluster: RunningCluster, opts: &ClusterOptions) -> Result<RunningCluster> {
    check_installed()?;
    let spider_pw = super::secret::generate()?;
    for k in 1..=opts.size {
        let role = format!("shard{k}");
        let shard = start_one(&mut cluster, &role, opts)?;
        let mut c = admin(shard)?;
        for host in ["127.0.0.1", "localhost"] {
            c.execute_secret(&format!(
                "CREATE USER '{SPIDER_USER}'@'{host}' IDENTIFIED BY '{spider_pw}'"
            ))
            .with_context(|| format!("creating {SPIDER_USER} on {role}"))?;
            c.execute(&format!(
                "GRANT ALL PRIVILEGES ON ixbench.* TO '{SPIDER_USER}'@'{host}'"
            ))
            .with_context(|| format!("granting {SPIDER_USER} on {role}"))?;
        }
    }
    let head = start_one(&mut cluster, "head", opts)?;
    let mut c = admin(head)?;
    c.execute("INSTALL SONAME 'ha_spider'")
        .context("INSTALL SONAME 'ha_spider' on the head")?;
    let shards: Vec<(String, u16)> = cluster
        .nodes()
        .iter()
        .filter(|n| n.role.starts_with("shard"))
        .map(|n| (n.role.clone(), n.server.port))
        .collect();
    for (role, port) in shards {
        c.execute_secret(&format!(
            "CREATE SERVER {role} FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', \
             PORT {port}, USER '{SPIDER_USER}', PASSWORD '{spider_pw}', DATABASE 'ixbench')"
        ))
        .with_context(|| format!("CREATE SERVER {role} on the head"))?;
    }
    Ok(cluster)
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
    let server = start_node(ServerKind::Mariadb, &sopts, &NodeInit::default())
        .with_context(|| format!("starting Spider {role}"))?;
    cluster.add(role, server)?;
    Ok(cluster.node(role).expect("just added"))
}

/// A root connection to a node of the cluster, database `ixbench`.
pub fn admin(server: &RunningServer) -> Result<Session> {
    crate::dbms::galera::connect(&server.url_with_password())
}

/// Spider's table parameters for its connections from `head` to the shards: with TLS
/// (`--server-tls`: the shards take TCP over TLS only), `ssl_ca` (the head's copy of the root
/// certificate: Spider then connects over TLS and verifies the shard's certificate chain,
/// measured: a root that did not sign it is refused); empty without. The host name is not
/// verified: MariaDB 10.11's Spider refuses `ssl_vsc` in a table comment (error 12501, "The
/// connect info 'ssl_vsc ...' is invalid").
pub fn link_params(head: &RunningServer) -> Result<String> {
    let Some(ca) = head.tls_ca_for_server() else {
        return Ok(String::new());
    };
    let ca = ca.display().to_string();
    if ca.contains(['\'', '"', '\\']) {
        bail!("the cluster directory's path {ca} has a quote or backslash, which Spider's table comment cannot hold: use another directory");
    }
    Ok(format!("ssl_ca \"{ca}\""))
}

/// The statements that make `name` a table sharded by hash of `key` over `shards` servers
/// (named `shard1`..): (on every shard, on the head). `columns` is the column and index list
/// inside `CREATE TABLE name ( ... )`, the same on both sides; `link` (see [`link_params`])
/// goes in the head table's comment.
pub fn sharded_table_sql(
    name: &str,
    columns: &str,
    key: &str,
    shards: usize,
    link: &str,
) -> (String, String) {
    let on_shard = format!("CREATE TABLE {name} ({columns}) ENGINE=InnoDB");
    let parts: Vec<String> = (1..=shards)
        .map(|k| format!("PARTITION p{k} COMMENT = 'srv \"shard{k}\"'"))
        .collect();
    let on_head = format!(
        "CREATE TABLE {name} ({columns}) ENGINE=SPIDER COMMENT = 'wrapper \"mysql\", table \
         \"{name}\"{}' PARTITION BY HASH ({key}) ({})",
        if link.is_empty() {
            String::new()
        } else {
            format!(", {link}")
        },
        parts.join(", ")
    );
    (on_shard, on_head)
}

/// Create `name` sharded by hash of `key` (see [`sharded_table_sql`]): the shard tables first,
/// then the Spider table on the head.
pub fn create_sharded_table(
    cluster: &RunningCluster,
    name: &str,
    columns: &str,
    key: &str,
) -> Result<()> {
    let shards = cluster.shards();
    let head = cluster.node("head").context("the cluster has no head")?;
    let (on_shard, on_head) =
        sharded_table_sql(name, columns, key, shards.len(), &link_params(head)?);
    for (k, s) in shards.iter().enumerate() {
        admin(s)?
            .execute(&on_shard)
            .with_context(|| format!("creating {name} on shard{}", k + 1))?;
    }
    admin(head)?
        .execute(&on_head)
        .with_context(|| format!("creating the Spider table {name} on the head"))
}

/// Build a secondary index of a sharded table: `ALTER TABLE name ADD INDEX index (columns)` on
/// every shard, one after the other. Returns the number of shards. The head's Spider table
/// is left as it is: an `ALTER TABLE` there would copy the rows through Spider into the same
/// shard tables.
pub fn add_index_on_shards(
    cluster: &RunningCluster,
    name: &str,
    index: &str,
    columns: &str,
) -> Result<usize> {
    let sql = format!("ALTER TABLE {name} ADD INDEX {index} ({columns})");
    cluster.on_shards(&sql, |s| admin(s)?.execute(&sql))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spider_table_names_every_shard() {
        let (s, h) = sharded_table_sql("t", "id BIGINT PRIMARY KEY, v INT", "id", 2, "");
        assert_eq!(
            s,
            "CREATE TABLE t (id BIGINT PRIMARY KEY, v INT) ENGINE=InnoDB"
        );
        assert!(h.contains("ENGINE=SPIDER"), "{h}");
        assert!(h.contains("PARTITION BY HASH (id)"), "{h}");
        assert!(h.contains("PARTITION p1 COMMENT = 'srv \"shard1\"'"), "{h}");
        assert!(h.contains("PARTITION p2 COMMENT = 'srv \"shard2\"'"), "{h}");
        assert!(!h.contains("shard3"), "{h}");
    }
}

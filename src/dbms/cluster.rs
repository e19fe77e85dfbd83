//! A DBMS made of several nodes that each take the workload's SQL (a Galera cluster): one
//! driver per node, the first being the entry (control connection, DDL, checks, sizes, the
//! DBMS's counters), and the workload's connections spread over the write nodes.
//!
//! Everything but [`Dbms::connect`] and [`Dbms::server_pids`] is the entry node's driver's:
//! the cluster speaks that node's dialect. `connect` hands out connections round robin over
//! the write nodes (`--write-nodes`), the first going to the first write node; `server_pids`
//! is every node's processes, so a step's server CPU and I/O are the whole cluster's.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};

use super::{
    Admin, Conn, Dbms, Driver, IndexLab, IndexSpec, KnobScope, MaintAction, QuietProbe,
    RowCounters, Sizes, SqlDialect, TargetInfo,
};

/// A cluster of nodes behind one [`Dbms`].
pub struct ClusterDbms {
    /// One driver per node, in node order; `nodes[0]` is the entry.
    nodes: Vec<Arc<dyn Dbms>>,
    /// Per node: it left the cluster (no new connection goes to it).
    down: Arc<Vec<AtomicBool>>,
    /// Indexes into `nodes` that take the workload's connections.
    write: Vec<usize>,
    /// PIDs of every node's server processes.
    pids: Vec<u32>,
    /// Statements run on every new connection (Galera: `SET SESSION wsrep_sync_wait = 1`).
    session_init: Vec<String>,
    next: AtomicUsize,
}

impl ClusterDbms {
    /// A cluster of `nodes` (entry first) whose connections go to `write` (indexes, not
    /// empty), with every node's server `pids`.
    pub fn new(
        nodes: Vec<Arc<dyn Dbms>>,
        down: Arc<Vec<AtomicBool>>,
        write: Vec<usize>,
        pids: Vec<u32>,
    ) -> Result<Self> {
        if nodes.is_empty() {
            bail!("a cluster needs at least one node");
        }
        if write.is_empty() || write.iter().any(|&i| i >= nodes.len()) {
            bail!(
                "write nodes {write:?} are not nodes of this {}-node cluster",
                nodes.len()
            );
        }
        if down.len() != nodes.len() {
            bail!("one down flag per node");
        }
        Ok(ClusterDbms {
            nodes,
            down,
            write,
            pids,
            session_init: Vec::new(),
            next: AtomicUsize::new(0),
        })
    }

    /// Run `sql` on every connection as it is made.
    pub fn with_session_init(mut self, sql: Vec<String>) -> Self {
        self.session_init = sql;
        self
    }

    /// The node (index) the next [`Dbms::connect`] goes to, and moves on: the next write
    /// node that has not left the cluster; `None` when all of them have.
    pub fn next_node(&self) -> Option<usize> {
        for _ in 0..self.write.len() {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            let i = self.write[k % self.write.len()];
            if !self.down[i].load(Ordering::SeqCst) {
                return Some(i);
            }
        }
        None
    }

    fn entry(&self) -> &dyn Dbms {
        self.nodes[0].as_ref()
    }
}

impl Driver for ClusterDbms {
    fn kind(&self) -> &'static str {
        self.entry().kind()
    }

    fn dialect(&self) -> &SqlDialect {
        self.entry().dialect()
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        let mut c = match self.next_node() {
            Some(i) => self.nodes[i].connect()?,
            None => bail!("every write node has left the cluster"),
        };
        for sql in &self.session_init {
            c.execute(sql)?;
        }
        Ok(c)
    }

    fn info(&self, conn: &mut dyn Conn) -> Result<TargetInfo> {
        self.entry().info(conn)
    }

    fn stores_rows(&self) -> bool {
        self.entry().stores_rows()
    }

    fn server_pids(&self) -> Vec<u32> {
        self.pids.clone()
    }

    fn local_port(&self) -> Option<u16> {
        self.entry().local_port()
    }

    fn embedded(&self) -> bool {
        false
    }

    fn fails_over(&self) -> bool {
        self.write.len() > 1
    }

    fn connect_admin(&self) -> Result<Box<dyn Conn>> {
        if self.down[0].load(Ordering::SeqCst) {
            bail!("the entry node (node1) has left the cluster");
        }
        let mut c = self.nodes[0].connect()?;
        for sql in &self.session_init {
            c.execute(sql)?;
        }
        Ok(c)
    }
}

impl Admin for ClusterDbms {
    fn maintenance(&self, conn: &mut dyn Conn, tables: &[String]) -> Result<Vec<MaintAction>> {
        self.entry().maintenance(conn, tables)
    }

    fn sizes(&self, conn: &mut dyn Conn, tables: &[String], detailed: bool) -> Result<Sizes> {
        self.entry().sizes(conn, tables, detailed)
    }

    fn row_counters(&self, conn: &mut dyn Conn, tables: &[String]) -> Result<Option<RowCounters>> {
        self.entry().row_counters(conn, tables)
    }

    fn row_counters_server_wide(&self) -> bool {
        self.entry().row_counters_server_wide()
    }

    fn data_directory(&self, conn: &mut dyn Conn) -> Option<PathBuf> {
        self.entry().data_directory(conn)
    }

    fn written_bytes(&self, deltas: &[(String, u64)]) -> Option<(u64, String)> {
        self.entry().written_bytes(deltas)
    }

    fn io_counters(&self, conn: &mut dyn Conn) -> Result<Vec<(String, u64)>> {
        self.entry().io_counters(conn)
    }

    fn quiet_probe(&self, conn: &mut dyn Conn, tables: &[String]) -> Result<Option<QuietProbe>> {
        self.entry().quiet_probe(conn, tables)
    }

    fn quiet_watched(&self) -> String {
        self.entry().quiet_watched()
    }

    fn prepare_quiet(&self, conn: &mut dyn Conn, tables: &[String]) -> Result<Vec<String>> {
        self.entry().prepare_quiet(conn, tables)
    }

    fn wal_bytes(&self) -> Option<u64> {
        self.entry().wal_bytes()
    }

    fn wal_bound(&self) -> Option<u64> {
        self.entry().wal_bound()
    }

    fn take_wal_peak(&self) -> Option<u64> {
        self.entry().take_wal_peak()
    }
}

impl IndexLab for ClusterDbms {
    fn plan_uses_index(&self, plan: &str, index: &str) -> bool {
        self.entry().plan_uses_index(plan, index)
    }

    fn index_build_plan(&self, idxs: &[IndexSpec], online: bool) -> Result<Vec<Vec<String>>> {
        self.entry().index_build_plan(idxs, online)
    }

    fn drop_index_sql(&self, idx: &IndexSpec) -> String {
        self.entry().drop_index_sql(idx)
    }

    fn knob_scope(&self, conn: &mut dyn Conn, name: &str) -> Result<KnobScope> {
        self.entry().knob_scope(conn, name)
    }

    fn set_session_knob(&self, conn: &mut dyn Conn, name: &str, value: &str) -> Result<String> {
        self.entry().set_session_knob(conn, name, value)
    }

    fn knob_value(&self, conn: &mut dyn Conn, name: &str) -> Result<String> {
        self.entry().knob_value(conn, name)
    }

    fn build_progress(&self, conn: &mut dyn Conn) -> Result<Option<String>> {
        self.entry().build_progress(conn)
    }

    fn build_warnings(
        &self,
        conn: &mut dyn Conn,
        session_knobs: &[(String, String)],
        progress: &[(f64, String)],
    ) -> Vec<String> {
        self.entry().build_warnings(conn, session_knobs, progress)
    }

    fn index_valid(&self, conn: &mut dyn Conn, table: &str, index: &str) -> Result<bool> {
        self.entry().index_valid(conn, table, index)
    }

    fn rebuild_statements(&self, table: &str) -> Vec<(String, String)> {
        self.entry().rebuild_statements(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_round_robin_over_the_write_nodes() {
        let nodes = || -> Vec<Arc<dyn Dbms>> {
            (0..3)
                .map(|_| Arc::new(super::super::null::Null::new()) as Arc<dyn Dbms>)
                .collect()
        };
        let down = || Arc::new((0..3).map(|_| AtomicBool::new(false)).collect::<Vec<_>>());
        let flags = down();
        let c = ClusterDbms::new(nodes(), flags.clone(), vec![0, 2], vec![7, 8]).unwrap();
        let order: Vec<Option<usize>> = (0..5).map(|_| c.next_node()).collect();
        assert_eq!(order, [0, 2, 0, 2, 0].map(Some).to_vec());
        assert_eq!(c.server_pids(), vec![7, 8]);
        assert!(c.fails_over());
        assert!(!ClusterDbms::new(nodes(), down(), vec![1], vec![])
            .unwrap()
            .fails_over());
        assert!(c.connect().is_ok());
        assert!(c.connect_admin().is_ok());
        // A node that left gets no more connections; none left: a clear error.
        flags[2].store(true, Ordering::SeqCst);
        let order: Vec<Option<usize>> = (0..3).map(|_| c.next_node()).collect();
        assert_eq!(order, [0, 0, 0].map(Some).to_vec());
        flags[0].store(true, Ordering::SeqCst);
        assert_eq!(c.next_node(), None);
        let e = c.connect().err().unwrap().to_string();
        assert!(e.contains("every write node has left"), "{e}");
        let e = c.connect_admin().err().unwrap().to_string();
        assert!(e.contains("entry node (node1) has left"), "{e}");
        assert!(ClusterDbms::new(nodes(), down(), vec![3], vec![]).is_err());
        assert!(ClusterDbms::new(nodes(), down(), vec![], vec![]).is_err());
    }
}

//! A DBMS made of several nodes that each take the workload's SQL (a Galera cluster): one
//! driver per node, the first being the entry (control connection, DDL, checks, sizes, the
//! DBMS's counters), and the workload's connections spread over the write nodes.
//!
//! Everything but [`Dbms::connect`], [`Dbms::connect_admin`], [`Dbms::server_pids`],
//! [`Dbms::fails_over`] and [`Dbms::embedded`] is the entry node's driver's, forwarded to it:
//! [`Driver`]'s methods here by hand (tests/dbms_api.rs fails on one that is neither forwarded
//! nor overridden on purpose), every method of [`super::Admin`] and [`super::IndexLab`]
//! through [`AnswersAs`], from the traits' own declarations (see [`super::forward`]), so none
//! can be missed. The cluster speaks that node's dialect. `connect` hands out connections round robin over
//! the write nodes (`--write-nodes`), the first going to the first write node (when every
//! write node has left, over the nodes that remain); `server_pids` is every node's
//! processes, so a step's server CPU and I/O are the whole cluster's.
//!
//! The entry is node1 until it leaves the cluster: then the node watcher
//! ([`crate::cluster_target`]) moves it to a surviving synced node ([`EntryHandle::move_to`])
//! and every admin connection ([`Driver::connect_admin`]: the control session, its checks,
//! counters and sizes) follows it: its next statement runs on the new entry.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};

use super::forward::AnswersAs;
use super::{Conn, Dbms, Driver, SqlDialect, Stmt, TargetInfo, TxnKind, Value};
use crate::deadline::Deadline;

/// How long a read on an admin connection whose node died waits for the node watcher to move
/// the entry before its error stands (the watcher sees a dead process within a quarter of a
/// second, a node out of the primary component within about a second).
const ENTRY_MOVE_WAIT: Duration = Duration::from_secs(10);

/// Which node is the cluster's entry: shared by the [`ClusterDbms`], its admin connections
/// and the node watcher that moves it.
#[derive(Clone)]
pub struct EntryHandle {
    entry: Arc<AtomicUsize>,
    down: Arc<Vec<AtomicBool>>,
}

impl EntryHandle {
    /// Node1 (index 0) is the entry; `down` says which nodes left.
    pub fn new(down: Arc<Vec<AtomicBool>>) -> Self {
        EntryHandle {
            entry: Arc::new(AtomicUsize::new(0)),
            down,
        }
    }

    /// The entry node's index.
    pub fn get(&self) -> usize {
        self.entry.load(Ordering::SeqCst)
    }

    /// Make node `i` the entry.
    pub fn move_to(&self, i: usize) {
        self.entry.store(i, Ordering::SeqCst);
    }

    /// Whether node `i` left the cluster.
    pub fn is_down(&self, i: usize) -> bool {
        self.down.get(i).is_some_and(|d| d.load(Ordering::SeqCst))
    }
}

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
    /// The entry node (node1 until it leaves).
    entry: EntryHandle,
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
        let entry = EntryHandle::new(down.clone());
        Ok(ClusterDbms {
            nodes,
            down,
            write,
            pids,
            session_init: Vec::new(),
            next: AtomicUsize::new(0),
            entry,
        })
    }

    /// The handle that says (and moves) which node is the entry.
    pub fn entry_handle(&self) -> EntryHandle {
        self.entry.clone()
    }

    /// Run `sql` on every connection as it is made.
    pub fn with_session_init(mut self, sql: Vec<String>) -> Self {
        self.session_init = sql;
        self
    }

    /// The node (index) the next [`Dbms::connect`] goes to, and moves on: the next write
    /// node that has not left the cluster; when every write node has left, the next node
    /// that remains (the step goes on against the rest); `None` when none remains.
    pub fn next_node(&self) -> Option<usize> {
        for _ in 0..self.write.len() {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            let i = self.write[k % self.write.len()];
            if !self.down[i].load(Ordering::SeqCst) {
                return Some(i);
            }
        }
        let n = self.nodes.len();
        for _ in 0..n {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % n;
            if !self.down[i].load(Ordering::SeqCst) {
                return Some(i);
            }
        }
        None
    }

    fn entry(&self) -> &dyn Dbms {
        self.nodes[self.entry.get()].as_ref()
    }

    /// A connection to node `i` with the session's statements run on it.
    fn connect_node(&self, i: usize) -> Result<Box<dyn Conn>> {
        connect_node(&self.nodes, &self.session_init, i)
    }
}

fn connect_node(nodes: &[Arc<dyn Dbms>], init: &[String], i: usize) -> Result<Box<dyn Conn>> {
    let mut c = nodes[i].connect()?;
    for sql in init {
        c.execute(sql)?;
    }
    Ok(c)
}

impl Driver for ClusterDbms {
    fn kind(&self) -> &'static str {
        self.entry().kind()
    }

    fn dialect(&self) -> &SqlDialect {
        self.entry().dialect()
    }

    fn connect(&self) -> Result<Box<dyn Conn>> {
        match self.next_node() {
            Some(i) => self.connect_node(i),
            None => bail!("every node has left the cluster"),
        }
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

    fn client_params(&self) -> Option<super::ClientParams> {
        self.entry().client_params()
    }

    fn major_version(&self) -> Option<u32> {
        self.entry().major_version()
    }

    fn embedded(&self) -> bool {
        false
    }

    fn fails_over(&self) -> bool {
        self.nodes.len() > 1
    }

    fn connect_admin(&self) -> Result<Box<dyn Conn>> {
        let at = self.entry.get();
        if self.entry.is_down(at) {
            bail!(
                "the entry node (node{}) has left the cluster and no surviving node took its \
                 place",
                at + 1
            );
        }
        let conn = self.connect_node(at)?;
        Ok(Box::new(EntryConn {
            nodes: self.nodes.clone(),
            session_init: self.session_init.clone(),
            entry: self.entry.clone(),
            at,
            conn,
            prepared: Vec::new(),
            on_conn: HashMap::new(),
        }))
    }
}

/// An admin connection that follows the cluster's entry: when the entry moved to another
/// node, its next statement connects there first (statements it prepared are prepared
/// again on the new connection as they are used). A read that fails because its node died
/// waits (at most [`ENTRY_MOVE_WAIT`]) for the entry to move and runs again there; a write
/// or transaction statement is never run again: its error stands and the next statement
/// follows the entry.
struct EntryConn {
    nodes: Vec<Arc<dyn Dbms>>,
    session_init: Vec<String>,
    entry: EntryHandle,
    /// The node `conn` is on.
    at: usize,
    conn: Box<dyn Conn>,
    /// The SQL of every statement prepared through this connection: `Stmt(k)` is `prepared[k]`.
    prepared: Vec<String>,
    /// Our handles to `conn`'s (emptied when `conn` is replaced).
    on_conn: HashMap<u32, Stmt>,
}

impl EntryConn {
    /// Move to the entry node when it is no longer the one `conn` is on.
    fn follow(&mut self) -> Result<()> {
        let want = self.entry.get();
        if want != self.at {
            self.conn = connect_node(&self.nodes, &self.session_init, want)?;
            self.at = want;
            self.on_conn.clear();
        }
        Ok(())
    }

    /// After `e` on the current connection: true when the connection's node is gone and the
    /// entry moved elsewhere within [`ENTRY_MOVE_WAIT`] (the caller then runs a read again).
    fn moved_after_failure(&mut self) -> bool {
        if self.conn.query_rows("SELECT 1").is_ok() {
            return false;
        }
        let end = Deadline::after(ENTRY_MOVE_WAIT);
        while !end.expired() {
            if self.entry.get() != self.at {
                return self.follow().is_ok();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Run a read, following the entry first and once more after its node died.
    fn read<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        self.follow()?;
        match f(self) {
            Err(_) if self.moved_after_failure() => f(self),
            other => other,
        }
    }

    /// The current connection's handle of our statement `st`, preparing it there first.
    fn stmt(&mut self, st: Stmt) -> Result<Stmt> {
        if let Some(s) = self.on_conn.get(&st.0) {
            return Ok(*s);
        }
        let Some(sql) = self.prepared.get(st.0 as usize) else {
            bail!("statement {} was not prepared on this connection", st.0);
        };
        let s = self.conn.prepare(sql)?;
        self.on_conn.insert(st.0, s);
        Ok(s)
    }
}

impl Conn for EntryConn {
    fn prepare(&mut self, sql: &str) -> Result<Stmt> {
        self.follow()?;
        let k = match self.prepared.iter().position(|p| p == sql) {
            Some(k) => k,
            None => {
                if self.prepared.len() >= super::MAX_PREPARED {
                    bail!(
                        "more than {} statements prepared on one connection",
                        super::MAX_PREPARED
                    );
                }
                self.prepared.push(sql.to_string());
                self.prepared.len() - 1
            }
        };
        let ours = Stmt(k as u32);
        self.stmt(ours)?;
        Ok(ours)
    }

    fn exec(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        self.follow()?;
        let s = self.stmt(st)?;
        self.conn.exec(s, params)
    }

    fn query(&mut self, st: Stmt, params: &[Value]) -> Result<u64> {
        self.read(|c| {
            let s = c.stmt(st)?;
            c.conn.query(s, params)
        })
    }

    fn query_int(&mut self, st: Stmt, params: &[Value]) -> Result<Option<i64>> {
        self.read(|c| {
            let s = c.stmt(st)?;
            c.conn.query_int(s, params)
        })
    }

    fn begin(&mut self, kind: TxnKind) -> Result<()> {
        self.follow()?;
        self.conn.begin(kind)
    }

    fn commit(&mut self) -> Result<()> {
        self.conn.commit()
    }

    fn rollback(&mut self) -> Result<()> {
        self.conn.rollback()
    }

    fn execute(&mut self, sql: &str) -> Result<()> {
        self.follow()?;
        self.conn.execute(sql)
    }

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.read(|c| c.conn.query_rows(sql))
    }

    fn exec_text(&mut self, sql: &str) -> Result<u64> {
        self.follow()?;
        self.conn.exec_text(sql)
    }

    fn query_text(&mut self, sql: &str) -> Result<u64> {
        self.read(|c| c.conn.query_text(sql))
    }

    fn table_exists(&mut self, table: &str) -> Result<bool> {
        self.read(|c| c.conn.table_exists(table))
    }

    fn index_exists(&mut self, table: &str, index: &str) -> Result<bool> {
        self.read(|c| c.conn.index_exists(table, index))
    }

    fn explain(&mut self, sql: &str) -> Result<String> {
        self.read(|c| c.conn.explain(sql))
    }
}

/// [`super::Admin`] and [`super::IndexLab`]: every method is the entry node's (forwarded from the traits'
/// own declarations, see [`super::forward`]).
impl AnswersAs for ClusterDbms {
    fn answers_as(&self) -> &dyn Dbms {
        self.entry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_round_robin_over_the_write_nodes_and_follow_the_entry() {
        let nodes = || -> Vec<Arc<dyn Dbms>> {
            (0..3)
                .map(|_| Arc::new(super::super::null::Null::new()) as Arc<dyn Dbms>)
                .collect()
        };
        let down = || Arc::new((0..3).map(|_| AtomicBool::new(false)).collect::<Vec<_>>());
        let down1 = || Arc::new(vec![AtomicBool::new(false)]);
        let flags = down();
        let c = ClusterDbms::new(nodes(), flags.clone(), vec![0, 2], vec![7, 8]).unwrap();
        let order: Vec<Option<usize>> = (0..5).map(|_| c.next_node()).collect();
        assert_eq!(order, [0, 2, 0, 2, 0].map(Some).to_vec());
        assert_eq!(c.server_pids(), vec![7, 8]);
        assert!(c.fails_over());
        assert!(
            !ClusterDbms::new(nodes()[..1].to_vec(), down1(), vec![0], vec![])
                .unwrap()
                .fails_over()
        );
        assert!(c.connect().is_ok());
        assert!(c.connect_admin().is_ok());
        // A node that left gets no more connections; every write node gone: the nodes that
        // remain; none left: a clear error.
        flags[2].store(true, Ordering::SeqCst);
        let order: Vec<Option<usize>> = (0..3).map(|_| c.next_node()).collect();
        assert_eq!(order, [0, 0, 0].map(Some).to_vec());
        flags[0].store(true, Ordering::SeqCst);
        assert_eq!(c.next_node(), Some(1));
        assert!(c.connect().is_ok());
        // The entry left and nobody moved it: admin connections are refused, naming it.
        let e = c.connect_admin().err().unwrap().to_string();
        assert!(e.contains("entry node (node1) has left"), "{e}");
        // Moved: admin connections go to the new entry, and one made before follows it.
        let h = c.entry_handle();
        h.move_to(1);
        assert_eq!(h.get(), 1);
        assert!(c.connect_admin().is_ok());
        flags[1].store(true, Ordering::SeqCst);
        assert_eq!(c.next_node(), None);
        let e = c.connect().err().unwrap().to_string();
        assert!(e.contains("every node has left"), "{e}");
        assert!(ClusterDbms::new(nodes(), down(), vec![3], vec![]).is_err());
        assert!(ClusterDbms::new(nodes(), down(), vec![], vec![]).is_err());
    }
}

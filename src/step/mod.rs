//! Steps of a run that every workload's commands share: index creation ([`create_index`]: the
//! insert benchmark's l.x and the index lab's builds, both timed by [`build_timer`]), the wait
//! for a quiet server before a measurement ([`quiet`]), running one insert-benchmark step and a
//! plan of them in a session ([`plan_run`], each step run by the workload's own code on the host
//! of its steps, [`step_host`]: the host of a registry entry's
//! `Runner::Steps`, as [`txn_phase`] is the host of `Runner::Own`), knob sweeps ([`sweep`]), a
//! transaction workload's clients ([`transactions`]) and the head every transaction workload's
//! run shares ([`txn_phase`]: the host a workload's own runner in `src/workload/` runs on, for
//! `ixbench run --workload`, `ixbench oltp`, `ixbench timeseries`), the load around a schema
//! change ([`online_ddl`]), the step barrier of a several-process run ([`barrier`]), child
//! processes ([`child`]), the index lab's own table ([`own_table`]) and the schema-change tools
//! ([`schema_tools`]). The insert benchmark's own steps (load, read+write, maint, key patterns)
//! and what they share are the workload's (`crate::workload::iibench::steps`). A workload's
//! command of its own (`ixbench oltp`, `ixbench timeseries`) takes its options and runs on the
//! transaction head through [`workload_command`].

pub mod barrier;
pub mod build_timer;
pub mod child;
pub mod create_index;
pub mod online_ddl;
pub mod own_table;
pub mod plan_run;
pub mod quiet;
pub mod schema_tools;
pub mod step_host;
pub mod sweep;
pub mod transactions;
pub mod txn_phase;
pub mod workload_command;

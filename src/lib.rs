//! ixbench: a benchmark for write-heavy workloads with secondary indexes.
//!
//! Layout: [`cli`] parses, [`run`] drives a run through its [`step`]s against a [`target`],
//! [`workload`] makes the rows and queries, [`measure`] schedules and measures, [`results`]
//! holds and stores what was measured, [`export`] prints it.

pub mod args;
pub mod cli;
pub mod cluster_target;
pub mod cmd;
pub mod compare;
pub mod dbms;
pub mod export;
pub mod index_spec;
pub mod measure;
pub mod out;
pub mod pattern;
pub mod progress;
pub mod results;
pub mod scale;
pub mod server;
pub mod session;
pub mod size;
pub mod step;
pub mod stop;
pub mod workload;

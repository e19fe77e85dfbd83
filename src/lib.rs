//! ixbench: a benchmark for write-heavy workloads with secondary indexes.
//!
//! Layout: [`cli`] parses, [`run`] drives a run through its [`step`]s against a [`target`],
//! [`workload`] makes the rows and queries, [`measure`] schedules and measures, [`results`]
//! holds and stores what was measured, [`export`] prints it.

pub mod cli;
pub mod compare;
pub mod export;
pub mod lab;
pub mod measure;
pub mod out;
pub mod results;
pub mod run;
pub mod server;
pub mod step;
pub mod stop;
pub mod target;
pub mod workload;

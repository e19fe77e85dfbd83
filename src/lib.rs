//! ixbench: a benchmark for write-heavy workloads with secondary indexes.
//!
//! Layout: [`cmd`] holds the commands (one file or folder each; `main.rs` dispatches), which
//! compose [`step`]s in a [`session`] against a target ([`dbms`], [`server`]), with the
//! options every database command shares ([`options`]: their parsers, `--size` presets, a
//! several-process run's part); [`workload`]
//! makes the rows and queries (and plans and holds the insert benchmark's steps, which
//! [`step::plan_run`] runs), each workload registered by name in [`workload::registry`] so
//! `run`, `ddl` (and the commands that follow) take `--workload NAME`, on the generic key
//! patterns of [`pattern`]; [`measure`] schedules and measures (its [`measure::clock`] is the
//! one place measured time comes from; timeouts and waits use [`deadline`]), [`results`] holds
//! and stores what was measured, [`export`] prints it and compares runs ([`export::compare`]).
//! The layers run one way, commands at the top (tests/layers.rs, docs/contributing.md).

/// The allocator of every binary built on this crate (ixbench, its tests and examples): see
/// Cargo.toml's `mimalloc` for why.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod cluster_target;
pub mod cmd;
pub mod dbms;
pub mod deadline;
pub mod export;
pub mod format;
pub mod index_spec;
pub mod input;
pub mod measure;
pub mod options;
pub mod out;
pub mod pattern;
pub mod progress;
pub mod results;
pub mod server;
pub mod session;
pub mod step;
pub mod stop;
pub mod workload;

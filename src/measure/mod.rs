//! Measuring: open-loop schedules, per-worker meters and HDR histograms, the interval reporter,
//! and system counters.

pub mod histogram;
pub mod interval;
pub mod meter;
pub mod priority;
pub mod reporter;
pub mod resources;
pub mod schedule;
pub mod sys;
pub mod txn;
pub mod windows;

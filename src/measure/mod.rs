//! Measuring: the one measuring loop ([`drive`]: pacing, retries, failover, recording),
//! open-loop schedules, per-worker meters and HDR histograms, the interval reporter (with each
//! interval's backlog), the live view of a run (`--metrics-listen`), the windows of a schedule change, and system counters. [`clock`] is
//! the one place measured time comes from (stopwatches, the wall-clock stamps of results):
//! nothing outside `measure` reads the clock for a figure (timeouts and waits use
//! [`crate::deadline`]).

pub mod clock;
pub mod drive;
pub mod failover;
pub mod histogram;
pub mod interval;
pub mod live;
pub mod meter;
pub mod priority;
pub mod reporter;
pub mod resources;
pub mod schedule;
pub mod server_figures;
pub mod sys;
pub mod txn;
pub mod until;
pub mod windows;

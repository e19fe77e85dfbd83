//! The commands, one file (or folder) each, all of one shape: `pub fn run(args, ...) ->
//! Result<u8>` takes the command's parsed options and returns the exit status. A command
//! composes steps ([`crate::step`], [`crate::session`]) and never reaches into another command
//! (held by tests/layers.rs).

pub mod ab;
pub mod ddl;
pub mod index;
pub mod merge;
pub mod oltp;
pub mod pattern;
pub mod report;
pub mod run;
pub mod timeseries;

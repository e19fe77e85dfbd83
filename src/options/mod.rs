//! The options every database command shares and their parsers: [`cli`] (the shared options
//! themselves, [`cli::CommonArgs`], and the bounds and parsers of option values), [`args`]
//! (parsers and checks of option values: data length, settings, pragmas, timed runs), [`size`]
//! (the `--size` presets, applied at parsing) and [`scale`] (`--client-id`, `--client-count`,
//! `--start-at`: one process's part of a several-process run), [`target`] (`--target` and the
//! cluster options parsed once into one typed value). Each command's own options are
//! in its file under [`crate::cmd`]; the checks of the shared options against the target a
//! command names are the session's ([`crate::session::check_common`]).

pub mod args;
pub mod cli;
pub mod scale;
pub mod size;
pub mod target;

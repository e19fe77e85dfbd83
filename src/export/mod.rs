//! Output formats, one file each.

pub mod text;

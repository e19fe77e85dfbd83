//! PostgreSQL target. (Being written: see issue 3.)

use anyhow::{bail, Result};

use super::TargetOptions;

/// PostgreSQL server.
pub struct Postgres;

impl Postgres {
    /// Connect to the server at `url`.
    pub fn open(_url: &str, _opts: &TargetOptions) -> Result<Box<dyn super::Target>> {
        bail!("the postgres target is not built yet")
    }
}

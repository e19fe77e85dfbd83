//! MySQL and MariaDB (InnoDB, MyRocks) target. (Being written: see issue 3.)

use anyhow::{bail, Result};

use super::TargetOptions;

/// MySQL and MariaDB (InnoDB, MyRocks) server.
pub struct Mysql;

impl Mysql {
    /// Connect to the server at `url`.
    pub fn open(_url: &str, _opts: &TargetOptions) -> Result<Box<dyn super::Target>> {
        bail!("the mysql target is not built yet")
    }
}

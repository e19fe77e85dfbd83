//! Workloads: schemas, row generators and query arguments.

pub mod iibench;

//! The integration tests, one crate (one binary to build and link, where there were 37): a
//! module per area. They run the ixbench binary against embedded SQLite and against throwaway
//! PostgreSQL, MariaDB (InnoDB, MyRocks), Galera, Spider and postgres_fdw servers started from
//! the installed binaries on free loopback ports (with CI=true a missing binary fails a test
//! instead of skipping it). Run one area with `cargo test --test integration ddl::`.

mod common;

mod ab;
mod cli_errors;
mod clock_reads;
mod cluster;
mod compare;
mod conninfo;
mod dbms_api;
mod ddl;
mod ddl_online_log;
mod ddl_parts;
mod ddl_workload;
mod dialect_branches;
mod docs_examples;
mod faults;
mod galera_failover;
mod galera_run;
mod galera_scale;
mod iibench_workload;
mod index_lab;
mod index_own;
mod index_workload;
mod kv;
mod layers;
mod measure;
mod measure_servers;
mod metrics_endpoint;
mod mysql;
mod mysql_index;
mod oltp;
mod one_client;
mod pattern;
mod pattern_run;
mod postgres;
mod postgres_index;
mod quiet;
mod report;
mod resources;
mod run_workload;
mod scale;
mod schema;
mod schema_tools;
mod server;
mod server_metrics;
mod sharded_index;
mod sharded_run;
mod smoke;
mod sqlite_run;
mod statements;
mod timeseries;
mod tls;
mod user_tables;
mod versions;
mod workload_names;

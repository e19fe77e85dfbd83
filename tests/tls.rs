//! TLS and every way to log in, in ixbench's own PostgreSQL and MySQL clients, against real
//! throwaway servers that require TLS: certificates made at test time with the `openssl`
//! command (a CA, a server certificate for `localhost` only, a client certificate, and a CA
//! that signed nothing here), PostgreSQL with `ssl = on` and a pg_hba.conf of `hostssl` lines
//! only, MariaDB with ssl_cert/ssl_key/ssl_ca and `require_secure_transport = ON`.
//!
//! Each sslmode / ssl-mode, each log-in (PostgreSQL: SCRAM with and without channel binding,
//! md5, password, trust, client certificate; MariaDB: mysql_native_password, client_ed25519,
//! a client certificate, mysql_clear_password refused without TLS), a wrong CA and a wrong
//! host name refused in one line, a clear connection to a TLS-only server refused in one line,
//! no password in any message; then `ixbench run`, `oltp`, `ddl`, `index` and `timeseries`
//! `--size smoke` end to end over verified TLS. What the results record of the connection (`target.transport`) is what these
//! tests read to know TLS and the log-in method were used.
//!
//! caching_sha2_password against MariaDB 11.8's auth_mysql_sha2 plugin (bookworm's 10.11 has
//! none): a private install that `.ci/mariadb118.sh` unpacks from Debian's packages into
//! `.ci/mariadb118` (`IXBENCH_MARIADB118_BIN` names another `usr/bin`), started with
//! `--server-bin`; each path of the log-in (the password over TLS or the socket, the RSA
//! exchange), a server without RSA keys, a password too long for the key, wrong passwords, and
//! `ixbench run --size smoke` over TLS and in clear.
//!
//! Clusters started with `--server-tls` (pg-shards, Spider, Galera): every node refuses a
//! clear TCP connection, takes a verified one, the head's connections to the shards
//! (postgres_fdw, Spider) go over TLS, `ixbench run --size smoke` passes end to end with the
//! transport TLS, and a root certificate that did not sign the nodes' is refused in one line.

use crate::common;

use std::path::{Path, PathBuf};

use common::certs::{make_certs, server_tls_dir};
use common::{ixbench, run_json, start_server, start_server_set, text};
use ixbench::dbms::{self, netio::Transport, TargetOptions, TargetSpec};
use ixbench::server::ServerKind;

/// Open `url` as a target and read how its connection went, or the one-line error.
fn transport(url: &str) -> Result<Transport, String> {
    let spec = TargetSpec::parse(url).map_err(|e| format!("{e:#}"))?;
    let t = dbms::open(&spec, &TargetOptions::default()).map_err(|e| format!("{e:#}"))?;
    let mut c = t.connect().map_err(|e| format!("{e:#}"))?;
    // The database of the URL is the session's (sent in the start-up / handshake response).
    let db = if url.starts_with("postgres") {
        "SELECT current_database()"
    } else {
        "SELECT DATABASE()"
    };
    let rows = c.query_rows(db).map_err(|e| format!("{e:#}"))?;
    assert_eq!(
        rows[0][0].as_deref(),
        Some("ixbench"),
        "{}",
        dbms::redact_url(url)
    );
    let info = t.info(c.as_mut()).map_err(|e| format!("{e:#}"))?;
    let t = info.transport.ok_or("no transport recorded")?;
    eprintln!("{}: {t:?}", dbms::redact_url(url));
    Ok(t)
}

/// A refusal: one line, saying `want`, naming no password of `secrets`.
fn refused(url: &str, want: &str, secrets: &[&str]) -> String {
    let e = match transport(url) {
        Ok(t) => panic!("{} accepted: {t:?}", dbms::redact_url(url)),
        Err(e) => e,
    };
    eprintln!("{}: refused: {e}", dbms::redact_url(url));
    assert!(!e.contains('\n'), "not one line: {e}");
    assert!(
        e.contains(want),
        "{}: expected {want:?} in: {e}",
        dbms::redact_url(url)
    );
    for s in secrets {
        assert!(!e.contains(s), "password in the message: {e}");
    }
    e
}

/// A result of about 9 MB over TLS (`sql`: rows `i, letter(65 + i % 26) x (100 + i % 3000)`
/// for i = 1..6000): many records, split across socket reads and across the client's buffer,
/// every row whole and in order.
fn large_result_intact(url: &str, sql: &str) {
    let spec = TargetSpec::parse(url).unwrap();
    let t = dbms::open(&spec, &TargetOptions::default()).unwrap();
    let mut c = t.connect().unwrap();
    let info = t.info(c.as_mut()).unwrap();
    assert!(info.transport.is_some_and(|t| t.tls), "not over TLS");
    let rows = c.query_rows(sql).unwrap();
    assert_eq!(rows.len(), 6000);
    for (k, r) in rows.iter().enumerate() {
        let i = k + 1;
        assert_eq!(r[0].as_deref(), Some(i.to_string().as_str()), "row {i}");
        let want = char::from(65 + (i % 26) as u8)
            .to_string()
            .repeat(100 + i % 3000);
        assert!(
            r[1].as_deref() == Some(want.as_str()),
            "row {i} changed on the way"
        );
    }
}

/// TLS on with a version and a cipher, verified as `verified`, logged in by `auth`.
fn assert_tls(t: &Transport, verified: &str, auth: &str) {
    assert!(t.tls, "{t:?}");
    assert!(
        matches!(t.tls_version.as_deref(), Some("TLSv1.3" | "TLSv1.2")),
        "{t:?}"
    );
    assert!(
        t.tls_cipher
            .as_deref()
            .is_some_and(|c| c.starts_with("TLS")),
        "{t:?}"
    );
    assert_eq!(t.tls_verified.as_deref(), Some(verified), "{t:?}");
    assert_eq!(t.auth, auth, "{t:?}");
    assert_eq!(t.socket, "tcp");
}

/// The steps of `ixbench run` over TLS: one of each kind (a load, the index build, a load with
/// deletes, maintenance, a range and a point query step), so every kind of connection a run
/// opens; the smoke plan's other four query steps differ from these only in their rates.
const RUN_STEPS: &str = "l.i0,l.x,l.i1,maint,qr100,qp100";

/// Run `ixbench CMD --size smoke` against `url`: it ends ok, its results record TLS, and no
/// password is in its output or any file it wrote.
fn smoke_over_tls(cmd: &str, url: &str, password: &str, auth: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(cmd);
    let mut args = vec![
        cmd,
        "--size",
        "smoke",
        "--target",
        url,
        "--out",
        out.to_str().unwrap(),
    ];
    if cmd == "run" {
        args.extend(["--steps", RUN_STEPS]);
    }
    // A busy machine may make ddl's baseline miss its load: NO VERDICT (exit 5) is not what
    // this test is about.
    if cmd == "ddl" {
        args.extend(["--pass-on", "no-verdict"]);
    }
    let o = ixbench(&args);
    let (stdout, stderr) = text(&o);
    assert!(!stdout.contains(password) && !stderr.contains(password));
    assert!(o.status.success(), "{cmd}: {stderr}\n{stdout}");
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{cmd}: {}", run["error"]);
    let t = &run["target"]["transport"];
    assert_eq!(t["tls"], true, "{cmd}: {t}");
    assert_eq!(t["tls_verified"], "chain and host name", "{cmd}: {t}");
    assert_eq!(t["auth"], auth, "{cmd}: {t}");
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        if let Ok(s) = std::fs::read_to_string(&p) {
            assert!(!s.contains(password), "password in {}", p.display());
        }
    }
}

/// A PostgreSQL server that takes TCP connections over TLS only (pg_hba.conf has `hostssl`
/// lines only), with a role per log-in method.
#[test]
fn postgres_tls_modes_and_logins() {
    let test = "postgres_tls_modes_and_logins";
    let Some(certs) = make_certs(test) else {
        return;
    };
    let Some(s) = start_server(test, ServerKind::Postgres, false) else {
        return;
    };
    // The server's files: in its data directory, owned by its user (the key must be private).
    let dd = &s.datadir;
    let meta = std::fs::metadata(dd).unwrap();
    use std::os::unix::fs::MetadataExt;
    for f in ["server.crt", "server.key", "ca.crt"] {
        let to = dd.join(f);
        std::fs::copy(certs.path(f), &to).unwrap();
        std::os::unix::fs::chown(&to, Some(meta.uid()), Some(meta.gid())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let admin = format!("{}?sslmode=disable", s.url_with_password());
    let pg = dbms::open(
        &TargetSpec::parse(&admin).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = pg.connect().unwrap();
    for sql in [
        "ALTER SYSTEM SET ssl = on",
        "ALTER SYSTEM SET ssl_cert_file = 'server.crt'",
        "ALTER SYSTEM SET ssl_key_file = 'server.key'",
        "ALTER SYSTEM SET ssl_ca_file = 'ca.crt'",
        "CREATE ROLE scram_u LOGIN PASSWORD 'scram-Secret1'",
        "CREATE ROLE pw_u LOGIN PASSWORD 'pw-Secret2'",
        "CREATE ROLE trust_u LOGIN",
        "CREATE ROLE cert_u LOGIN",
        "SET password_encryption = 'md5'",
        "CREATE ROLE md5_u LOGIN PASSWORD 'md5-Secret3'",
    ] {
        c.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    }
    std::fs::write(
        dd.join("pg_hba.conf"),
        "local all all scram-sha-256\n\
         hostssl all trust_u 127.0.0.1/32 trust\n\
         hostssl all pw_u 127.0.0.1/32 password\n\
         hostssl all md5_u 127.0.0.1/32 md5\n\
         hostssl all cert_u 127.0.0.1/32 cert\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    let rows = c.query_rows("SELECT pg_reload_conf()").unwrap();
    assert_eq!(rows[0][0].as_deref(), Some("t"));
    drop(c);
    let port = s.port;
    let ca = certs.s("ca.crt");
    let url = |user: &str, host: &str, params: &str| {
        format!("postgres://{user}@{host}:{port}/ixbench?{params}")
    };
    let scram = |params: &str| url("scram_u:scram-Secret1", "localhost", params);
    let admin_pw = s.password().to_string();
    let secrets = [
        "scram-Secret1",
        "pw-Secret2",
        "md5-Secret3",
        admin_pw.as_str(),
    ];
    // The reload is asynchronous: wait for TLS to be on.
    let t0 = std::time::Instant::now();
    while transport(&scram("sslmode=require")).is_err() {
        assert!(t0.elapsed().as_secs() < 30, "TLS never came on");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    large_result_intact(
        &scram("sslmode=require"),
        "SELECT i, repeat(chr(65 + i % 26), 100 + i % 3000) FROM generate_series(1, 6000) i",
    );

    // Each sslmode that can use TLS: SCRAM with channel binding (libpq's default, prefer).
    for (params, verified) in [
        ("sslmode=require".to_string(), "none"),
        ("sslmode=prefer".to_string(), "none"),
        // allow: in clear first, which pg_hba refuses, then TLS.
        ("sslmode=allow".to_string(), "none"),
        (format!("sslmode=require&sslrootcert={ca}"), "chain"),
        (format!("sslmode=verify-ca&sslrootcert={ca}"), "chain"),
        (
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "chain and host name",
        ),
        (
            format!("sslrootcert={ca}&sslmode=verify-full&sslsni=0"),
            "chain and host name",
        ),
    ] {
        let t = transport(&scram(&params)).unwrap_or_else(|e| panic!("{params}: {e}"));
        assert_tls(&t, verified, "SCRAM-SHA-256-PLUS");
        assert!(t.tls_mode.starts_with("sslmode="), "{t:?}");
    }
    // Channel binding off, and required.
    let t = transport(&scram("sslmode=require&channel_binding=disable")).unwrap();
    assert_tls(&t, "none", "SCRAM-SHA-256");
    let t = transport(&scram("sslmode=require&channel_binding=require")).unwrap();
    assert_tls(&t, "none", "SCRAM-SHA-256-PLUS");
    // The other log-ins.
    let t = transport(&url("md5_u:md5-Secret3", "localhost", "sslmode=require")).unwrap();
    assert_tls(&t, "none", "md5");
    let t = transport(&url("pw_u:pw-Secret2", "localhost", "sslmode=require")).unwrap();
    assert_tls(&t, "none", "password");
    let t = transport(&url("trust_u", "localhost", "sslmode=require")).unwrap();
    assert_tls(&t, "none", "trust");
    let cert = format!(
        "sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}",
        certs.s("client.crt"),
        certs.s("client.key")
    );
    let t = transport(&url("cert_u", "localhost", &cert)).unwrap();
    assert_tls(&t, "chain and host name", "trust or client certificate");

    // Refusals, one line each, no password in them.
    refused(
        &url("cert_u", "localhost", "sslmode=require"),
        "certificate",
        &secrets,
    );
    refused(&scram("sslmode=disable"), "only over TLS", &secrets);
    refused(
        &url(
            "md5_u:md5-Secret3",
            "localhost",
            "sslmode=require&channel_binding=require",
        ),
        "password was not sent",
        &secrets,
    );
    refused(
        &scram(&format!(
            "sslmode=verify-ca&sslrootcert={}",
            certs.s("other-ca.crt")
        )),
        "not signed by a trusted root",
        &secrets,
    );
    // A certificate for localhost, reached as 127.0.0.1: the name does not match.
    let e = refused(
        &url(
            "scram_u:scram-Secret1",
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "not valid for host 127.0.0.1",
        &secrets,
    );
    assert!(e.contains("localhost"), "{e}");
    // verify-ca checks the chain only.
    let t = transport(&url(
        "scram_u:scram-Secret1",
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    ))
    .unwrap();
    assert_tls(&t, "chain", "SCRAM-SHA-256-PLUS");
    refused(
        &url("scram_u:wrong-Secret9", "localhost", "sslmode=require"),
        "28P01",
        &["wrong-Secret9"],
    );
    refused(&scram("sslmode=verify-full"), "sslrootcert", &secrets);

    // End to end over verified TLS.
    let e2e = url(
        &format!("postgres:{}", dbms::percent_encode(s.password())),
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    for cmd in ["run", "oltp", "ddl", "index", "timeseries"] {
        smoke_over_tls(cmd, &e2e, s.password(), "SCRAM-SHA-256-PLUS");
    }
}

/// A MariaDB server with TLS (ssl_cert, ssl_key, ssl_ca), then `require_secure_transport`,
/// with an account per authentication plugin. The clear-text account is PAM's (version 1 of
/// the plugin, which runs PAM in the server: version 2 needs a setuid helper) with
/// `pam_use_cleartext_plugin`, so the server asks for mysql_clear_password; its PAM service
/// does not exist, so the password, once sent, is refused by the server.
#[test]
fn mariadb_tls_modes_and_logins() {
    let test = "mariadb_tls_modes_and_logins";
    let Some(certs) = make_certs(test) else {
        return;
    };
    let (cert, key, ca) = (
        certs.s("server.crt"),
        certs.s("server.key"),
        certs.s("ca.crt"),
    );
    let Some(s) = start_server_set(
        test,
        ServerKind::Mariadb,
        false,
        &[
            ("ssl_cert", &cert),
            ("ssl_key", &key),
            ("ssl_ca", &ca),
            ("plugin_load_add", "auth_ed25519;auth_pam_v1"),
            ("pam_use_cleartext_plugin", "ON"),
        ],
    ) else {
        return;
    };
    let port = s.port;
    let root_pw = s.password().to_string();
    let url = |user: &str, host: &str, params: &str| {
        format!("mysql://{user}@{host}:{port}/ixbench?{params}")
    };
    let root = url(
        &format!("root:{}", dbms::percent_encode(&root_pw)),
        "localhost",
        "ssl-mode=REQUIRED",
    );
    let m = dbms::open(
        &TargetSpec::parse(&root).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = m.connect().unwrap();
    for sql in [
        "CREATE USER native_u@'%' IDENTIFIED BY 'native-Secret1'",
        "CREATE USER ed_u@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-Secret2')",
        "CREATE USER clear_u@'%' IDENTIFIED VIA pam USING 'ixbench-test-nonexistent'",
        "CREATE USER x509_u@'%' IDENTIFIED BY 'x509-Secret3' REQUIRE X509",
        "GRANT SELECT ON ixbench.* TO native_u@'%', ed_u@'%', clear_u@'%', x509_u@'%'",
    ] {
        c.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    }
    let secrets = [
        "native-Secret1",
        "ed-Secret2",
        "x509-Secret3",
        "clear-Secret4",
        root_pw.as_str(),
    ];
    let native = |host: &str, params: &str| url("native_u:native-Secret1", host, params);
    large_result_intact(
        &root,
        "SELECT seq, REPEAT(CHAR(65 + seq % 26), 100 + seq % 3000) FROM seq_1_to_6000",
    );

    // TLS not yet required: a clear connection works, and a clear-text password is refused
    // before it is sent.
    let t = transport(&native("localhost", "ssl-mode=DISABLED")).unwrap();
    assert!(!t.tls && t.tls_version.is_none(), "{t:?}");
    assert_eq!(t.auth, "mysql_native_password");
    refused(
        &url("clear_u:clear-Secret4", "localhost", "ssl-mode=DISABLED"),
        "the password was not sent",
        &secrets,
    );
    // Over TLS it is sent, and PAM (no such service) says no: the server's answer.
    refused(
        &url("clear_u:clear-Secret4", "localhost", "ssl-mode=REQUIRED"),
        "ERROR 1045",
        &secrets,
    );

    c.execute("SET GLOBAL require_secure_transport = ON")
        .unwrap();
    drop(c);
    for (params, verified) in [
        ("ssl-mode=PREFERRED".to_string(), "none"),
        (String::new(), "none"), // PREFERRED is the default
        ("ssl-mode=REQUIRED".to_string(), "none"),
        (format!("ssl-ca={ca}"), "chain"), // ssl-ca alone: VERIFY_CA
        (format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"), "chain"),
        (
            format!("ssl_mode=verify_identity&ssl_ca={ca}"),
            "chain and host name",
        ),
    ] {
        let t =
            transport(&native("localhost", &params)).unwrap_or_else(|e| panic!("{params}: {e}"));
        assert_tls(&t, verified, "mysql_native_password");
        assert!(t.tls_mode.starts_with("ssl-mode="), "{t:?}");
    }
    let t = transport(&url("ed_u:ed-Secret2", "localhost", "ssl-mode=REQUIRED")).unwrap();
    assert_tls(&t, "none", "client_ed25519");
    let client = format!(
        "ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}&ssl-cert={}&ssl-key={}",
        certs.s("client.crt"),
        certs.s("client.key")
    );
    let t = transport(&url("x509_u:x509-Secret3", "localhost", &client)).unwrap();
    assert_tls(&t, "chain and host name", "mysql_native_password");
    // Over the Unix socket: PREFERRED stays in clear (the socket is private), REQUIRED not.
    if let Some(sock) = &s.socket {
        let sock = dbms::percent_encode(&sock.display().to_string());
        let t = transport(&format!(
            "mysql://native_u:native-Secret1@localhost/ixbench?socket={sock}"
        ))
        .unwrap();
        assert!(!t.tls && t.socket == "unix", "{t:?}");
        let t = transport(&format!(
            "mysql://native_u:native-Secret1@localhost/ixbench?socket={sock}&ssl-mode=REQUIRED"
        ))
        .unwrap();
        assert!(t.tls && t.socket == "unix", "{t:?}");
    }

    // Refusals, one line each, no password in them.
    refused(
        &native("localhost", "ssl-mode=DISABLED"),
        "requires TLS",
        &secrets,
    );
    refused(
        &url("ed_u:wrong-Secret9", "localhost", "ssl-mode=REQUIRED"),
        "ERROR 1045",
        &["wrong-Secret9"],
    );
    refused(
        &url("x509_u:x509-Secret3", "localhost", "ssl-mode=REQUIRED"),
        "ERROR 1045",
        &secrets,
    );
    refused(
        &native(
            "localhost",
            &format!("ssl-mode=VERIFY_CA&ssl-ca={}", certs.s("other-ca.crt")),
        ),
        "not signed by a trusted root",
        &secrets,
    );
    let e = refused(
        &native(
            "127.0.0.1",
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
        ),
        "not valid for host 127.0.0.1",
        &secrets,
    );
    assert!(e.contains("localhost"), "{e}");
    let t = transport(&native(
        "127.0.0.1",
        &format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"),
    ))
    .unwrap();
    assert_tls(&t, "chain", "mysql_native_password");
    refused(
        &native("localhost", "ssl-mode=SOMETIMES"),
        "ssl-mode=SOMETIMES",
        &secrets,
    );

    // End to end over verified TLS.
    let e2e = url(
        &format!("root:{}", dbms::percent_encode(&root_pw)),
        "localhost",
        &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
    );
    for cmd in ["run", "oltp", "ddl", "index", "timeseries"] {
        smoke_over_tls(cmd, &e2e, &root_pw, "mysql_native_password");
    }
}

/// The `bin/` directory of the private MariaDB 11.8 that `.ci/run` unpacks from Debian's
/// packages into `.ci/mariadb118` (`.ci/mariadb118.sh`; `IXBENCH_MARIADB118_BIN` names another),
/// with the auth_mysql_sha2 plugin (MySQL's caching_sha2_password), which bookworm's MariaDB
/// 10.11 does not have.
fn mariadb118_bin(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("IXBENCH_MARIADB118_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mariadb118/usr/bin"));
    let plugin = dir.join("../lib/mysql/plugin/auth_mysql_sha2.so");
    if dir.join("mariadb-install-db").is_file()
        && dir.join("../sbin/mariadbd").is_file()
        && plugin.is_file()
    {
        Some(dir)
    } else {
        common::skip(
            test,
            &format!(
                "no MariaDB 11.8 with auth_mysql_sha2.so in {} (.ci/mariadb118.sh installs it, \
                 or set IXBENCH_MARIADB118_BIN)",
                dir.display()
            ),
        )
    }
}

/// caching_sha2_password against a real server: MariaDB 11.8's auth_mysql_sha2 plugin, with
/// TLS. The server keeps a hash of each password that logged in (its cache), so the first log-in
/// of an account takes the full path (the password itself: as it is over TLS or the Unix socket,
/// encrypted with the server's RSA public key over clear TCP) and the next ones the fast path (a
/// scramble only). `target.transport.auth` records which path ixbench's client took.
#[test]
fn mariadb_caching_sha2_password() {
    let test = "mariadb_caching_sha2_password";
    let Some(bin) = mariadb118_bin(test) else {
        return;
    };
    let Some(certs) = make_certs(test) else {
        return;
    };
    let (cert, key, ca) = (
        certs.s("server.crt"),
        certs.s("server.key"),
        certs.s("ca.crt"),
    );
    let plugins = bin.join("../lib/mysql/plugin").display().to_string();
    let Some(s) = common::start_server_from(
        test,
        ServerKind::Mariadb,
        false,
        &[
            ("ssl_cert", &cert),
            ("ssl_key", &key),
            ("ssl_ca", &ca),
            ("plugin_dir", &plugins),
            ("plugin_load_add", "auth_mysql_sha2"),
        ],
        Some(&bin),
    ) else {
        return;
    };
    let port = s.port;
    let root_pw = s.password().to_string();
    let url = |user: &str, host: &str, params: &str| {
        format!("mysql://{user}@{host}:{port}/ixbench?{params}")
    };
    let root = url(
        &format!("root:{}", dbms::percent_encode(&root_pw)),
        "localhost",
        "ssl-mode=REQUIRED",
    );
    let m = dbms::open(
        &TargetSpec::parse(&root).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = m.connect().unwrap();
    let version = c.query_rows("SELECT VERSION()").unwrap();
    eprintln!("server: {:?}", version[0][0]);
    // One account per first log-in: the cache is per account and server.
    let users = ["tls_u", "rsa_u", "sock_u", "run_u"];
    for u in users {
        let sql = format!(
            "CREATE USER {u}@'%' IDENTIFIED VIA caching_sha2_password USING PASSWORD('{u}-Secret1')"
        );
        c.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
        c.execute(&format!("GRANT ALL ON ixbench.* TO {u}@'%'"))
            .unwrap();
    }
    let rows = c
        .query_rows("SELECT plugin FROM mysql.user WHERE user = 'tls_u'")
        .unwrap();
    assert_eq!(rows[0][0].as_deref(), Some("caching_sha2_password"));
    drop(c);
    let secrets: Vec<String> = users
        .iter()
        .map(|u| format!("{u}-Secret1"))
        .chain([root_pw.clone()])
        .collect();
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let sha2 = |path: &str| format!("caching_sha2_password ({path})");
    let verified = format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}");

    // (a) Over TLS: the full path (the password as it is, inside TLS), then the fast path.
    let tls_u = url("tls_u:tls_u-Secret1", "localhost", &verified);
    let t = transport(&tls_u).unwrap();
    assert_tls(
        &t,
        "chain and host name",
        &sha2("full path, password over TLS or socket"),
    );
    // MariaDB's plugin keeps no cache (its source: "request full auth unconditionally"): the
    // second log-in takes the full path again, and ixbench's client follows it.
    let t = transport(&tls_u).unwrap();
    assert_tls(
        &t,
        "chain and host name",
        &sha2("full path, password over TLS or socket"),
    );

    // (b) Clear TCP: the full path encrypts the password with the server's RSA public key
    // (which the plugin made at start-up, caching_sha2_password_auto_generate_rsa_keys); then
    // the fast path, which needs no TLS.
    let rsa_u = url("rsa_u:rsa_u-Secret1", "127.0.0.1", "ssl-mode=DISABLED");
    let t = transport(&rsa_u).unwrap();
    assert!(!t.tls && t.socket == "tcp", "{t:?}");
    assert_eq!(t.auth, sha2("full path, RSA"));
    let t = transport(&rsa_u).unwrap();
    assert!(!t.tls, "{t:?}");
    assert_eq!(t.auth, sha2("full path, RSA"));

    // A password too long for the RSA key (OAEP carries 2048/8 - 42 bytes, NUL included): in
    // clear ixbench refuses before sending it; over TLS it goes as it is.
    let long_pw = format!("long-Secret-{}", "x".repeat(250));
    c_exec(
        &root,
        &format!(
            "CREATE USER long_u@'%' IDENTIFIED VIA caching_sha2_password \
             USING PASSWORD('{long_pw}')"
        ),
    );
    c_exec(&root, "GRANT SELECT ON ixbench.* TO long_u@'%'");
    let mut with_long = secrets.clone();
    with_long.push(&long_pw);
    refused(
        &url(
            &format!("long_u:{long_pw}"),
            "127.0.0.1",
            "ssl-mode=DISABLED",
        ),
        "the password was not sent",
        &with_long,
    );
    let t = transport(&url(&format!("long_u:{long_pw}"), "localhost", &verified)).unwrap();
    assert_tls(
        &t,
        "chain and host name",
        &sha2("full path, password over TLS or socket"),
    );

    // The Unix socket: the password as it is (the socket is private), no TLS.
    if let Some(sock) = &s.socket {
        let sock = dbms::percent_encode(&sock.display().to_string());
        let sock_u = format!("mysql://sock_u:sock_u-Secret1@localhost/ixbench?socket={sock}");
        let t = transport(&sock_u).unwrap();
        assert!(!t.tls && t.socket == "unix", "{t:?}");
        assert_eq!(t.auth, sha2("full path, password over TLS or socket"));
        let t = transport(&sock_u).unwrap();
        assert_eq!(t.auth, sha2("full path, password over TLS or socket"));
    }

    // (c) A wrong password, on each path, refused by the server in one line that names no
    // password: over TLS (full path), in clear (RSA), and for a cached account (the fast
    // path's scramble does not match, so the server asks for the full path).
    for (user, host, params) in [
        ("run_u", "localhost", verified.as_str()),
        ("run_u", "127.0.0.1", "ssl-mode=DISABLED"),
        ("tls_u", "localhost", verified.as_str()),
        ("rsa_u", "127.0.0.1", "ssl-mode=DISABLED"),
    ] {
        let mut all = secrets.clone();
        all.push("wrong-Secret9");
        refused(
            &url(&format!("{user}:wrong-Secret9"), host, params),
            "ERROR 1045",
            &all,
        );
    }

    // End to end: `ixbench run --size smoke` as a caching_sha2_password account over verified
    // TLS. Its first connection takes the full path (run_u has not logged in yet).
    smoke_over_tls(
        "run",
        &url("run_u:run_u-Secret1", "localhost", &verified),
        "run_u-Secret1",
        &sha2("full path, password over TLS or socket"),
    );
    // And in clear TCP: the RSA exchange, for every connection of the run.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = ixbench(&[
        "run",
        "--size",
        "smoke",
        "--steps",
        RUN_STEPS,
        "--target",
        &url("run_u:run_u-Secret1", "127.0.0.1", "ssl-mode=DISABLED"),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(!stdout.contains("run_u-Secret1") && !stderr.contains("run_u-Secret1"));
    assert!(o.status.success(), "{stderr}\n{stdout}");
    let run = run_json(&out);
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    let t = &run["target"]["transport"];
    assert_eq!(t["tls"], false, "{t}");
    assert_eq!(t["auth"], sha2("full path, RSA"), "{t}");
}

/// Run one statement as the administrator of `root_url`.
fn c_exec(root_url: &str, sql: &str) {
    let m = dbms::open(
        &TargetSpec::parse(root_url).unwrap(),
        &TargetOptions::default(),
    )
    .unwrap();
    let mut c = m.connect().unwrap();
    c.execute(sql).unwrap_or_else(|e| panic!("{e:#}"));
}

/// caching_sha2_password's full path over clear TCP on a server without RSA keys
/// (`caching_sha2_password_auto_generate_rsa_keys=OFF`, no key files): the server refuses,
/// and ixbench says so in one line without the password; over TLS the log-in works.
#[test]
fn mariadb_caching_sha2_password_without_rsa_keys() {
    let test = "mariadb_caching_sha2_password_without_rsa_keys";
    let Some(bin) = mariadb118_bin(test) else {
        return;
    };
    let Some(certs) = make_certs(test) else {
        return;
    };
    let (cert, key, ca) = (
        certs.s("server.crt"),
        certs.s("server.key"),
        certs.s("ca.crt"),
    );
    let plugins = bin.join("../lib/mysql/plugin").display().to_string();
    let Some(s) = common::start_server_from(
        test,
        ServerKind::Mariadb,
        false,
        &[
            ("ssl_cert", &cert),
            ("ssl_key", &key),
            ("ssl_ca", &ca),
            ("plugin_dir", &plugins),
            ("plugin_load_add", "auth_mysql_sha2"),
            ("caching_sha2_password_auto_generate_rsa_keys", "OFF"),
        ],
        Some(&bin),
    ) else {
        return;
    };
    assert!(!s.datadir.join("public_key.pem").exists());
    let port = s.port;
    let root_pw = s.password().to_string();
    let root = format!(
        "mysql://root:{}@localhost:{port}/ixbench?ssl-mode=REQUIRED",
        dbms::percent_encode(&root_pw)
    );
    c_exec(
        &root,
        "CREATE USER nokey_u@'%' IDENTIFIED VIA caching_sha2_password \
         USING PASSWORD('nokey-Secret1')",
    );
    c_exec(&root, "GRANT SELECT ON ixbench.* TO nokey_u@'%'");
    let secrets = ["nokey-Secret1", root_pw.as_str()];
    let url =
        |params: &str| format!("mysql://nokey_u:nokey-Secret1@localhost:{port}/ixbench?{params}");
    let e = refused(&url("ssl-mode=DISABLED"), "RSA public key", &secrets);
    assert!(
        e.contains("ERROR 1045") && e.contains("ssl-mode=REQUIRED"),
        "{e}"
    );
    let o = ixbench(&[
        "run",
        "--size",
        "smoke",
        "--target",
        &url("ssl-mode=DISABLED"),
        "--out",
        s.datadir.parent().unwrap().join("out").to_str().unwrap(),
    ]);
    let e = common::assert_one_line_error(&o);
    assert!(!e.contains("nokey-Secret1") && !e.contains(&root_pw), "{e}");
    eprintln!("ixbench run: {e}");
    let t = transport(&url(&format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"))).unwrap();
    assert_tls(
        &t,
        "chain and host name",
        "caching_sha2_password (full path, password over TLS or socket)",
    );
}

/// A cluster of `kind` started with `--server-tls`, in a new directory under `t` (the caller
/// holds a slot of [`common::CLUSTER`]).
fn start_tls_cluster(
    t: &Path,
    kind: ixbench::server::ClusterKind,
    tls: &Path,
) -> ixbench::server::RunningCluster {
    ixbench::server::start_cluster(
        kind,
        &ixbench::server::ClusterOptions {
            dir: t.join("cluster"),
            size: 2,
            settings: Vec::new(),
            tls: Some(ixbench::server::ServerTls::from_dir(tls).unwrap()),
        },
    )
    .unwrap_or_else(|e| panic!("starting a {} cluster with TLS: {e:#}", kind.name()))
}

/// A throwaway cluster of `kind` started with `--server-tls` from `tls` in `t`, each node
/// checked: its URL connects over verified TLS logging in with `auth`, and a clear connection
/// (`clear(password, port)`) is refused with `refusal` in one line that prints no password.
fn tls_cluster_checked(
    t: &Path,
    kind: ixbench::server::ClusterKind,
    tls: &Path,
    auth: &str,
    clear: impl Fn(&str, u16) -> String,
    refusal: &str,
) -> ixbench::server::RunningCluster {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cluster = start_tls_cluster(t, kind, tls);
    let mut secrets: Vec<String> = Vec::new();
    for n in cluster.nodes() {
        let s = &n.server;
        secrets.push(s.password().to_string());
        // The node's URL verifies it; a clear connection is refused.
        let tr = transport(&s.url_with_password()).unwrap_or_else(|e| panic!("{}: {e}", n.role));
        assert_tls(&tr, "chain and host name", auth);
        let url = clear(&dbms::percent_encode(s.password()), s.port);
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        refused(&url, refusal, &secrets);
    }
    cluster
}

/// `ixbench run --target TARGET --server-tls DIR --size smoke`: ok, the results' transport is
/// TLS verified; then with a root that did not sign the nodes' certificate: refused in one
/// line, nothing left running.
fn cluster_smoke_over_tls(target: &str, good: &Path, wrong: &Path, auth: &str) {
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = t.path().join("r");
    let o = {
        let _one = common::shared_cluster();
        ixbench(&[
            "run",
            "--target",
            target,
            "--server-tls",
            good.to_str().unwrap(),
            "--size",
            "smoke",
            "--steps",
            RUN_STEPS,
            "--rm",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{target}: {stderr}\n{stdout}");
    let run = run_json(&out);
    common::assert_all_ok(&run);
    let tr = &run["target"]["transport"];
    assert_eq!(tr["tls"], true, "{target}: {tr}");
    assert_eq!(tr["tls_verified"], "chain and host name", "{target}: {tr}");
    assert_eq!(tr["auth"], auth, "{target}: {tr}");
    assert!(
        !out.join(format!("{target}-cluster")).exists(),
        "cluster directory left behind"
    );

    let out = t.path().join("wrong");
    let o = {
        let _one = common::shared_cluster();
        ixbench(&[
            "run",
            "--target",
            target,
            "--server-tls",
            wrong.to_str().unwrap(),
            "--size",
            "smoke",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let e = common::assert_one_line_error(&o);
    assert!(e.contains("not signed by a trusted root"), "{e}");
    // refused before any node starts
    assert!(e.contains("nothing started"), "{e}");
}

#[test]
fn pg_shards_over_tls() {
    let test = "pg_shards_over_tls";
    // Released before cluster_smoke_over_tls, which takes it for each of its runs.
    let one = common::shared_cluster();
    if let Err(e) = ixbench::server::pg_shards::check_installed() {
        return common::skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let Some(certs) = make_certs(test) else {
        return;
    };
    let good = server_tls_dir(&certs, "good", "ca.crt");
    let wrong = server_tls_dir(&certs, "wrong", "other-ca.crt");
    let t = tempfile::tempdir().unwrap();
    let cluster = tls_cluster_checked(
        t.path(),
        ixbench::server::ClusterKind::PgShards,
        &good,
        "SCRAM-SHA-256-PLUS",
        |pw, port| format!("postgres://postgres:{pw}@127.0.0.1:{port}/ixbench?sslmode=disable"),
        "only over TLS",
    );
    // postgres_fdw's connections to the shards: over TLS (the shards take nothing else), as
    // each shard's pg_stat_ssl says of the session the coordinator opened there.
    ixbench::server::pg_shards::create_sharded_table(
        &cluster,
        "t",
        "id bigint NOT NULL, v int",
        "PRIMARY KEY (id)",
        "id",
    )
    .unwrap();
    let mut coord =
        ixbench::server::pg_shards::connect(cluster.node("coordinator").unwrap()).unwrap();
    coord
        .execute("INSERT INTO t SELECT g, g FROM generate_series(1, 100) g")
        .unwrap();
    assert_eq!(
        coord.value("SELECT count(*) FROM t").unwrap().as_deref(),
        Some("100")
    );
    for s in cluster.shards() {
        let mut c = ixbench::server::pg_shards::connect(s).unwrap();
        let ssl = c
            .rows(&format!(
                "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
                 WHERE a.usename = '{}'",
                ixbench::server::pg_shards::FDW_USER
            ))
            .unwrap();
        assert!(!ssl.is_empty(), "no postgres_fdw session on the shard");
        assert!(ssl.iter().all(|r| r[0].as_deref() == Some("t")), "{ssl:?}");
    }
    drop(coord);
    cluster.stop_and_remove().unwrap();
    drop(one);

    cluster_smoke_over_tls("pg-shards", &good, &wrong, "SCRAM-SHA-256-PLUS");
}

#[test]
fn spider_over_tls() {
    let test = "spider_over_tls";
    // Released before cluster_smoke_over_tls, which takes it for each of its runs.
    let one = common::shared_cluster();
    if let Err(e) = ixbench::server::spider::check_installed() {
        return common::skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let Some(certs) = make_certs(test) else {
        return;
    };
    let good = server_tls_dir(&certs, "good", "ca.crt");
    let wrong = server_tls_dir(&certs, "wrong", "other-ca.crt");
    let t = tempfile::tempdir().unwrap();
    let cluster = tls_cluster_checked(
        t.path(),
        ixbench::server::ClusterKind::Spider,
        &good,
        "mysql_native_password",
        |pw, port| format!("mysql://root:{pw}@127.0.0.1:{port}/ixbench?ssl-mode=DISABLED"),
        "TLS",
    );
    // Spider's connections to the shards: over TLS with the link parameters (the rows land
    // and add up), refused without them (the shards take no clear connection).
    ixbench::server::spider::create_sharded_table(
        &cluster,
        "t",
        "id BIGINT PRIMARY KEY, v INT",
        "id",
    )
    .unwrap();
    let head = cluster.node("head").unwrap();
    let mut c = ixbench::server::spider::admin(head).unwrap();
    c.execute("INSERT INTO t SELECT seq, seq FROM seq_1_to_100")
        .unwrap();
    assert_eq!(
        c.value("SELECT count(*) FROM t").unwrap().as_deref(),
        Some("100")
    );
    let (_, clear_head) = ixbench::server::spider::sharded_table_sql(
        "t",
        "id BIGINT PRIMARY KEY, v INT",
        "id",
        2,
        "",
    );
    c.execute(&clear_head.replacen("CREATE TABLE t ", "CREATE TABLE t_clear ", 1))
        .unwrap();
    let e = format!(
        "{:#}",
        c.execute("SELECT count(*) FROM t_clear").unwrap_err()
    );
    assert!(
        e.contains("Unable to connect to foreign data source"),
        "{e}"
    );
    drop(c);
    cluster.stop_and_remove().unwrap();
    drop(one);

    cluster_smoke_over_tls("spider", &good, &wrong, "mysql_native_password");
}

/// Galera with `--server-tls`: the control, watch, failover and per-node status connections
/// (every node refuses clear TCP) all go over verified TLS; `run --size smoke` passes on 3
/// nodes taking writes; a wrong root is refused in one line as soon as the first node is
/// checked.
#[test]
fn galera_over_tls() {
    let test = "galera_over_tls";
    if let Err(e) = ixbench::server::galera::check_installed() {
        return common::skip(test, &format!("{e:#}")).unwrap_or(());
    }
    let Some(certs) = make_certs(test) else {
        return;
    };
    let good = server_tls_dir(&certs, "good", "ca.crt");
    let wrong = server_tls_dir(&certs, "wrong", "other-ca.crt");
    cluster_smoke_over_tls("galera", &good, &wrong, "mysql_native_password");
}

//! Where a PostgreSQL target's connection settings come from, resolved in one place the way
//! libpq resolves them (fe-connect.c: `conninfo_parse` / `conninfo_uri_parse`,
//! `conninfo_add_defaults`, `parseServiceInfo`, `passwordFromFile`), so a target that works
//! with psql works with ixbench:
//!
//! 1. the target as given: a URL (`postgres://user:pw@host:port/db?key=value`) or a libpq
//!    `key=value` connection string (`host=h port=5432 dbname=d sslmode=require`, values quoted
//!    `'...'` with `\'` and `\\`);
//! 2. the connection service file, for the service named by `service=` in the target, else by
//!    `PGSERVICE`: the section `[name]` of `PGSERVICEFILE` (else `~/.pg_service.conf`), else of
//!    `$PGSYSCONFDIR/pg_service.conf` (else `/etc/postgresql-common/pg_service.conf`, Debian's
//!    libpq); a service named but found nowhere is an error, as in libpq;
//! 3. the environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, `PGSSLMODE`,
//!    ... see [`KEYWORDS`]);
//! 4. libpq's defaults (host: the socket directory `/var/run/postgresql` when it exists, else
//!    `localhost`; port 5432; user: the OS user; database: the user's name);
//! 5. a password still missing (or empty): the first matching line of the password file
//!    (`passfile=`, else `PGPASSFILE`, else `~/.pgpass`), ignored with a warning when the file
//!    is group- or world-accessible or not a plain file.
//!
//! Each setting is set by the first of these that has it; none overrides a value already set.
//! One exception, ixbench's own: a target naming the administrator (`postgres`) of a
//! throwaway server ixbench started, at its loopback address and port (what `--target
//! postgres` connects with) takes nothing from 2., 3. or 5.: the environment cannot redirect
//! or change ixbench's connections to its own server.
//!
//! The resolved settings say where each came from ([`Source`]); the results record where the
//! password came from, never the password.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// libpq's socket directory on Debian (`DEFAULT_PGSOCKET_DIR`).
pub const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// libpq's system configuration directory on Debian, when `PGSYSCONFDIR` is not set.
pub const DEFAULT_SYSCONFDIR: &str = "/etc/postgresql-common";

/// What ixbench does with a libpq connection keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Used by ixbench's client.
    Used,
    /// TLS: handed to [`super::pgwire::tls_from_params`], which refuses what it cannot do.
    Tls,
    /// Accepted and without effect (TCP keep-alive tuning, a name ixbench replaces).
    Ignored,
    /// Refused unless it has its default value (named here): ixbench cannot do what it asks.
    OnlyDefault(&'static str),
}

/// libpq's connection keywords (PostgreSQL 17), each with its environment variable and what
/// ixbench does with it. A keyword not here is refused as libpq refuses it.
pub const KEYWORDS: &[(&str, Option<&str>, Use)] = &[
    ("host", Some("PGHOST"), Use::Used),
    ("hostaddr", Some("PGHOSTADDR"), Use::OnlyDefault("")),
    ("port", Some("PGPORT"), Use::Used),
    ("dbname", Some("PGDATABASE"), Use::Used),
    ("user", Some("PGUSER"), Use::Used),
    ("password", Some("PGPASSWORD"), Use::Used),
    ("passfile", Some("PGPASSFILE"), Use::Used),
    ("service", Some("PGSERVICE"), Use::Used),
    ("options", Some("PGOPTIONS"), Use::Used),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT"), Use::Used),
    ("channel_binding", Some("PGCHANNELBINDING"), Use::Used),
    ("application_name", Some("PGAPPNAME"), Use::Ignored),
    ("fallback_application_name", None, Use::Ignored),
    ("sslmode", Some("PGSSLMODE"), Use::Tls),
    ("sslrootcert", Some("PGSSLROOTCERT"), Use::Tls),
    ("sslcert", Some("PGSSLCERT"), Use::Tls),
    ("sslkey", Some("PGSSLKEY"), Use::Tls),
    ("sslsni", Some("PGSSLSNI"), Use::Tls),
    ("sslnegotiation", Some("PGSSLNEGOTIATION"), Use::Tls),
    ("sslpassword", None, Use::Tls),
    ("sslcrl", Some("PGSSLCRL"), Use::Tls),
    ("sslcrldir", Some("PGSSLCRLDIR"), Use::Tls),
    (
        "ssl_min_protocol_version",
        Some("PGSSLMINPROTOCOLVERSION"),
        Use::Tls,
    ),
    (
        "ssl_max_protocol_version",
        Some("PGSSLMAXPROTOCOLVERSION"),
        Use::Tls,
    ),
    ("requiressl", None, Use::Tls),
    (
        "sslcompression",
        Some("PGSSLCOMPRESSION"),
        Use::OnlyDefault("0"),
    ),
    (
        "sslcertmode",
        Some("PGSSLCERTMODE"),
        Use::OnlyDefault("allow"),
    ),
    ("keepalives", None, Use::Ignored),
    ("keepalives_idle", None, Use::Ignored),
    ("keepalives_interval", None, Use::Ignored),
    ("keepalives_count", None, Use::Ignored),
    ("tcp_user_timeout", None, Use::Ignored),
    (
        "target_session_attrs",
        Some("PGTARGETSESSIONATTRS"),
        Use::OnlyDefault("any"),
    ),
    (
        "load_balance_hosts",
        Some("PGLOADBALANCEHOSTS"),
        Use::OnlyDefault("disable"),
    ),
    ("gssencmode", Some("PGGSSENCMODE"), Use::Ignored),
    ("krbsrvname", Some("PGKRBSRVNAME"), Use::Ignored),
    ("gsslib", Some("PGGSSLIB"), Use::Ignored),
    ("gssdelegation", Some("PGGSSDELEGATION"), Use::Ignored),
    ("require_auth", Some("PGREQUIREAUTH"), Use::OnlyDefault("")),
    ("requirepeer", Some("PGREQUIREPEER"), Use::OnlyDefault("")),
    (
        "client_encoding",
        Some("PGCLIENTENCODING"),
        Use::OnlyDefault("UTF8"),
    ),
    ("replication", None, Use::OnlyDefault("")),
];

fn keyword(k: &str) -> Option<&'static (&'static str, Option<&'static str>, Use)> {
    KEYWORDS.iter().find(|(name, _, _)| *name == k)
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The target as given on the command line.
    Target,
    /// The connection service file: the service's name and the file (as shown, `~/...`).
    Service(String, String),
    /// An environment variable.
    Env(&'static str),
    /// libpq's default.
    Default,
    /// The password file (as shown, `~/.pgpass`).
    PassFile(String),
    /// The generated password of a throwaway server ixbench started.
    OwnServer,
}

impl Source {
    /// In words, for the results (`password: from ~/.pgpass`).
    pub fn describe(&self) -> String {
        match self {
            Source::Target => "the target given".into(),
            Source::Service(name, file) => format!("service {name} in {file}"),
            Source::Env(var) => var.to_string(),
            Source::Default => "the default".into(),
            Source::PassFile(file) => file.clone(),
            Source::OwnServer => "the throwaway server ixbench started".into(),
        }
    }
}

/// A path with the home directory written `~` (as users name their dot files).
fn display_path(p: &Path, env: &Env) -> String {
    if let Some(home) = env.home() {
        if let Ok(rest) = p.strip_prefix(&home) {
            return format!("~/{}", rest.display());
        }
    }
    p.display().to_string()
}

/// The environment a resolution reads: a snapshot of the process's (tests give their own, so
/// they do not depend on or change the process's environment).
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl Env {
    /// The process's environment: libpq's variables, `HOME` and `USER`.
    pub fn from_process() -> Env {
        let vars = std::env::vars()
            .filter(|(k, _)| k.starts_with("PG") || k == "HOME" || k == "USER")
            .collect();
        Env { vars }
    }

    /// An environment of exactly these variables.
    pub fn of(pairs: &[(&str, &str)]) -> Env {
        Env {
            vars: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// A variable's value; an empty one counts as unset.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.vars
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn home(&self) -> Option<PathBuf> {
        self.get("HOME").map(PathBuf::from)
    }
}

/// A PostgreSQL target's settings once resolved: each keyword's value and where it came from,
/// and what the resolution has to say (a password file ignored).
#[derive(Clone, Default)]
pub struct ConnInfo {
    values: BTreeMap<&'static str, (String, Source)>,
    /// Warnings to show the user (libpq prints them to stderr), e.g. a password file ignored
    /// for its permissions.
    pub warnings: Vec<String>,
    /// The target is the administrator of a throwaway server ixbench started (see the module
    /// documentation): nothing was taken from a service file, the environment or a password
    /// file.
    pub own_server: bool,
}

impl std::fmt::Debug for ConnInfo {
    /// Every setting but the password's value.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for (k, (v, s)) in &self.values {
            if *k == "password" {
                m.entry(k, &format!("*** from {}", s.describe()));
            } else {
                m.entry(k, &format!("{v} from {}", s.describe()));
            }
        }
        m.finish()
    }
}

impl ConnInfo {
    /// A resolved value.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.values.get(k).map(|(v, _)| v.as_str())
    }

    /// Where a resolved value came from.
    pub fn source(&self, k: &str) -> Option<&Source> {
        self.values.get(k).map(|(_, s)| s)
    }

    /// The password (never print it).
    pub fn password(&self) -> Option<&str> {
        self.get("password")
    }

    /// For the results: where the password came from (`password: from ~/.pgpass`), or that
    /// none was given.
    pub fn password_note(&self) -> String {
        match self.source("password") {
            Some(s) => format!("password: from {}", s.describe()),
            None => "password: none given".into(),
        }
    }

    fn set(&mut self, k: &'static str, v: String, s: Source) {
        self.values.entry(k).or_insert((v, s));
    }

    fn has(&self, k: &str) -> bool {
        self.values.contains_key(k)
    }
}

/// Whether `s` is a libpq `key=value` connection string rather than a URL or a target name:
/// its first word is `KEYWORD=` for one of libpq's keywords.
pub fn is_keyvalue(s: &str) -> bool {
    let s = s.trim_start();
    match s.find(|c: char| c == '=' || c.is_whitespace()) {
        Some(i) => keyword(&s[..i]).is_some() && s[i..].trim_start().starts_with('='),
        None => false,
    }
}

/// Parse a libpq `key=value` connection string as `conninfo_parse` does: pairs separated by
/// whitespace, spaces allowed around `=`, a value either quoted (`'...'`, where `\'` is a quote
/// and `\\` a backslash) or running to the next whitespace (where `\` escapes the next
/// character). Unknown keywords are refused. Errors never hold a value.
pub fn parse_keyvalue(s: &str) -> Result<Vec<(&'static str, String)>, String> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = it.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            it.next();
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.next() != Some('=') {
            return Err(format!(
                "missing \"=\" after \"{key}\" in connection info string"
            ));
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        let mut value = String::new();
        if it.peek() == Some(&'\'') {
            it.next();
            loop {
                match it.next() {
                    None => {
                        return Err("unterminated quoted string in connection info string".into())
                    }
                    Some('\\') => match it.next() {
                        Some(c) => value.push(c),
                        None => {
                            return Err(
                                "unterminated quoted string in connection info string".into()
                            )
                        }
                    },
                    Some('\'') => break,
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(&c) = it.peek() {
                if c.is_whitespace() {
                    break;
                }
                it.next();
                if c == '\\' {
                    if let Some(n) = it.next() {
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        let k = keyword(&key)
            .map(|(k, _, _)| *k)
            .ok_or_else(|| format!("invalid connection option \"{key}\""))?;
        // A keyword given twice: the last wins, as in libpq.
        out.retain(|(q, _)| *q != k);
        out.push((k, value));
    }
    Ok(out)
}

/// Parse a `postgres://` / `postgresql://` URL as `conninfo_uri_parse` does:
/// `postgresql://[user[:password]@][host[:port][,host[:port]...]][/dbname][?key=value&...]`,
/// every part percent-decoded; IPv6 addresses in `[...]`; several hosts join into `host=a,b`
/// and `port=1,2`; `?ssl=true` means `sslmode=require`. The user part is split as
/// [`super::split_url`] says (a password may hold unencoded `@ : / ? #`). Errors never hold the
/// password.
pub fn parse_url(url: &str) -> Result<Vec<(&'static str, String)>, String> {
    let parts = super::split_url(url).ok_or("expected postgres://USER@HOST:PORT/DB")?;
    if parts.scheme != "postgres" && parts.scheme != "postgresql" {
        return Err("the scheme must be postgres:// or postgresql://".into());
    }
    let dec = |s: &str, what: &str| -> Result<String, String> {
        super::percent_decode(s, what).map_err(|e| e.to_string())
    };
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let put = |out: &mut Vec<(&'static str, String)>, k: &'static str, v: String| {
        out.retain(|(q, _)| *q != k);
        out.push((k, v));
    };
    if let Some(u) = parts.user.filter(|u| !u.is_empty()) {
        put(&mut out, "user", dec(u, "user")?);
    }
    if let Some(p) = parts.password {
        put(&mut out, "password", dec(p, "password")?);
    }
    let (before_query, query) = match parts.rest.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (parts.rest, None),
    };
    let (hostspec, db) = match before_query.split_once('/') {
        Some((h, d)) => (h, Some(d)),
        None => (before_query, None),
    };
    if !hostspec.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for one in hostspec.split(',') {
            let (h, p) = if let Some(v6) = one.strip_prefix('[') {
                let (h, after) = v6
                    .split_once(']')
                    .ok_or("missing \"]\" in IPv6 host address")?;
                match after {
                    "" => (h, ""),
                    a => (
                        h,
                        a.strip_prefix(':')
                            .ok_or("unexpected character after IPv6 host address")?,
                    ),
                }
            } else {
                one.rsplit_once(':').unwrap_or((one, ""))
            };
            hosts.push(dec(h, "host")?);
            ports.push(dec(p, "port")?);
        }
        if hosts.iter().any(|h| !h.is_empty()) {
            put(&mut out, "host", hosts.join(","));
        }
        if ports.iter().any(|p| !p.is_empty()) {
            put(&mut out, "port", ports.join(","));
        }
    }
    if let Some(d) = db.filter(|d| !d.is_empty()) {
        put(&mut out, "dbname", dec(d, "database name")?);
    }
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            format!(
                "missing key/value separator \"=\" in URI query parameter: \"{}\"",
                pair.split('=').next().unwrap_or("")
            )
        })?;
        let k = dec(k, "parameter name")?;
        let what = if k == "password" {
            "password"
        } else {
            "parameter"
        };
        let v = dec(v, what)?;
        let (k, v) = if k == "ssl" && v == "true" {
            ("sslmode".to_string(), "require".to_string())
        } else {
            (k, v)
        };
        let kw = keyword(&k)
            .map(|(k, _, _)| *k)
            .ok_or_else(|| format!("invalid URI query parameter: \"{k}\""))?;
        put(&mut out, kw, v);
    }
    Ok(out)
}

/// The settings a target string gives: a URL or a `key=value` string.
pub fn parse_target(s: &str) -> Result<Vec<(&'static str, String)>, String> {
    if s.contains("://") {
        parse_url(s)
    } else {
        parse_keyvalue(s)
    }
}

/// The settings of service `name` in a service file's `text` (libpq's `parseServiceFile`):
/// `None` when the file has no `[name]` section. Lines are `key=value` (spaces around both
/// trimmed), `#` starts a comment line, a section runs to the next `[...]`. A keyword libpq
/// does not know, a line without `=`, or `service=` inside a service is an error naming the
/// line (not its value).
pub fn parse_service_file(
    text: &str,
    file: &Path,
    name: &str,
) -> Result<Option<Vec<(&'static str, String)>>, String> {
    let mut found = false;
    let mut out = Vec::new();
    for (i, raw) in crate::input::without_bom(text).lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            if found {
                break;
            }
            found = section.strip_suffix(']').map(str::trim) == Some(name);
            continue;
        }
        if !found {
            continue;
        }
        let syntax = || {
            format!(
                "syntax error in service file \"{}\", line {}",
                file.display(),
                i + 1
            )
        };
        let (k, v) = line.split_once('=').ok_or_else(syntax)?;
        let k = k.trim();
        if k == "service" {
            return Err(format!(
                "nested service specifications not supported in service file \"{}\", line {}",
                file.display(),
                i + 1
            ));
        }
        if k == "ldap" {
            continue;
        }
        let kw = keyword(k).map(|(k, _, _)| *k).ok_or_else(syntax)?;
        // The first setting of a keyword in the section wins, as in libpq.
        if !out.iter().any(|(q, _)| *q == kw) {
            out.push((kw, v.trim().to_string()));
        }
    }
    Ok(found.then_some(out))
}

/// One field of a password file line matches `value` (libpq's `pwdfMatchesString`): `*` matches
/// anything, `\` escapes the next character. Returns the rest of the line after the field's
/// `:`.
fn pgpass_field<'a>(line: &'a str, value: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut want = value.chars();
    let mut it = line.char_indices();
    while let Some((i, c)) = it.next() {
        let c = match c {
            ':' => {
                return want.next().is_none().then(|| &line[i + 1..]);
            }
            '\\' => match it.next() {
                Some((_, n)) => n,
                None => return None,
            },
            c => c,
        };
        if want.next() != Some(c) {
            return None;
        }
    }
    None
}

/// The password of the first line of a password file's `text` that matches (libpq's
/// `passwordFromFile`): `hostname:port:database:username:password`, `*` matching anything,
/// `\` escaping `:` and `\`, `#` lines skipped. `host` is the host as connected to: empty or
/// libpq's default socket directory match `localhost`.
pub fn pgpass_lookup(text: &str, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    if db.is_empty() || user.is_empty() {
        return None;
    }
    let host = if host.is_empty() || host == DEFAULT_SOCKET_DIR {
        "localhost"
    } else {
        host
    };
    let port = if port.is_empty() { "5432" } else { port };
    for line in crate::input::without_bom(text).lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let Some(rest) = pgpass_field(line, host)
            .and_then(|r| pgpass_field(r, port))
            .and_then(|r| pgpass_field(r, db))
            .and_then(|r| pgpass_field(r, user))
        else {
            continue;
        };
        // The password runs to the end, or to an unescaped `:`.
        let mut pw = String::new();
        let mut it = rest.chars();
        while let Some(c) = it.next() {
            match c {
                ':' => break,
                '\\' => match it.next() {
                    Some(n) => pw.push(n),
                    None => pw.push('\\'),
                },
                c => pw.push(c),
            }
        }
        return Some(pw);
    }
    None
}

/// Read a password file as libpq does: missing is no password; not a plain file, or any
/// group or world permission, is a warning and no password.
fn read_pgpass(path: &Path) -> Result<Option<String>, String> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Err(format!(
            "password file \"{}\" is not a plain file",
            path.display()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "password file \"{}\" has group or world access; permissions should be u=rw \
             (0600) or less: it is ignored",
            path.display()
        ));
    }
    Ok(std::fs::read_to_string(path).ok())
}

/// The OS user's name (libpq's `pg_fe_getauthname`): `USER`, else the password database.
fn os_user(env: &Env) -> Option<String> {
    env.get("USER").map(str::to_string).or_else(|| {
        // The effective uid's name through the C library (NSS: /etc/passwd, LDAP, ...).
        let user = nix::unistd::User::from_uid(nix::unistd::geteuid()).ok()??;
        Some(user.name)
    })
}

/// Whether `given` names the administrator of a throwaway server ixbench started, at its own
/// address: user `postgres`, one loopback host (or the server's socket directory) and the
/// port given, and ixbench's registry knows a server there. Returns its password.
fn own_server(given: &[(&'static str, String)]) -> Option<String> {
    let get = |k: &str| given.iter().find(|(q, _)| *q == k).map(|(_, v)| v.as_str());
    if get("user") != Some("postgres") {
        return None;
    }
    let host = get("host")?;
    let port: u16 = match get("port") {
        Some(p) => p.parse().ok()?,
        None if host.starts_with('/') => 5432,
        None => return None,
    };
    if host.starts_with('/') {
        return super::throwaway::password_for_socket_dir(Path::new(host))
            .or_else(|| super::throwaway::password_for_port(port));
    }
    matches!(host, "127.0.0.1" | "localhost" | "::1")
        .then(|| super::throwaway::password_for_port(port))
        .flatten()
}

/// Resolve a target string (URL or `key=value`) in `env`, as the module documentation says.
/// Errors are one line and hold no password.
pub fn resolve(target: &str, env: &Env) -> Result<ConnInfo, String> {
    let given = parse_target(target)?;
    let mut ci = ConnInfo::default();
    for (k, v) in &given {
        ci.set(k, v.clone(), Source::Target);
    }
    // ixbench's own throwaway server: the target alone (plus its generated password).
    if let Some(pw) = own_server(&given) {
        ci.own_server = true;
        // Its generated password, given in the URL (--target postgres) or not.
        if !ci.password().is_some_and(|given| given != pw) {
            ci.values.insert("password", (pw, Source::OwnServer));
        }
        let user = ci.get("user").unwrap_or_default().to_string();
        ci.set("dbname", user, Source::Default);
        check(&ci)?;
        return Ok(ci);
    }
    // The service file.
    let service = match ci.get("service") {
        Some(s) => Some(s.to_string()),
        None => env.get("PGSERVICE").map(str::to_string),
    };
    if let Some(name) = service.filter(|s| !s.is_empty()) {
        let user_file = match env.get("PGSERVICEFILE") {
            Some(f) => Some(PathBuf::from(f)),
            None => env.home().map(|h| h.join(".pg_service.conf")),
        };
        let sys_file = Path::new(env.get("PGSYSCONFDIR").unwrap_or(DEFAULT_SYSCONFDIR))
            .join("pg_service.conf");
        let named_file = env.get("PGSERVICEFILE").map(PathBuf::from);
        let mut found = None;
        for file in user_file.into_iter().chain(std::iter::once(sys_file)) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                // As libpq: a PGSERVICEFILE that cannot be read is an error.
                if Some(&file) == named_file.as_ref() {
                    return Err(format!("service file \"{}\" not found", file.display()));
                }
                continue;
            };
            if let Some(settings) = parse_service_file(&text, &file, &name)? {
                found = Some((settings, file));
                break;
            }
        }
        let (settings, file) =
            found.ok_or_else(|| format!("definition of service \"{name}\" not found"))?;
        let shown = display_path(&file, env);
        for (k, v) in settings {
            ci.set(k, v, Source::Service(name.clone(), shown.clone()));
        }
    }
    // The environment.
    for (k, var, _) in KEYWORDS {
        if *k == "service" {
            continue;
        }
        if let Some(var) = *var {
            if !ci.has(k) {
                if let Some(v) = env.get(var) {
                    ci.set(k, v.to_string(), Source::Env(var));
                }
            }
        }
    }
    // Defaults.
    if !ci.has("host") {
        let h = if Path::new(DEFAULT_SOCKET_DIR).is_dir() {
            DEFAULT_SOCKET_DIR
        } else {
            "localhost"
        };
        ci.set("host", h.into(), Source::Default);
    }
    if !ci.has("user") {
        let u = os_user(env).ok_or(
            "no user in the PostgreSQL target (nor PGUSER or USER): use \
             postgres://USER@HOST:PORT/DB",
        )?;
        ci.set("user", u, Source::Default);
    }
    if !ci.has("dbname") {
        let u = ci.get("user").unwrap_or_default().to_string();
        ci.set("dbname", u, Source::Default);
    }
    // An empty password is no password (libpq then reads the password file).
    if ci.password() == Some("") {
        ci.values.remove("password");
    }
    if ci.password().is_none() {
        let file = match ci.get("passfile") {
            Some(f) => Some(PathBuf::from(f)),
            None => env.home().map(|h| h.join(".pgpass")),
        };
        if let Some(file) = file {
            match read_pgpass(&file) {
                Ok(Some(text)) => {
                    let host = ci.get("host").unwrap_or_default();
                    let first_host = host.split(',').next().unwrap_or_default();
                    let port = ci.get("port").unwrap_or_default();
                    let first_port = port.split(',').next().unwrap_or_default();
                    if let Some(pw) = pgpass_lookup(
                        &text,
                        first_host,
                        first_port,
                        ci.get("dbname").unwrap_or_default(),
                        ci.get("user").unwrap_or_default(),
                    ) {
                        ci.set("password", pw, Source::PassFile(display_path(&file, env)));
                    }
                }
                Ok(None) => {}
                Err(w) => ci.warnings.push(w),
            }
        }
    }
    check(&ci)?;
    Ok(ci)
}

/// Refuse what ixbench's client cannot do (a keyword that must keep its default).
fn check(ci: &ConnInfo) -> Result<(), String> {
    for (k, _, u) in KEYWORDS {
        if let (Use::OnlyDefault(default), Some(v)) = (u, ci.get(k)) {
            if !v.is_empty() && !v.eq_ignore_ascii_case(default) {
                let from = ci.source(k).map(Source::describe).unwrap_or_default();
                return Err(format!(
                    "{k}={v} (from {from}) is not supported by ixbench's PostgreSQL client"
                ));
            }
        }
    }
    if let Some(v) = ci.get("gssencmode") {
        if v == "require" {
            return Err(
                "gssencmode=require is not supported by ixbench's PostgreSQL client (no GSSAPI)"
                    .into(),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(s: &str) -> Vec<(&'static str, String)> {
        parse_keyvalue(s).unwrap()
    }

    #[test]
    fn keyvalue_quoting_as_libpq() {
        assert_eq!(
            kv("host=h port = 5433  dbname='my db' password='it\\'s \\\\ x' user=a\\ b"),
            vec![
                ("host", "h".to_string()),
                ("port", "5433".to_string()),
                ("dbname", "my db".to_string()),
                ("password", "it's \\ x".to_string()),
                ("user", "a b".to_string()),
            ]
        );
        assert_eq!(kv("host=a host=b"), vec![("host", "b".to_string())]);
        assert_eq!(kv("options=''"), vec![("options", String::new())]);
        for (bad, want) in [
            ("host", "missing \"=\" after \"host\""),
            (
                "host=h nonsense=1",
                "invalid connection option \"nonsense\"",
            ),
            ("password='secret", "unterminated quoted string"),
        ] {
            let e = parse_keyvalue(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
        assert!(is_keyvalue("host=h dbname=d"));
        assert!(is_keyvalue("service = x"));
        assert!(!is_keyvalue("postgres://u@h/d"));
        assert!(!is_keyvalue("sqlite:/x=y"));
        assert!(!is_keyvalue("postgres"));
    }

    #[test]
    fn urls_as_libpq() {
        let u = parse_url("postgresql://bob:p%40ss@h1:5433,[::1]:5434,h3/my%20db?sslmode=require&application_name=x").unwrap();
        let get = |k: &str| u.iter().find(|(q, _)| *q == k).map(|(_, v)| v.as_str());
        assert_eq!(get("user"), Some("bob"));
        assert_eq!(get("password"), Some("p@ss"));
        assert_eq!(get("host"), Some("h1,::1,h3"));
        assert_eq!(get("port"), Some("5433,5434,"));
        assert_eq!(get("dbname"), Some("my db"));
        assert_eq!(get("sslmode"), Some("require"));
        let u = parse_url("postgres:///db?host=%2Frun%2Fpg&ssl=true").unwrap();
        assert_eq!(
            u,
            vec![
                ("dbname", "db".to_string()),
                ("host", "/run/pg".to_string()),
                ("sslmode", "require".to_string())
            ]
        );
        let e = parse_url("postgres://u:secret@h/d?bogus=1").unwrap_err();
        assert!(e.contains("invalid URI query parameter: \"bogus\""), "{e}");
        assert!(parse_url("postgres://u:secret@h/d?x")
            .unwrap_err()
            .contains("separator"));
    }

    #[test]
    fn service_file_sections() {
        let text = "# comment\n[other]\nhost=o\n\n[mine]\n  host = db.example \nport=6432\n\
                    # inside\ndbname=bench\nport=1\nldap=ignored\n[after]\nuser=x\n";
        let f = Path::new("/x/pg_service.conf");
        let s = parse_service_file(text, f, "mine").unwrap().unwrap();
        assert_eq!(
            s,
            vec![
                ("host", "db.example".to_string()),
                ("port", "6432".to_string()),
                ("dbname", "bench".to_string()),
            ]
        );
        assert_eq!(parse_service_file(text, f, "none").unwrap(), None);
        // saved by a Windows editor: a byte-order mark and CRLF line ends
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        assert_eq!(parse_service_file(&crlf, f, "mine").unwrap().unwrap(), s);
        let first = "\u{feff}[mine]\r\nhost=h\r\n";
        assert_eq!(
            parse_service_file(first, f, "mine").unwrap().unwrap(),
            vec![("host", "h".to_string())]
        );
        let e = parse_service_file("[a]\nhost=h\nnope=1\n", f, "a").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        let e = parse_service_file("[a]\nhost\n", f, "a").unwrap_err();
        assert!(e.contains("syntax error") && e.contains("line 2"), "{e}");
        let e = parse_service_file("[a]\nservice=b\n", f, "a").unwrap_err();
        assert!(e.contains("nested"), "{e}");
    }

    #[test]
    fn pgpass_escapes_wildcards_first_match() {
        let text = "# host:port:db:user:pw\n\
                    db.example:5432:bench:bob:first\n\
                    db.example:*:*:bob:second\n\
                    we\\:ird:5432:*:a\\\\b:p\\:w\\\\d:ignored\n\
                    *:*:*:*:fallback\n";
        let l = |h, p, d, u| pgpass_lookup(text, h, p, d, u);
        assert_eq!(
            l("db.example", "5432", "bench", "bob").as_deref(),
            Some("first")
        );
        assert_eq!(
            l("db.example", "6000", "bench", "bob").as_deref(),
            Some("second")
        );
        assert_eq!(
            l("db.example", "", "other", "bob").as_deref(),
            Some("second")
        );
        assert_eq!(l("we:ird", "5432", "x", "a\\b").as_deref(), Some("p:w\\d"));
        assert_eq!(l("elsewhere", "1", "d", "u").as_deref(), Some("fallback"));
        assert_eq!(
            pgpass_lookup("h:5432:d:u:x\n", "h", "", "d", "u").as_deref(),
            Some("x")
        );
        // The default socket directory and an empty host are `localhost`; another directory
        // is itself.
        let t = "localhost:5432:d:u:local\n/tmp/s:5432:d:u:sock\n";
        assert_eq!(
            pgpass_lookup(t, DEFAULT_SOCKET_DIR, "5432", "d", "u").as_deref(),
            Some("local")
        );
        assert_eq!(
            pgpass_lookup(t, "", "5432", "d", "u").as_deref(),
            Some("local")
        );
        assert_eq!(
            pgpass_lookup(t, "/tmp/s", "5432", "d", "u").as_deref(),
            Some("sock")
        );
        assert_eq!(pgpass_lookup(t, "other", "5432", "d", "u"), None);
        // saved by a Windows editor: a byte-order mark and CRLF line ends
        assert_eq!(
            pgpass_lookup("\u{feff}h:5432:d:u:x\r\n", "h", "5432", "d", "u").as_deref(),
            Some("x")
        );
        // A prefix is not a match.
        assert_eq!(
            pgpass_lookup("hh:5432:d:u:x\n", "h", "5432", "d", "u"),
            None
        );
        assert_eq!(
            pgpass_lookup("h:5432:d:u:x\n", "hh", "5432", "d", "u"),
            None
        );
    }

    fn write(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    /// Target > service file > environment > default, and the password file only when no
    /// password was given: each level checked against a conflicting value below it.
    #[test]
    fn precedence() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().display().to_string();
        write(
            d.path(),
            ".pg_service.conf",
            "[svc]\nhost=from-service\nport=6000\nsslmode=require\npassword=svc-pw\n",
            0o600,
        );
        write(d.path(), ".pgpass", "*:*:*:*:file-pw\n", 0o600);
        let env = Env::of(&[
            ("HOME", &home),
            ("PGHOST", "from-env"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGDATABASE", "envdb"),
            ("PGSSLMODE", "disable"),
            ("PGPASSWORD", "env-pw"),
        ]);
        // The target wins over everything.
        let ci = resolve("host=given service=svc password=given-pw", &env).unwrap();
        assert_eq!(ci.get("host"), Some("given"));
        assert_eq!(ci.source("host"), Some(&Source::Target));
        assert_eq!(ci.get("port"), Some("6000"));
        assert!(matches!(ci.source("port"), Some(Source::Service(n, _)) if n == "svc"));
        assert_eq!(ci.get("sslmode"), Some("require"));
        assert_eq!(ci.get("user"), Some("envuser"));
        assert_eq!(ci.source("user"), Some(&Source::Env("PGUSER")));
        assert_eq!(ci.password(), Some("given-pw"));
        assert_eq!(ci.password_note(), "password: from the target given");
        // The service's password beats PGPASSWORD.
        let ci = resolve("service=svc", &env).unwrap();
        assert_eq!(ci.password(), Some("svc-pw"));
        assert!(ci
            .password_note()
            .starts_with("password: from service svc in "));
        // PGSERVICE names the service when the target does not.
        let mut e2 = env.clone();
        e2.vars.insert("PGSERVICE".into(), "svc".into());
        let ci = resolve("postgres://u@/db", &e2).unwrap();
        assert_eq!(ci.get("host"), Some("from-service"));
        // The environment beats the defaults; PGPASSWORD beats the password file.
        let ci = resolve("postgres:///", &env).unwrap();
        assert_eq!(ci.get("host"), Some("from-env"));
        assert_eq!(ci.get("dbname"), Some("envdb"));
        assert_eq!(ci.password(), Some("env-pw"));
        assert_eq!(ci.password_note(), "password: from PGPASSWORD");
        // No password anywhere else: the password file.
        let mut e3 = env.clone();
        e3.vars.remove("PGPASSWORD");
        let ci = resolve("postgres:///", &e3).unwrap();
        assert_eq!(ci.password(), Some("file-pw"));
        assert_eq!(ci.password_note(), "password: from ~/.pgpass");
        // An empty password given is no password (as libpq).
        let ci = resolve("password=''", &e3).unwrap();
        assert_eq!(ci.password(), Some("file-pw"));
        // Defaults: the user's name for the database.
        let ci = resolve("user=solo", &Env::of(&[("HOME", &home)])).unwrap();
        assert_eq!(ci.get("dbname"), Some("solo"));
        assert_eq!(ci.get("port"), None);
        // A service named and found nowhere.
        let e = resolve("service=nope", &env).unwrap_err();
        assert_eq!(e, "definition of service \"nope\" not found");
        let mut e5 = env.clone();
        e5.vars
            .insert("PGSERVICEFILE".into(), "/nonexistent/x.conf".into());
        let e = resolve("service=svc", &e5).unwrap_err();
        assert_eq!(e, "service file \"/nonexistent/x.conf\" not found");
        // PGSERVICEFILE wins over ~/.pg_service.conf; PGSYSCONFDIR's file is read only when
        // the user's has no such service.
        let other = write(
            d.path(),
            "other.conf",
            "[svc]\nhost=from-servicefile\n",
            0o644,
        );
        let sys = tempfile::tempdir().unwrap();
        write(
            sys.path(),
            "pg_service.conf",
            "[sys]\nhost=from-sysconfdir\n[svc]\nhost=no\n",
            0o644,
        );
        let mut e4 = env.clone();
        e4.vars
            .insert("PGSERVICEFILE".into(), other.display().to_string());
        e4.vars
            .insert("PGSYSCONFDIR".into(), sys.path().display().to_string());
        assert_eq!(
            resolve("service=svc", &e4).unwrap().get("host"),
            Some("from-servicefile")
        );
        assert_eq!(
            resolve("service=sys", &e4).unwrap().get("host"),
            Some("from-sysconfdir")
        );
    }

    #[test]
    fn pgpass_permissions_and_passfile() {
        let d = tempfile::tempdir().unwrap();
        let open = write(d.path(), "open", "*:*:*:*:open-pw\n", 0o644);
        let private = write(d.path(), "private", "*:*:*:*:private-pw\n", 0o600);
        let env = Env::of(&[("PGPASSFILE", &open.display().to_string())]);
        let ci = resolve("host=h user=u", &env).unwrap();
        assert_eq!(ci.password(), None);
        assert_eq!(ci.password_note(), "password: none given");
        assert_eq!(ci.warnings.len(), 1, "{:?}", ci.warnings);
        assert!(
            ci.warnings[0].contains("has group or world access"),
            "{:?}",
            ci.warnings
        );
        assert!(!ci.warnings[0].contains("open-pw"));
        // passfile= in the target beats PGPASSFILE.
        let ci = resolve(
            &format!("host=h user=u passfile={}", private.display()),
            &env,
        )
        .unwrap();
        assert_eq!(ci.password(), Some("private-pw"));
        assert!(ci.warnings.is_empty());
        // A directory is not a password file.
        let env = Env::of(&[("PGPASSFILE", &d.path().display().to_string())]);
        let ci = resolve("host=h user=u", &env).unwrap();
        assert!(
            ci.warnings[0].contains("not a plain file"),
            "{:?}",
            ci.warnings
        );
        // The Debug form never shows the password.
        let ci = resolve("host=h user=u password=s3cret", &Env::default()).unwrap();
        assert!(!format!("{ci:?}").contains("s3cret"));
    }

    #[test]
    fn what_ixbench_cannot_do_is_refused() {
        for (s, want) in [
            (
                "host=h user=u target_session_attrs=read-write",
                "target_session_attrs",
            ),
            ("host=h user=u hostaddr=10.0.0.1", "hostaddr"),
            ("host=h user=u gssencmode=require", "gssencmode"),
        ] {
            let e = resolve(s, &Env::default()).unwrap_err();
            assert!(e.contains(want) && e.contains("not supported"), "{e}");
        }
        let e = resolve(
            "host=h user=u",
            &Env::of(&[("PGTARGETSESSIONATTRS", "primary")]),
        )
        .unwrap_err();
        assert!(e.contains("from PGTARGETSESSIONATTRS"), "{e}");
        assert!(resolve(
            "host=h user=u target_session_attrs=any keepalives=1",
            &Env::default()
        )
        .is_ok());
    }
}

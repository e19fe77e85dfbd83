#!/usr/bin/env bash
# Install a private MariaDB 11.8 (for tests/tls.rs: its server plugin auth_mysql_sha2,
# MySQL's caching_sha2_password, is not in bookworm's MariaDB 10.11) into DEST (default
# .ci/mariadb118), from Debian's packages, without touching the system: each .deb is unpacked
# with `dpkg -x`. Debian forky (testing) builds it with auth_mysql_sha2.so in mariadb-server
# (trixie's 11.8 leaves that file out); its programs need forky's C library and libraries, so
# they are unpacked too and every program runs through forky's dynamic loader: usr/sbin/mariadbd
# and usr/bin/resolveip are small scripts that exec `lib64/ld-linux-x86-64.so.2 --library-path
# ... REAL-PROGRAM`. The versions are read from the suite's Packages index at install time (the
# pool drops old versions); the major version is pinned: 11.8. The packages come from the
# first package mirror of this machine's apt sources that has the suite, or from
# IXBENCH_DEBIAN_MIRROR (a Debian mirror's URL, the directory with dists/ and pool/).
# Then `ixbench ... --server-bin DEST/usr/bin` (or IXBENCH_MARIADB118_BIN) starts it.
set -euo pipefail
dest="${1:-.ci/mariadb118}"
suite="${IXBENCH_MARIADB118_SUITE:-forky}"
major="11.8"

# The package mirrors this machine's apt uses, in apt's order: the `deb` lines of
# /etc/apt/sources.list and sources.list.d/*.list, and the `URIs:` of the enabled `Types: deb`
# stanzas of sources.list.d/*.sources (deb822, Debian 12's default); http(s) only.
apt_mirrors() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    case "$f" in
      *.sources) awk '
          function flush() { if (deb && on) print uris; deb = 0; on = 1; uris = "" }
          BEGIN { on = 1 }
          /^[ \t]*#/ { next }
          /^[ \t]*$/ { flush(); next }
          tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
          tolower($1) == "enabled:" { on = (tolower($2) != "no") }
          tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris = uris " " $i }
          END { flush() }' "$f" | tr ' ' '\n';;
      *) sed -n 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' "$f";;
    esac
  done | sed -n 's:/*$::; /^https\?:\/\//p' | awk '!seen[$0]++'
}
# The server and its plugins, and the libraries its programs need (readelf -d NEEDED, checked
# below), with the C library itself: bookworm's are older than the programs were linked against.
pkgs=(mariadb-server-core mariadb-server libc6 libgcc-s1 libstdc++6 libssl3t64 libzstd1 zlib1g
      libpcre2-8-0 libcrypt1 liburing2 libaio1t64 libnuma1 libsystemd0)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The mirror: IXBENCH_DEBIAN_MIRROR, else the first of apt's that has the suite.
mirror="${IXBENCH_DEBIAN_MIRROR:-}"
if [ -n "$mirror" ]; then
  curl -fsS --retry 2 -o "$tmp/Packages.xz" "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
else
  for m in $(apt_mirrors); do
    if curl -fsS --retry 2 -o "$tmp/Packages.xz" "$m/dists/$suite/main/binary-amd64/Packages.xz" 2>/dev/null; then
      mirror="$m"
      break
    fi
  done
  if [ -z "$mirror" ]; then
    echo "no package mirror of this machine's apt sources has Debian $suite ($(apt_mirrors | tr '\n' ' ')); set IXBENCH_DEBIAN_MIRROR to one" >&2
    exit 1
  fi
fi
echo "Debian $suite from $mirror"
xz -dc "$tmp/Packages.xz" > "$tmp/Packages"
root="$tmp/root"
mkdir -p "$root" "$tmp/deb"
for p in "${pkgs[@]}"; do
  read -r version file < <(awk -v p="$p" '
    /^Package: / { x = ($2 == p) }
    x && /^Version: / { v = $2 }
    x && /^Filename: / { f = $2 }
    /^$/ { if (x && f != "") { print v, f; exit } x = 0 }' "$tmp/Packages") || true
  if [ -z "${file:-}" ]; then
    echo "$suite has no package $p" >&2; exit 1
  fi
  case "$p" in
    mariadb-*) case "$version" in 1:"$major".*) ;; *)
      echo "$suite has $p $version, not MariaDB $major" >&2; exit 1;; esac;;
  esac
  curl -fsS --retry 2 -o "$tmp/deb/$p.deb" "$mirror/$file"
  dpkg -x "$tmp/deb/$p.deb" "$root"
  file=""
done
# Only what a server needs: no documentation, manuals, configuration for the system's service.
rm -rf "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/lintian "$root"/etc \
  "$root"/usr/lib/systemd "$root"/usr/share/locale "$root"/usr/lib/x86_64-linux-gnu/gconv
# Of the programs, only the server and what mariadb-install-db runs (mariadb-server's usr/bin
# has the tools of the system's service: aria_chk, myisampack, Galera's SST scripts, ...).
for f in "$root"/usr/bin/*; do
  case "$(basename "$f")" in mariadb-install-db|resolveip) ;; *) rm -f "$f";; esac
done
test -f "$root/usr/lib/mysql/plugin/auth_mysql_sha2.so" \
  || { echo "$suite's mariadb-server has no auth_mysql_sha2.so" >&2; exit 1; }

# A loader script for each ELF program, in place of it: it finds the tree from its own path, so
# the tree can be copied elsewhere (e.g. where the server's OS user can reach it).
ld=lib64/ld-linux-x86-64.so.2
[ -e "$root/$ld" ] || ld=usr/lib64/ld-linux-x86-64.so.2
[ -e "$root/$ld" ] || { echo "no dynamic loader in $suite's libc6" >&2; exit 1; }
for prog in usr/sbin/mariadbd usr/bin/resolveip; do
  [ -f "$root/$prog" ] || continue
  mv "$root/$prog" "$root/$prog.elf"
  cat > "$root/$prog" <<WRAP
#!/bin/sh
# MariaDB $major from Debian $suite, run with that release's dynamic loader and libraries.
r="\$(dirname "\$(readlink -f "\$0")")/../.."
exec "\$r/$ld" --library-path "\$r/usr/lib/x86_64-linux-gnu:\$r/lib/x86_64-linux-gnu" \\
  "\$r/$prog.elf" "\$@"
WRAP
  chmod 755 "$root/$prog"
done
# mariadb-install-db reads option files with my_print_defaults (package mariadb-client-core);
# ixbench runs it with --no-defaults, for which it prints nothing.
cat > "$root/usr/bin/my_print_defaults" <<'WRAP'
#!/bin/sh
# --no-defaults: no option file is read, nothing to print.
exit 0
WRAP
chmod 755 "$root/usr/bin/my_print_defaults"

# Every library the server, the plugin and those libraries need must be in the private tree.
for elf in "$root/usr/sbin/mariadbd.elf" "$root/usr/lib/mysql/plugin/auth_mysql_sha2.so" \
    $(find "$root/usr/lib/x86_64-linux-gnu" -maxdepth 1 -type f -name 'lib*.so*'); do
  for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    found=""
    for d in usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib64 lib64; do
      [ -e "$root/$d/$lib" ] && found=1
    done
    [ -n "$found" ] || { echo "no $lib (needed by $(basename "$elf")) in the unpacked packages" >&2; exit 1; }
  done
done
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$root"/. "$dest"/
echo "MariaDB $major from Debian $suite in $dest: $(du -sh "$tmp/deb" | cut -f1) of packages, \
$(du -sh "$dest" | cut -f1) unpacked, in ${SECONDS} s"
"$dest/usr/sbin/mariadbd" --version

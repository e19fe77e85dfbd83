# Sourced by the bench scripts that run over TLS: make_certs DIR NAME... makes, with openssl,
# DIR/ca.crt (and its key) and for each NAME a P-256 key DIR/NAME.key and a certificate
# DIR/NAME.crt signed by it for 127.0.0.1 and localhost, all readable by the servers' users.
make_certs() {
  local dir=$1 who; shift
  command -v openssl >/dev/null || { echo "needs the openssl command"; exit 1; }
  mkdir -p "$dir"; chmod 755 "$dir"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 2 -subj /CN=ixbench-bench-ca 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$dir/ext"
  for who in "$@"; do
    openssl req "${ec[@]}" -keyout "$dir/$who.key" -out "$dir/$who.csr" -subj "/CN=$who" 2>/dev/null
    openssl x509 -req -in "$dir/$who.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
      -out "$dir/$who.crt" -days 2 -extfile "$dir/ext" 2>/dev/null
  done
  chmod 644 "$dir"/*
}

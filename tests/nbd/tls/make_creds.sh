# Test credentials made with certtool and psktool (sourced by the TLS
# tests). make_creds DIR HOSTS...: in DIR,
#   srv/    ca-cert.pem server-cert.pem server-key.pem ca-crl.pem (the
#           server's --tls-certificates; the CRL revokes "revoked")
#   good/ wrongca/ expired/ notyet/ revoked/   client directories as libnbd
#           and qemu read them: ca-cert.pem client-cert.pem client-key.pem
#   keys.psk (alice, bob, carol), unknown.psk (mallory), wrongkey.psk (alice
#           with another key)
# HOSTS: the names and addresses the server certificate is valid for.
certtool_q() { certtool "$@" >/dev/null 2>&1 || fail "certtool $*"; }

make_ca() {  # make_ca DIR NAME
  certtool_q --generate-privkey --outfile "$1/$2-key.pem"
  printf 'cn = %s\nca\ncert_signing_key\ncrl_signing_key\nexpiration_days = 30\n' "$2" >"$1/$2.info"
  certtool_q --generate-self-signed --load-privkey "$1/$2-key.pem" --template "$1/$2.info" \
    --outfile "$1/$2-cert.pem"
}

# make_client DIR CA CN [TEMPLATE LINES...]: a client certificate in DIR.
make_client() {
  local d=$1 ca=$2 cn=$3
  shift 3
  mkdir -p "$d"
  cp "$W_CREDS/ca-cert.pem" "$d/ca-cert.pem"
  certtool_q --generate-privkey --outfile "$d/client-key.pem"
  { printf 'organization = Test\ncn = %s\ntls_www_client\nencryption_key\nsigning_key\n' "$cn"
    if (($# == 0)); then echo "expiration_days = 30"; else printf '%s\n' "$@"; fi
  } >"$d/client.info"
  certtool_q --generate-certificate --load-ca-certificate "$W_CREDS/$ca-cert.pem" \
    --load-ca-privkey "$W_CREDS/$ca-key.pem" --load-privkey "$d/client-key.pem" \
    --template "$d/client.info" --outfile "$d/client-cert.pem"
}

make_creds() {
  W_CREDS=$1
  shift
  make_ca "$W_CREDS" ca
  make_ca "$W_CREDS" otherca
  mkdir -p "$W_CREDS/srv"
  cp "$W_CREDS/ca-cert.pem" "$W_CREDS/srv/"
  certtool_q --generate-privkey --outfile "$W_CREDS/srv/server-key.pem"
  { printf 'organization = Test\ncn = %s\ntls_www_server\nencryption_key\nsigning_key\n' "$1"
    echo "expiration_days = 30"
    for h in "$@"; do
      if [[ $h =~ ^[0-9.:]+$ ]]; then echo "ip_address = $h"; else echo "dns_name = $h"; fi
    done
  } >"$W_CREDS/srv/server.info"
  certtool_q --generate-certificate --load-ca-certificate "$W_CREDS/ca-cert.pem" \
    --load-ca-privkey "$W_CREDS/ca-key.pem" --load-privkey "$W_CREDS/srv/server-key.pem" \
    --template "$W_CREDS/srv/server.info" --outfile "$W_CREDS/srv/server-cert.pem"
  make_client "$W_CREDS/good" ca client1
  make_client "$W_CREDS/wrongca" otherca client1
  make_client "$W_CREDS/expired" ca client1 'activation_date = "2020-01-01 00:00:00 UTC"' \
    'expiration_date = "2020-06-01 00:00:00 UTC"'
  make_client "$W_CREDS/notyet" ca client1 'activation_date = "2090-01-01 00:00:00 UTC"' \
    'expiration_date = "2091-01-01 00:00:00 UTC"'
  make_client "$W_CREDS/revoked" ca client1
  printf 'crl_next_update = 30\ncrl_number = 1\n' >"$W_CREDS/crl.info"
  certtool_q --generate-crl --load-ca-privkey "$W_CREDS/ca-key.pem" \
    --load-ca-certificate "$W_CREDS/ca-cert.pem" \
    --load-certificate "$W_CREDS/revoked/client-cert.pem" --template "$W_CREDS/crl.info" \
    --outfile "$W_CREDS/srv/ca-crl.pem"
  for u in alice bob carol; do psktool -u "$u" -p "$W_CREDS/keys.psk" >/dev/null; done
  psktool -u mallory -p "$W_CREDS/unknown.psk" >/dev/null
  psktool -u alice -p "$W_CREDS/wrongkey.psk" >/dev/null
  # qemu's tls-creds-psk reads DIR/keys.psk
  mkdir -p "$W_CREDS/pskdir"
  cp "$W_CREDS/keys.psk" "$W_CREDS/pskdir/keys.psk"
}

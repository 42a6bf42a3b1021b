#!/usr/bin/env bash
# Runs the notification receiver scaled out on one machine's loopback, with real parts:
#   PostgreSQL (Debian's server, a cluster of its own in the state directory),
#   N `receipt-tool serve` instances sharing it (--notifications-db postgres://…),
#   nginx terminating TLS with a self-signed certificate, balancing over the instances
#   (deploy/nginx.conf) and retrying a request on the next instance when one is down.
#
#   deploy/cluster.sh start STATE_DIR [--instances N] [--https-port PORT] [--receipt-tool PATH]
#                                     [-- SERVE_OPTIONS...]
#   deploy/cluster.sh stop STATE_DIR
#
# The instances run the release build (`swift build -c release`: .build/release/receipt-tool);
# --receipt-tool PATH, or RECEIPT_TOOL=PATH in the environment, runs another one (a debug build:
# RECEIPT_TOOL=.build/debug/receipt-tool).
# SERVE_OPTIONS are passed to every instance: the verification options of notifications, for
# example `--anchor apple --bundle-id com.example.app --app-apple-id 123 --environment production`,
# or `--config backend.json` for several apps (Docs/Serving.md): the instances then read a copy,
# STATE_DIR/backend.json, whose "store" is the cluster's database.
# `start` prints the URLs and writes them to STATE_DIR/cluster.env:
#   NOTIFICATIONS_URL  https://127.0.0.1:PORT/notifications (register it with Apple)
#   HEALTH_URL         https://127.0.0.1:PORT/health
#   CA_CERT            the self-signed certificate to trust (curl --cacert)
#   DATABASE_URL       the PostgreSQL database (receipt-tool notifications list --db "$DATABASE_URL")
#   CONFIG             with --config: the copy the instances read (notifications list --config "$CONFIG")
#   SERVE_PORTS        the instances' own ports; SERVE_PIDS their process ids
# `stop` stops nginx, the instances (SIGTERM: requests in progress finish) and PostgreSQL, and keeps
# the logs in STATE_DIR. Needs nginx, openssl, curl, python3 and the PostgreSQL server binaries;
# as root, PostgreSQL runs as the `postgres` user.
set -euo pipefail

usage() {
    sed -n '8,13p' "$0" >&2
    exit 64
}

[ $# -ge 2 ] || usage
action=$1
state=$2
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

stop_cluster() {
    [ -d "$state" ] || { echo "cluster.sh: no state directory $state" >&2; exit 1; }
    if [ -f "$state/nginx/nginx.pid" ]; then
        kill -QUIT "$(cat "$state/nginx/nginx.pid")" 2>/dev/null || true
    fi
    if [ -f "$state/serve.pids" ]; then
        while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$state/serve.pids"
        for _ in $(seq 1 100); do
            alive=0
            while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$state/serve.pids"
            [ $alive = 0 ] && break
            sleep 0.1
        done
        rm -f "$state/serve.pids"
    fi
    if [ -d "$state/pg/data" ] && [ -n "$pg_bin" ]; then
        as_postgres "$pg_bin/pg_ctl" -D "$state/pg/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    for _ in $(seq 1 50); do
        [ -f "$state/nginx/nginx.pid" ] || break
        sleep 0.1
    done
    echo "cluster.sh: stopped (logs in $state)"
}

start_cluster() {
    local instances=2 https_port="" tool="${RECEIPT_TOOL:-$repo/.build/release/receipt-tool}"
    while [ $# -gt 0 ]; do
        case $1 in
            --instances) instances=$2; shift 2 ;;
            --https-port) https_port=$2; shift 2 ;;
            --receipt-tool) tool=$2; shift 2 ;;
            --) shift; break ;;
            *) usage ;;
        esac
    done
    local serve_options=("$@")
    # --config FILE: the instances read a copy whose "store" is this cluster's database.
    local config="" notifications_path="/notifications"
    for ((k = 0; k < ${#serve_options[@]}; k++)); do
        if [ "${serve_options[$k]}" = "--config" ] && [ $((k + 1)) -lt ${#serve_options[@]} ]; then
            config=${serve_options[$((k + 1))]}
            [ -f "$config" ] || { echo "cluster.sh: no configuration file $config" >&2; exit 64; }
            serve_options=("${serve_options[@]:0:$k}" "${serve_options[@]:$((k + 2))}")
            break
        fi
    done
    [ -x "$tool" ] || {
        echo "cluster.sh: no receipt-tool at $tool (swift build -c release, or --receipt-tool PATH / RECEIPT_TOOL=PATH)" >&2
        exit 1
    }
    [ -n "$pg_bin" ] || { echo "cluster.sh: no PostgreSQL server under /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; exit 1; }
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "cluster.sh: nginx is not installed (apt-get install nginx)" >&2; exit 1; }
    local nginx
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [ -e "$state/serve.pids" ] && { echo "cluster.sh: $state is in use (stop it first)" >&2; exit 1; }
    mkdir -p "$state/pg" "$state/nginx/tmp"
    state=$(cd "$state" && pwd)
    trap 'echo "cluster.sh: start failed; stopping what started" >&2; stop_cluster >&2' ERR

    # PostgreSQL: a cluster of its own, trust authentication on 127.0.0.1 only.
    local pg_port
    pg_port=$(free_port)
    if [ "$(id -u)" = 0 ]; then chown postgres "$state/pg"; fi
    if [ ! -d "$state/pg/data" ]; then
        (cd "$state/pg" && as_postgres "$pg_bin/initdb" -D "$state/pg/data" -U postgres --auth=trust -E UTF8 --locale=C >"$state/pg/initdb.log" 2>&1)
    fi
    # TCP on 127.0.0.1 only (-k '': no Unix socket, whose path could exceed 107 bytes in a deep state directory).
    (cd "$state/pg" && as_postgres "$pg_bin/pg_ctl" -D "$state/pg/data" -l "$state/pg/server.log" -w -t 60 \
        -o "-p $pg_port -k '' -c listen_addresses=127.0.0.1" start >/dev/null)
    as_postgres "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -qAt \
        -c "SELECT 1 FROM pg_database WHERE datname = 'notifications'" | grep -q 1 ||
        as_postgres "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres notifications
    local database="postgres://postgres@127.0.0.1:$pg_port/notifications"
    local store_options=(--notifications-db "$database")
    if [ -n "$config" ]; then
        notifications_path=$(python3 - "$config" "$state/backend.json" "$database" <<'PY'
import json, sys
source, target, database = sys.argv[1:4]
with open(source) as f:
    configuration = json.load(f)
if not isinstance(configuration, dict):
    sys.exit("cluster.sh: the configuration is not a JSON object")
configuration["store"] = database
with open(target, "w") as f:
    json.dump(configuration, f, indent=2)
print(configuration.get("notificationsPath", "/notifications"))
PY
        )
        store_options=(--config "$state/backend.json")
    fi

    # The instances, started at once on the (possibly empty) database: each creates the schema if
    # it is missing, under an advisory lock, so all of them come up.
    local ports=() pids=() upstreams=""
    for i in $(seq 1 "$instances"); do
        local port
        port=$(free_port)
        "$tool" serve --host 127.0.0.1 --port "$port" "${store_options[@]}" --trusted-proxy 127.0.0.1 \
            "${serve_options[@]}" >"$state/serve-$i.log" 2>&1 </dev/null &
        pids+=($!)
        ports+=("$port")
        echo "$!" >>"$state/serve.pids"
        upstreams+="        server 127.0.0.1:$port max_fails=1 fail_timeout=5s;"$'\n'
    done
    for i in $(seq 1 "$instances"); do
        local ok=0
        for _ in $(seq 1 300); do
            if grep -q "listening on" "$state/serve-$i.log" 2>/dev/null; then ok=1; break; fi
            kill -0 "${pids[$((i - 1))]}" 2>/dev/null || break
            sleep 0.1
        done
        [ $ok = 1 ] || { echo "cluster.sh: instance $i did not start:" >&2; cat "$state/serve-$i.log" >&2; false; }
    done

    # TLS: a self-signed P-256 certificate for 127.0.0.1 and localhost.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$state/nginx/key.pem" -out "$state/nginx/cert.pem" 2>/dev/null
    [ -n "$https_port" ] || https_port=$(free_port)
    mkdir -p "$state/nginx/tmp"/{body,proxy,fastcgi,uwsgi,scgi}
    chmod -R 0777 "$state/nginx/tmp"
    UPSTREAMS="${upstreams%$'\n'}" python3 - "$repo/deploy/nginx.conf" "$state/nginx/nginx.conf" "$state/nginx" "$https_port" <<'PY'
import os, sys
source, target, state, port = sys.argv[1:5]
lines = []
for line in open(source).read().split("\n"):
    if not line.lstrip().startswith("#"):  # the comments name the placeholders
        line = line.replace("@STATE@", state).replace("@HTTPS_PORT@", port).replace("@UPSTREAMS@", os.environ["UPSTREAMS"])
    lines.append(line)
open(target, "w").write("\n".join(lines))
PY
    "$nginx" -p "$state/nginx" -c "$state/nginx/nginx.conf" -e "$state/nginx/error.log"
    for _ in $(seq 1 100); do
        curl -s --cacert "$state/nginx/cert.pem" -o /dev/null "https://127.0.0.1:$https_port/health" && break
        sleep 0.1
    done
    curl -sf --cacert "$state/nginx/cert.pem" -o /dev/null "https://127.0.0.1:$https_port/health"
    trap - ERR

    cat >"$state/cluster.env" <<ENV
NOTIFICATIONS_URL=https://127.0.0.1:$https_port$notifications_path
HEALTH_URL=https://127.0.0.1:$https_port/health
CA_CERT=$state/nginx/cert.pem
DATABASE_URL=$database
CONFIG=${config:+$state/backend.json}
SERVE_PORTS="${ports[*]}"
SERVE_PIDS="${pids[*]}"
ENV
    echo "cluster.sh: nginx https://127.0.0.1:$https_port → $instances instances (ports ${ports[*]}) → $database"
    cat "$state/cluster.env"
}

case $action in
    start) start_cluster "$@" ;;
    stop) stop_cluster ;;
    *) usage ;;
esac

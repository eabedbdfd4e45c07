#!/usr/bin/env bash
# Installs what Kiln's run and test commands need, only when missing. Safe to run again.
# Usage: scripts/install-deps.sh [run|dev]
set -euo pipefail
mode=${1:-dev}
cd "$(dirname "$0")/.."

need_apt=()
command -v php >/dev/null || need_apt+=(php-cli)
php -r 'exit(extension_loaded("pcntl") && extension_loaded("posix") ? 0 : 1);' 2>/dev/null || need_apt+=(php-cli)
php -r 'exit(extension_loaded("ffi") ? 0 : 1);' 2>/dev/null || need_apt+=(php-ffi)
# Node-shared state (rate limits) uses APCu when the CLI has it on (apc.enable_cli=1), a /dev/shm file otherwise.
php -r 'exit(extension_loaded("apcu") ? 0 : 1);' 2>/dev/null || need_apt+=(php-apcu)
# opcache (php8.2-cli depends on it): the workers' JIT, and code edits seen within revalidate_freq (tests).
php -r 'exit(extension_loaded("Zend OPcache") ? 0 : 1);' 2>/dev/null || need_apt+=(php8.2-opcache)
# The isolated tier (the default for a bare document root's *.php) runs a pool of php-cgi children.
command -v php-cgi >/dev/null || need_apt+=(php-cgi)
if [ "$mode" = dev ]; then
    command -v composer >/dev/null || need_apt+=(composer)
    php -r 'exit(extension_loaded("mbstring") ? 0 : 1);' 2>/dev/null || need_apt+=(php-mbstring)
    php -r 'exit(extension_loaded("xml") && extension_loaded("dom") ? 0 : 1);' 2>/dev/null || need_apt+=(php-xml)
    command -v curl >/dev/null || need_apt+=(curl)
    # Peers the tests compare against and drive: php-fpm behind nginx, Apache mod_php, ab, CGI scripts.
    command -v php-fpm8.2 >/dev/null || [ -x /usr/sbin/php-fpm8.2 ] || need_apt+=(php-fpm)
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
    [ -x /usr/sbin/apache2 ] || need_apt+=(apache2)
    [ -e /usr/lib/apache2/modules/libphp8.2.so ] || need_apt+=(libapache2-mod-php)
    command -v ab >/dev/null || need_apt+=(apache2-utils)
    # promtool checks the /metrics output (tests/Integration/Metrics).
    command -v promtool >/dev/null || need_apt+=(prometheus)
    command -v python3 >/dev/null || need_apt+=(python3)
    command -v perl >/dev/null || need_apt+=(perl)
    # The task workers' test runs a blocking PDO query against a throwaway MariaDB (tests/Support/MariaDbServer.php).
    [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
    php -r 'exit(extension_loaded("pdo_mysql") && extension_loaded("mysqli") ? 0 : 1);' 2>/dev/null || need_apt+=(php-mysql)
    # Redis tests start their own redis-server, redis-sentinel and Cluster; redis-cli makes the Cluster, redis-benchmark is the bench peer.
    [ -x /usr/bin/redis-server ] || need_apt+=(redis-server)
    [ -x /usr/bin/redis-sentinel ] || need_apt+=(redis-sentinel)
    { [ -x /usr/bin/redis-cli ] && [ -x /usr/bin/redis-benchmark ]; } || need_apt+=(redis-tools)
    command -v openssl >/dev/null || need_apt+=(openssl)
    # The scale-out test puts HAProxy in front of three nodes, as docs/scaling.md shows (nginx is above), and drives
    # them with ext-curl (curl_multi for its concurrent POSTs).
    [ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
    php -r 'exit(extension_loaded("curl") ? 0 : 1);' 2>/dev/null || need_apt+=(php-curl)
    # php-redis's session handler, in php-cgi, shares its sessions with App routes (tests/Integration/Scale/RedisSessionsTest.php).
    php -r 'exit(extension_loaded("redis") ? 0 : 1);' 2>/dev/null || need_apt+=(php-redis)
    # Independent WebSocket clients the integration tests drive: Debian's python3-websockets and npm's ws.
    [ -d /usr/lib/python3/dist-packages/websockets ] || need_apt+=(python3-websockets)
    command -v node >/dev/null || need_apt+=(nodejs)
    command -v npm >/dev/null || need_apt+=(npm)
    # The example real-time page is driven in headless Chromium (tests/Integration/Realtime).
    command -v chromium >/dev/null || need_apt+=(chromium)
    # Kiln\Db's integration tests start their own PostgreSQL 15 and MariaDB; the PostgreSQL client is ext-pgsql.
    php -r 'exit(extension_loaded("pgsql") ? 0 : 1);' 2>/dev/null || need_apt+=(php-pgsql)
    # The tests set their MariaDB up through mysqli; bench/run db compares against PDO (pdo_pgsql, pdo_mysql).
    php -r 'exit(extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? 0 : 1);' 2>/dev/null || need_apt+=(php-mysql)
    [ -x /usr/lib/postgresql/15/bin/postgres ] || need_apt+=(postgresql)
    [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
    command -v setpriv >/dev/null || need_apt+=(util-linux)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "install-deps: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [ "$mode" = dev ] && [ ! -f vendor/autoload.php -o composer.json -nt vendor/autoload.php ]; then
    echo "install-deps: composer install" >&2
    COMPOSER_NO_INTERACTION=1 composer install --no-progress --quiet
fi
if [ "$mode" = dev ] && [ ! -d tests/Fixtures/websocket/node/node_modules/ws ]; then
    echo "install-deps: npm install (tests/Fixtures/websocket/node)" >&2
    (cd tests/Fixtures/websocket/node && npm install --no-audit --no-fund --silent)
fi

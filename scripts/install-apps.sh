#!/usr/bin/env bash
# Installs what the real-application tests (tests/Apps, `make test-apps`) need, only when missing. Safe to run
# again. Debian's packages are installed as shipped; the tests serve throwaway copies of them and start their own
# MariaDB, so nothing here configures a web server, a database or a service:
#   - a policy-rc.d that denies service starts is put in place for the install (when none exists) and removed after;
#   - debconf is preseeded: phpMyAdmin and DokuWiki reconfigure no web server, phpMyAdmin skips dbconfig-common.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'; }
for pkg in mariadb-server mariadb-client wordpress wordpress-theme-twentytwentythree dokuwiki phpmyadmin adminer \
    dbconfig-no-thanks php-mysql php-gd php-curl php-xml php-mbstring php-zip php-intl php-cgi \
    apache2 libapache2-mod-php; do
    have_pkg "$pkg" || need+=("$pkg")
done
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
echo "install-apps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
debconf-set-selections <<'SEL'
phpmyadmin phpmyadmin/dbconfig-install boolean false
phpmyadmin phpmyadmin/reconfigure-webserver multiselect
dokuwiki dokuwiki/system/configure-webserver multiselect
dokuwiki dokuwiki/system/restart-webserver boolean false
SEL
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e $policy ]; then
    printf '#!/bin/sh\n# installed by scripts/install-apps.sh for the duration of apt-get install\nexit 101\n' >$policy
    chmod 755 $policy
    made_policy=1
fi
trap '[ $made_policy = 1 ] && rm -f $policy' EXIT
# The package lists are refreshed once: first when apt does not know a package we need, else only when the install
# fails with the lists it has (stale lists name versions the mirror no longer has).
updated=0
if ! apt-cache show "${need[@]}" >/dev/null 2>&1; then
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    updated=1
fi
log=$(mktemp)
install() { apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >"$log" 2>&1; }
if ! install && { [ $updated = 1 ] || ! apt-get -o DPkg::Lock::Timeout=300 update -qq || ! install; }; then
    echo "install-apps: apt-get install failed:" >&2
    tail -20 "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"

<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\MariaDbServer;

/**
 * Debian's `phpmyadmin` (5.2.1) served from a throwaway copy of /usr/share/phpmyadmin. Debian points phpMyAdmin at
 * /etc/phpmyadmin/config.inc.php and /var/lib/phpmyadmin/tmp through libraries/vendor_config.php (the file
 * distributors edit); the copy's points at a config.inc.php and a tmp dir of its own, outside the document root.
 * Debian's Apache snippet denies templates/ and libraries/; both servers get that as a `.htaccess` in each.
 */
final class PhpMyAdmin
{
    public const SOURCE = '/usr/share/phpmyadmin';
    public const PASSWORD = 'pma-db-secret-2b90';

    public static function isInstalled(): bool
    {
        return is_file(self::SOURCE . '/index.php') && is_file(self::SOURCE . '/libraries/vendor_config.php');
    }

    public static function database(string $stack): string
    {
        return 'pma_' . preg_replace('/\W/', '_', $stack);
    }

    public static function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        $name = self::database($stack);
        $db->createDatabase($name, $name, self::PASSWORD);
        $copy = SiteCopy::of(self::SOURCE, 'kiln-apps-phpmyadmin');
        foreach (['etc', 'tmp'] as $sub) {
            mkdir("{$copy->dir}/$sub", 0o755);
        }
        $vendor = (string) file_get_contents(self::SOURCE . '/libraries/vendor_config.php');
        $copy->write('libraries/vendor_config.php', str_replace(
            ["'/var/lib/phpmyadmin/tmp/'", "'/etc/phpmyadmin/config.inc.php'"],
            [var_export("{$copy->dir}/tmp/", true), var_export("{$copy->dir}/etc/config.inc.php", true)],
            $vendor,
        ));
        $secret = var_export(random_bytes(32), true);
        file_put_contents("{$copy->dir}/etc/config.inc.php", <<<PHP
            <?php
            // Written by tests/Apps/Support/PhpMyAdmin.php
            \$cfg['blowfish_secret'] = $secret;
            \$cfg['Servers'][1]['auth_type'] = 'cookie';
            \$cfg['Servers'][1]['host'] = '{$db->host()}';
            \$cfg['Servers'][1]['port'] = '{$db->port()}';
            \$cfg['Servers'][1]['connect_type'] = 'tcp';
            \$cfg['Servers'][1]['AllowNoPassword'] = false;
            \$cfg['TempDir'] = '{$copy->dir}/tmp';
            \$cfg['VersionCheck'] = false;
            \$cfg['SendErrorReports'] = 'never';

            PHP);
        $deny = "# Debian's /etc/phpmyadmin/apache.conf denies this directory\nRequire all denied\n";
        $copy->write('libraries/.htaccess', $deny);
        $copy->write('templates/.htaccess', $deny);
        $copy->write('config.inc.php~', "<?php // an editor's backup: never served\n\$cfg['Servers'][1]['password'] = '" . self::PASSWORD . "';\n");
        $copy->handToWebServer();
        if (is_dir("{$copy->dir}/tmp")) {
            exec('chown -R www-data:www-data ' . escapeshellarg("{$copy->dir}/tmp") . ' ' . escapeshellarg("{$copy->dir}/etc") . ' 2>/dev/null');
        }
        return $copy;
    }

    public static function flow(Run $run, Browser $user, MariaDbServer $db, string $stack): void
    {
        $name = self::database($stack);
        $form = $run->expect('login form', $user->get('/'), 200, ['pma_username', 'pma_password'])->form('id="login_form"');
        $login = $run->expect('log in (cookie auth)', $user->post('/index.php?route=/', [...$form,
            'pma_username' => $name, 'pma_password' => self::PASSWORD, 'server' => '1']), 302, ['Location: index.php?route=/']);
        $home = $run->expect('home page', $user->get('/' . ltrim($login->location(), '/')), 200, ['Database server', $name], ['pma_password']);
        $token = $home->input('token') !== '' ? $home->input('token') : $home->match('~"token":"([0-9a-f]+)"~');
        $run->expect('database structure', $user->get("/index.php?route=/database/structure&db=$name"), 200, ['No tables found in database']);
        $sql = "CREATE TABLE kiln_items (id INT PRIMARY KEY, label VARCHAR(50));\nINSERT INTO kiln_items VALUES (1, 'from Kiln via phpMyAdmin');";
        $run->expect('run SQL', $user->post('/index.php?route=/import', ['db' => $name, 'table' => '', 'server' => '1',
            'token' => $token, 'pos' => '0', 'goto' => 'index.php?route=/database/sql', 'sql_query' => $sql,
            'sql_delimiter' => ';', 'show_query' => '1', 'fk_checks' => '1', 'SQL' => 'Go']), 200, ['1 row inserted']);
        try {
            $rows = $db->query($name, 'SELECT label FROM kiln_items');
        } catch (\mysqli_sql_exception $e) {
            $rows = [$e->getMessage()];
        }
        $run->assert('row is in the database', ($rows[0]['label'] ?? '') === 'from Kiln via phpMyAdmin', 'rows: ' . json_encode($rows));
        $run->expect('browse the table', $user->get("/index.php?route=/sql&db=$name&table=kiln_items&pos=0"), 200, ['from Kiln via phpMyAdmin']);
        $run->expect('log out', $user->post('/index.php?route=/logout', ['token' => $token, 'server' => '1']), 302);
        $run->expect('logged out', $user->get('/'), 200, ['pma_password']);
        $checks = ['/libraries/config.default.php' => [], '/templates/login/form.twig' => ['{%'], '/libraries/.htaccess' => ['Require']];
        foreach ($checks as $path => $secrets) {
            $run->refused("refuses $path", $user->get($path), $secrets, true);
        }
        $run->refused('refuses /config.inc.php~', $user->get('/config.inc.php~'), [self::PASSWORD], false);
    }
}

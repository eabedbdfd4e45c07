<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\MariaDbServer;

/**
 * Debian's `adminer` (4.8.1) served as Debian's Apache snippet serves it: a document root holding only a copy of
 * /etc/adminer/conf.php (as index.php), which loads Adminer from a copy of /usr/share/adminer outside the
 * document root, with Debian's plugins. The flow logs in to the test's MariaDB, creates a table, inserts and
 * browses a row, logs out.
 */
final class Adminer
{
    public const SOURCE = '/usr/share/adminer';
    public const CONF = '/etc/adminer/conf.php';
    public const PASSWORD = 'adminer-db-secret-71aa';

    public static function isInstalled(): bool
    {
        return is_file(self::SOURCE . '/adminer.php') && is_file(self::CONF);
    }

    public static function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        $name = self::database($stack);
        $db->createDatabase($name, $name, self::PASSWORD);
        $copy = SiteCopy::of(self::SOURCE, 'kiln-apps-adminer');
        $code = $copy->dir . '/adminer';
        rename($copy->root(), $code);
        mkdir($copy->root(), 0o755);
        mkdir($copy->dir . '/tmp', 0o1777);
        chmod($copy->dir . '/tmp', 0o1777);
        $conf = (string) file_get_contents(self::CONF);
        $copy->write('index.php', str_replace("'/usr/share/adminer'", var_export($code, true), $conf));
        $copy->write('index.php~', "<?php // an editor's backup: never served\n\$password = '" . self::PASSWORD . "';\n");
        $copy->write('.git/config', "[remote \"origin\"]\n\turl = https://deploy:" . self::PASSWORD . "@git.example/adminer\n");
        $copy->handToWebServer();
        return $copy;
    }

    public static function database(string $stack): string
    {
        return 'adm_' . preg_replace('/\W/', '_', $stack);
    }

    public static function flow(Run $run, Browser $user, MariaDbServer $db, string $stack): void
    {
        $name = self::database($stack);
        $server = $db->host() . ':' . $db->port();
        $run->expect('login form', $user->get('/'), 200, ['auth[server]', 'auth[password]']);
        $login = $run->expect('log in', $user->post('/', [
            'auth[driver]' => 'server', 'auth[server]' => $server, 'auth[username]' => $name,
            'auth[password]' => self::PASSWORD, 'auth[db]' => $name, 'auth[permanent]' => '1',
        ]), 302, ['Location: ?server=']);
        $base = '/' . ltrim(str_replace('/?', '?', $login->location()), '/');
        $run->expect('database overview', $user->get($base), 200, ['Create table', $name], ['auth[password]']);
        $form = $run->expect('SQL command form', $user->get("$base&sql="), 200, ['Execute', 'token'])->form("action=''");
        $sql = "CREATE TABLE kiln_items (id INT PRIMARY KEY, label VARCHAR(50));\nINSERT INTO kiln_items VALUES (1, 'from Kiln via Adminer');";
        $run->expect('run SQL', $user->post("$base&sql=", [...$form, 'query' => $sql, 'error_stops' => '1']), 200, ['Query executed OK']);
        try {
            $rows = $db->query($name, 'SELECT label FROM kiln_items');
        } catch (\mysqli_sql_exception $e) {
            $rows = [$e->getMessage()];
        }
        $run->assert('row is in the database', ($rows[0]['label'] ?? '') === 'from Kiln via Adminer', 'rows: ' . json_encode($rows));
        $run->expect('browse the table', $user->get("$base&select=kiln_items"), 200, ['from Kiln via Adminer']);
        $token = $user->get($base)->input('token');
        $logout = $run->expect('log out', $user->post($base, ['logout' => 'Logout', 'token' => $token]), 302, ['Location: ?server=']);
        $run->expect('logged out', $user->get('/' . ltrim(str_replace('/?', '?', $logout->location()), '/')), 200, ['auth[password]', 'Logout successful']);
        $run->expect('the database is closed after logout', $user->get("$base&select=kiln_items"), [200, 403], ['auth[password]'], ['from Kiln via Adminer']);
        $run->refused('refuses /index.php~', $user->get('/index.php~'), [self::PASSWORD], false);
        $run->refused('refuses /.git/config', $user->get('/.git/config'), [self::PASSWORD], false);
    }
}

<?php

declare(strict_types=1);

/*
 * The databases of `bench/run db`: a throwaway PostgreSQL 15 and MariaDB (tests/Support), each with a table
 * `items` of 10,000 rows (id, name), and bench/db/www copied to DIR/www with a config.php naming both.
 *
 *   php bench/db/prepare.php DIR
 *
 * Prints pg_url=, my_url=, pg_pid=, my_pid=, www=, then `ready`, and holds both servers until TERM or INT, when it
 * stops them by PID. A failure prints `error=...` and exits 1.
 */

use Kiln\Tests\Support\MariaDbServer;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PostgresServer;

require __DIR__ . '/../../vendor/autoload.php';
require __DIR__ . '/../lib/prepared.php';

$dir = $argv[1] ?? throw new Error('usage: php bench/db/prepare.php DIR');
benchHoldPrepared(static function () use ($dir): array {
    $pg = PostgresServer::start();
    $my = MariaDbServer::start();
    $rows = [];
    for ($i = 1; $i <= 10000; $i++) {
        $rows[] = "($i, 'item number $i')";
    }
    $values = implode(',', $rows);
    $admin = $pg->admin();
    pg_query($admin, 'CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)');
    pg_query($admin, "INSERT INTO items VALUES $values");
    pg_query($admin, 'ANALYZE items');
    pg_close($admin);
    $mysqli = $my->admin();
    $mysqli->query('CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL) ENGINE=InnoDB');
    $mysqli->query("INSERT INTO items VALUES $values");
    $mysqli->close();
    $www = "$dir/www";
    mkdir($www, 0o755, true);
    foreach (['pg.php', 'my.php'] as $file) {
        copy(__DIR__ . "/www/$file", "$www/$file");
    }
    file_put_contents("$www/config.php", "<?php\nreturn " . var_export(['pg' => $pg->url(), 'my' => $my->url()], true) . ";\n");
    chmod($dir, 0o755);
    $release = static function () use ($pg, $my, $www): void {
        $pg->stop();
        $my->stop();
        PeerProcess::removeDir($www);
    };

    return [['pg_url' => $pg->url(), 'my_url' => $my->url(), 'www' => $www], $release];
});

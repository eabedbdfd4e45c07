<?php

declare(strict_types=1);

// Databases on the coroutine tier: ten queries side by side, a slow query that does not hold up the worker,
// a transaction, and (PostgreSQL) NOTIFY relayed to server-sent events. The database comes from DATABASE_URL (postgres://… or mysql://…, see docs/databases.md):
//   DATABASE_URL='postgres://app:secret@127.0.0.1:5432/app?max=20' bin/kiln serve examples/db/app.php
// tests/Integration/Db/ExampleAppTest.php drives this file.

use Kiln\App\App;
use Kiln\App\HttpErrorException;
use Kiln\Db\DbException;
use Kiln\Db\DbKind;
use Kiln\Db\Dsn;
use Kiln\Db\Pool;
use Kiln\Db\Postgres\PgConnector;
use Kiln\Db\Transaction;
use Kiln\Http\Request;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Loop;

$url = getenv('DATABASE_URL');
if (!\is_string($url) || $url === '') {
    throw new \Error('Set DATABASE_URL, e.g. postgres://user:password@127.0.0.1:5432/db or mysql://user:password@127.0.0.1:3306/db');
}
$kind = Dsn::parse($url)->kind;
// One pool per worker: nothing connects until the first query, which runs in the worker that serves it.
$db = Pool::fromDsn($url);
// The placeholders and the sleep function are the only differences between the two databases here.
$sleep = $kind === DbKind::Postgres ? 'SELECT pg_sleep($1::float8) AS slept' : 'SELECT SLEEP(?) AS slept';
$param = static fn(int $n): string => $kind === DbKind::Postgres ? "\$$n::int" : "?";

$app = new App();

$app->get('/hello', fn() => 'Hello, World!');

// Ten queries at once, each on its own connection of the pool: the answer takes as long as the slowest.
$app->get('/db/ten', function () use ($db, $param): array {
    $started = microtime(true);
    $futures = [];
    for ($i = 1; $i <= 10; $i++) {
        $futures[] = async(fn() => $db->query("SELECT {$param(1)} * {$param(2)} AS product", [$i, $i])->scalar());
    }

    return ['squares' => all($futures), 'ms' => (int) round((microtime(true) - $started) * 1000)];
});

// A slow query suspends this request only: the worker answers /hello meanwhile.
$app->get('/db/sleep', function (Request $request) use ($db, $sleep): array {
    $given = $request->query()['s'] ?? '1';
    $seconds = \is_string($given) && is_numeric($given) ? (float) $given : -1.0;
    if ($seconds < 0 || $seconds > 10) {
        throw new HttpErrorException(400, 's must be between 0 and 10 seconds');
    }
    $db->query($sleep, [$seconds]);

    return ['slept' => $seconds, 'pid' => getmypid()];
});

// A transaction: both rows or neither.
$app->post('/db/counter', function () use ($db, $kind): array {
    $db->execute($kind === DbKind::Postgres
        ? 'CREATE TABLE IF NOT EXISTS hits (id serial PRIMARY KEY, at timestamptz DEFAULT now())'
        : 'CREATE TABLE IF NOT EXISTS hits (id INT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)');

    return $db->transaction(function (Transaction $tx) use ($kind): array {
        $tx->execute($kind === DbKind::Postgres ? 'INSERT INTO hits DEFAULT VALUES' : 'INSERT INTO hits () VALUES ()');

        return ['hits' => $tx->query('SELECT count(*) AS n FROM hits')->scalar()];
    });
});

// PostgreSQL only: NOTIFY on the channel kiln_events reaches every SSE client of /events/db. One worker relays
// (publish() already reaches every worker): whichever holds an advisory lock, taken on a connection it keeps.
// If that worker goes away, so does its session and its lock, and another worker takes over within 5 s.
if ($kind === DbKind::Postgres) {
    $app->sse('/events/{topic:db}');
    $app->post('/db/notify', function (Request $request) use ($db): array {
        $db->execute('SELECT pg_notify($1, $2)', ['kiln_events', $request->body()]);

        return ['notified' => true];
    });
    Loop::defer(static fn() => Loop::async(static function () use ($app, $db, $url): void {
        do {
            $lock = null;
            try {
                $lock = $db->acquire();
                if ($lock->run('SELECT pg_try_advisory_lock(4242) AS held')->scalar() === true) {
                    $listener = (new PgConnector(Dsn::parse($url)))->listen('kiln_events');
                    foreach ($listener as $notification) {
                        $app->publish('db', $notification->payload);
                    }
                }
            } catch (DbException $e) {
                error_log("[examples/db] the NOTIFY relay stopped ({$e->getMessage()}); again in 5 s");
            } finally {
                if ($lock !== null) {
                    try {
                        $lock->isBroken() || $lock->run('SELECT pg_advisory_unlock_all()'); // back to the pool without it
                    } finally {
                        $db->release($lock);
                    }
                }
            }
            delay(5.0);
        } while (Loop::isRunning());
    }));
}

return $app;

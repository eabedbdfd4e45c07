<?php

declare(strict_types=1);

// `bench/run db`: the same point select as bench/db/www/{pg,my}.php, through Kiln\Db on the coroutine tier.
// BENCH_PG_URL and BENCH_MY_URL name the databases (bench/db/prepare.php makes them). Connections stay open for the
// whole run (idle=600), as PDO's persistent connections do under php-fpm: reopening 32 at once per worker after an
// idle minute costs a second or more of connects (SCRAM on PostgreSQL), which is not what the run measures.
// BENCH_DB_POOL_OPTIONS adds options to both URLs, for experiments: `BENCH_KILN_ENV="BENCH_DB_POOL_OPTIONS=&timeout=0"`
// runs the statements without the pool's statement timeout.

use Kiln\App\App;
use Kiln\Db\Pool;

$app = new App();
$options = '?max=32&idle=600' . (string) getenv('BENCH_DB_POOL_OPTIONS');
$pg = Pool::fromDsn((string) getenv('BENCH_PG_URL') . $options);
$my = Pool::fromDsn((string) getenv('BENCH_MY_URL') . $options);
$app->get('/pg', fn() => $pg->query('SELECT id, name FROM items WHERE id = $1', [random_int(1, 10000)])->first());
$app->get('/my', fn() => $my->query('SELECT id, name FROM items WHERE id = ?', [random_int(1, 10000)])->first());

return $app;

<?php

declare(strict_types=1);

// `bench/run db`: the same point select as bench/db/www/{pg,my}.php, through Kiln\Db on the coroutine tier.
// BENCH_PG_URL and BENCH_MY_URL name the databases (bench/db/prepare.php makes them).

use Kiln\App\App;
use Kiln\Db\Pool;

$app = new App();
$pg = Pool::fromDsn((string) getenv('BENCH_PG_URL') . '?max=32');
$my = Pool::fromDsn((string) getenv('BENCH_MY_URL') . '?max=32');
$app->get('/pg', fn() => $pg->query('SELECT id, name FROM items WHERE id = $1', [random_int(1, 10000)])->first());
$app->get('/my', fn() => $my->query('SELECT id, name FROM items WHERE id = ?', [random_int(1, 10000)])->first());

return $app;

<?php

declare(strict_types=1);

/*
 * The fork tier's cost per request: `php bench/micro/fork.php [N]` (default 300). Round trips, one at a
 * time, through ForkServerProcess (connect, SCGI request, fork, script, CGI response, child exit) to
 * bench/www/hello.php, against the same script through a CGI process (php-cgi, when installed) as the
 * per-request-process peer. Reports median and p90 in ms.
 */

use Kiln\Isolation\Cgi\CgiLauncher;
use Kiln\Isolation\Fork\ForkServerProcess;

use function Kiln\Loop\async;

use Kiln\Loop\Loop;
use Kiln\Site\Fork\ScriptChild;

require __DIR__ . '/../../src/bootstrap.php';

$n = max(10, (int) ($argv[1] ?? 300));
$script = (string) realpath(__DIR__ . '/../www/hello.php');
$params = ['SCRIPT_FILENAME' => $script, 'SCRIPT_NAME' => '/hello.php', 'REQUEST_METHOD' => 'GET', 'QUERY_STRING' => '', 'REDIRECT_STATUS' => '200'];

/**
 * @param Closure(): string $once one round trip, returning the body
 * @return array{float, float} median and p90 in ms
 */
function measure(int $n, Closure $once): array
{
    for ($i = 0; $i < 10; $i++) {
        $once(); // warm up
    }
    $times = [];
    for ($i = 0; $i < $n; $i++) {
        $start = hrtime(true);
        $body = $once();
        $times[] = (hrtime(true) - $start) / 1e6;
        if ($body === '') {
            throw new RuntimeException('empty response');
        }
    }
    sort($times);
    return [$times[intdiv($n, 2)], $times[(int) ($n * 0.9)]];
}

$results = async(static function () use ($n, $params): array {
    $quiet = static function (string $level, string $message): void {};
    $fork = new ForkServerProcess(ScriptChild::class, 4, 30.0, log: $quiet);
    $rows = ['fork (Kiln fork server)' => measure($n, static function () use ($fork, $params): string {
        $response = $fork->send($params);
        $response->head();
        return implode('', iterator_to_array($response->body(), false));
    })];
    $fork->stop();
    $phpCgi = trim((string) shell_exec('command -v php-cgi'));
    if ($phpCgi !== '') {
        $launcher = new CgiLauncher(4, 30.0);
        $rows['php-cgi as CGI (process per request)'] = measure(intdiv($n, 3), static function () use ($launcher, $phpCgi, $params): string {
            $process = $launcher->start([$phpCgi], $params + ['PATH' => '/usr/bin:/bin'], dirname($params['SCRIPT_FILENAME']));
            $process->head();
            return implode('', iterator_to_array($process->body(), false));
        });
    }
    Loop::defer(static fn() => Loop::stop());
    return $rows;
});
Loop::run();
foreach ($results->await() as $name => [$median, $p90]) {
    printf("%-40s median %6.2f ms   p90 %6.2f ms\n", $name, $median, $p90);
}

<?php

declare(strict_types=1);

// Every kind of process a Kiln server runs, for the crash tests (tests/Integration/Server/ProcessHygieneTest.php):
// workers, task workers (--task-workers), a user process that never returns, the isolated tier's php-cgi
// parent and children (/isolated/...), and the fork tier's fork server and children (/fork/...).

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Isolation\PhpCgi\PhpCgiClient;
use Kiln\Isolation\PhpCgi\PhpCgiOptions;
use Kiln\Site\Fork\ForkRunner;
use Kiln\Site\Isolated\PhpCgiRunner;
use Kiln\Site\Script;

$root = (string) realpath(__DIR__ . '/../isolated/public');
// Made on first use, in a worker: the task workers and the user process load this file too.
$isolatedRunner = null;
$isolated = static function () use (&$isolatedRunner): PhpCgiRunner {
    return $isolatedRunner ??= new PhpCgiRunner(PhpCgiClient::create(new PhpCgiOptions(binary: 'php-cgi', size: 2, maxRequests: 10000, queue: 64, timeLimit: 30.0)));
};
$forkRunner = null;
$fork = static function () use (&$forkRunner): ForkRunner {
    return $forkRunner ??= ForkRunner::create(maxChildren: 4, timeLimit: 30.0);
};

$app = new App();

$script = static function (string $path) use ($root): ?Script {
    $file = realpath("$root/$path");
    return $file === false || !str_starts_with($file, "$root/") || !is_file($file) ? null : new Script($file, "/$path", '', $root);
};
$app->any('/isolated/{path:.+}', static fn(Request $request, string $path): Response => ($s = $script($path)) === null
    ? Response::text("not found\n", 404) : $isolated()->run($request, $s));
$app->any('/fork/{path:.+}', static fn(Request $request, string $path): Response => ($s = $script($path)) === null
    ? Response::text("not found\n", 404) : $fork()->run($request, $s));
// Starts tests/Fixtures/hygiene/detached.php in the background, as `nohup ... &` from a script would.
$app->get('/detach', static function (Request $request): string {
    $query = $request->query();
    $marker = \is_string($query['marker'] ?? null) ? $query['marker'] : '';
    $mode = ($query['mode'] ?? '') === 'deaf' ? 'deaf' : 'term';
    exec('nohup ' . escapeshellarg(PHP_BINARY) . ' ' . escapeshellarg(__DIR__ . '/detached.php') . ' ' . escapeshellarg($marker) . " $mode >/dev/null 2>&1 &");
    return "started\n";
});
$app->get('/fork-server-pid', static fn(): string => (string) $fork()->server()->pid());

// A user process that never returns, and does nothing that would notice its supervisor is gone.
$app->process('stubborn', static function (): void {
    for (;;) {
        sleep(1);
    }
});

return $app;

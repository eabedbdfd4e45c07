<?php

declare(strict_types=1);

// The floor for running a script in the worker: the least a `hello.php` request needs in-process
// (superglobals, include at global-ish scope, output captured, response code and headers read and
// cleared), with none of the sequential tier's path resolution, .htaccess, time limit, ini, session,
// handler, directory or include-list resets. bench/run's `kiln-include` stack serves it next to
// `kiln-sequential` to show what the tier's own machinery costs. Not a way to serve a site.

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

return new class ((string) getenv('KILN_BENCH_SCRIPT')) implements RequestHandler {
    /** @var array<string, mixed> */
    private readonly array $server;

    public function __construct(private readonly string $script)
    {
        $this->server = $_SERVER;
    }

    public function handle(Request $request): Response
    {
        $_SERVER = [
            'REQUEST_METHOD' => $request->method(), 'REQUEST_URI' => $request->target(), 'QUERY_STRING' => '',
            'SCRIPT_FILENAME' => $this->script, 'SCRIPT_NAME' => '/hello.php', 'PHP_SELF' => '/hello.php',
            'HTTP_HOST' => $request->header('host') ?? '', 'REQUEST_TIME_FLOAT' => microtime(true), 'REQUEST_TIME' => time(),
        ] + $this->server;
        [$_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST] = [[], [], [], [], []];
        ob_start();
        include $this->script;
        $body = (string) ob_get_clean();
        $status = http_response_code();
        header_remove();
        http_response_code(200);
        return new Response(\is_int($status) ? $status : 200, ['Content-Type' => 'text/html; charset=UTF-8'], $body);
    }
};

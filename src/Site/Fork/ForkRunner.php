<?php

declare(strict_types=1);

namespace Kiln\Site\Fork;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiTimeoutException;
use Kiln\Isolation\Fork\ForkResponse;
use Kiln\Isolation\Fork\ForkServerProcess;
use Kiln\Isolation\Fork\ForkUnavailableException;
use Kiln\Server\WorkerLog;
use Kiln\Site\Cgi\CgiResponses;
use Kiln\Site\CgiParams;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Store\NodeBus;

/**
 * The `fork` tier: each request runs in a fresh child forked from the worker's fork server (a small PHP
 * process that loaded only the autoloader; see ForkServer and ScriptChild), so no state survives a
 * request and no php-cgi is needed. The worker sends the CGI meta-variables and the body over a unix
 * socket (SCGI) and streams the child's CGI response back.
 *
 * 503 + Retry-After when fork-max children run (the server's answer), 504 past the time limit (the
 * child's process group is killed), 502 when the child dies without a response (crash, kill) or the fork
 * server cannot be started.
 */
final class ForkRunner implements ScriptRunner
{
    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /** @param (\Closure(string $level, string $message): void)|null $log the worker's error log; null: WorkerLog (the worker's) */
    public function __construct(private readonly ForkServerProcess $server, ?\Closure $log = null)
    {
        $this->log = $log ?? WorkerLog::write(...); // the worker's error log (STDERR outside a worker)
    }

    /**
     * A runner with its own fork server (started on the first request).
     *
     * @param (\Closure(string $level, string $message): void)|null $log
     * @param array<string, string> $phpIni --php-ini settings: `-d` of the fork server, so every child has them
     */
    public static function create(int $maxChildren = 8, float $timeLimit = 30.0, ?\Closure $log = null, array $phpIni = []): self
    {
        $options = ForkServerProcess::DEFAULT_PHP_OPTIONS;
        foreach ($phpIni as $name => $value) {
            $options[] = "$name=$value";
        }
        return new self(new ForkServerProcess(ScriptChild::class, $maxChildren, $timeLimit, phpOptions: $options, log: $log), $log);
    }

    public function server(): ForkServerProcess
    {
        return $this->server;
    }

    public function run(Request $request, Script $script): Response
    {
        $params = CgiParams::build($request, $script);
        unset($params['HTTP_PROXY']);
        // The script's way to the node bus (Kiln\Store\Publish::to()): set here, never from the request.
        foreach (NodeBus::scriptParams() as $name => $value) {
            $params[$name] = $value;
        }
        try {
            $response = $this->server->send($params, $request->isBodySpooled() ? $request->bodyStream() : $request->body());
        } catch (ForkUnavailableException $e) {
            ($this->log)('error', 'fork: ' . $e->getMessage());

            return CgiResponses::error($request, 502);
        }
        try {
            $head = $response->head();
        } catch (CgiTimeoutException) {
            ($this->log)('error', "fork {$script->scriptName}: no response within {$this->server->timeLimit}s, killed");

            return CgiResponses::error($request, 504);
        } catch (CgiResponseException $e) {
            ($this->log)('error', "fork {$script->scriptName}: the child ended without a valid response: " . $e->getMessage());

            return CgiResponses::error($request, 502);
        }

        return CgiResponses::forMethod($request->method(), $head, $this->stream($response, $script->scriptName));
    }

    /** @return \Generator<int, string> */
    private function stream(ForkResponse $response, string $name): \Generator
    {
        try {
            yield from $response->body();
        } catch (CgiTimeoutException $e) {
            ($this->log)('error', "fork $name: " . $e->getMessage() . ' while streaming, killed');
            throw $e;
        }
    }
}

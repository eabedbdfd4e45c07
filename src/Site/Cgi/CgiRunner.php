<?php

declare(strict_types=1);

namespace Kiln\Site\Cgi;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Isolation\Cgi\CgiBusyException;
use Kiln\Isolation\Cgi\CgiHead;
use Kiln\Isolation\Cgi\CgiLauncher;
use Kiln\Isolation\Cgi\CgiProcess;
use Kiln\Isolation\Cgi\CgiRedirect;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiStartException;
use Kiln\Isolation\Cgi\CgiTimeoutException;
use Kiln\Server\WorkerLog;
use Kiln\Site\CgiParams;
use Kiln\Site\Internal\LocalRedirect;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;

/**
 * The `cgi` tier (RFC 3875): runs the script's file as an executable, one process per request, with the
 * CGI meta-variables (CgiParams) plus PATH as its whole environment, the request body on stdin, and its
 * stdout parsed as a CGI response and streamed to the client.
 *
 * A script file that is not executable gets 403 (CgiBin refuses it before; this guards other callers).
 * Answers 503 + Retry-After when the launcher's slots are full, 504 when the script runs past the time
 * limit (the script and its process group are killed), 502 when it cannot start or writes a malformed
 * response. A local redirect (`Location: /path` without `Status`) is re-dispatched as a GET to
 * $redirects (at most LocalRedirect::MAX deep); without $redirects it goes to the client as a 302.
 */
final class CgiRunner implements ScriptRunner
{
    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /**
     * @param (\Closure(string $level, string $message): void)|null $log the worker's error log; null: WorkerLog (the worker's)
     */
    public function __construct(
        private readonly CgiLauncher $launcher,
        private readonly ?RequestHandler $redirects = null,
        ?\Closure $log = null,
        private readonly string $path = '/usr/local/bin:/usr/bin:/bin',
        private readonly int $retryAfter = 1,
    ) {
        $this->log = $log ?? WorkerLog::write(...); // the worker's error log (STDERR outside a worker)
    }

    public function run(Request $request, Script $script): Response
    {
        if (!\is_file($script->filename) || !\is_executable($script->filename)) {
            return ErrorResponse::forRequest($request, 403);
        }
        $env = CgiParams::build($request, $script);
        unset($env['HTTP_PROXY']); // httpoxy: a client's Proxy header must never become a proxy setting
        $env['PATH'] = $this->path;
        $name = $script->scriptName;
        try {
            $process = $this->launcher->start(
                [$script->filename],
                $env,
                \dirname($script->filename),
                $request->isBodySpooled() ? $request->bodyStream() : $request->body(),
                $this->stderrLogger($name),
            );
        } catch (CgiBusyException) {
            $request->setAttribute(Request::REFUSED, 'cgi_slots');

            return CgiResponses::error($request, 503, $this->retryAfter);
        } catch (CgiStartException $e) {
            ($this->log)('error', "cgi $name: " . $e->getMessage());

            return CgiResponses::error($request, 502);
        }
        try {
            $head = $process->head();
        } catch (CgiTimeoutException) {
            ($this->log)('error', "cgi $name: no response within {$this->launcher->timeout}s, killed (pid {$process->pid()})");

            return CgiResponses::error($request, 504);
        } catch (CgiResponseException $e) {
            ($this->log)('error', "cgi $name: " . $e->getMessage());

            return CgiResponses::error($request, 502);
        }
        if ($head->redirect === CgiRedirect::Local && $this->redirects !== null) {
            $process->close(); // frees its slot before the redirect target takes one

            return $this->redirect($request, $head, $name);
        }

        return CgiResponses::forMethod($request->method(), $head, $this->stream($process, $name));
    }

    /** @return \Generator<int, string> */
    private function stream(CgiProcess $process, string $name): \Generator
    {
        try {
            yield from $process->body();
        } catch (CgiTimeoutException $e) {
            ($this->log)('error', "cgi $name: " . $e->getMessage() . ' while streaming, killed');
            throw $e;
        }
    }

    private function redirect(Request $request, CgiHead $head, string $name): Response
    {
        \assert($this->redirects !== null);
        $location = (string) $head->location;
        $response = LocalRedirect::follow($request, $location, $this->redirects);
        if ($response === null) {
            ($this->log)('error', "cgi $name: unusable local redirect to " . \json_encode($location) . ' (not a local path, or more than ' . LocalRedirect::MAX . ' deep)');
            return CgiResponses::error($request, 502);
        }
        return $response;
    }

    /** @return \Closure(string): void logs whole lines of the script's stderr */
    private function stderrLogger(string $name): \Closure
    {
        $log = $this->log;
        $partial = '';

        return static function (string $chunk) use ($log, $name, &$partial): void {
            $lines = \explode("\n", $partial . $chunk);
            $partial = (string) \array_pop($lines);
            if (($chunk === '' && $partial !== '') || \strlen($partial) > 8192) {
                $lines[] = $partial;
                $partial = '';
            }
            foreach ($lines as $line) {
                $log('warning', "cgi $name stderr: " . \rtrim($line, "\r"));
            }
        };
    }
}

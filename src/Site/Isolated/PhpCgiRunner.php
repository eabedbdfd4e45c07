<?php

declare(strict_types=1);

namespace Kiln\Site\Isolated;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Isolation\Cgi\CgiHeadCache;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiResponseParser;
use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\PhpCgi\PhpCgiClient;
use Kiln\Isolation\PhpCgi\PhpCgiExchange;
use Kiln\Isolation\PhpCgi\PhpCgiOptions;
use Kiln\Isolation\PhpCgi\PoolBusyException;
use Kiln\Isolation\PhpCgi\PoolUnavailableException;
use Kiln\Server\StderrFiler;
use Kiln\Server\WorkerLog;
use Kiln\Site\CgiParams;
use Kiln\Site\Isolated\Internal\LogTag;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\SiteConfig;
use Kiln\Store\NodeBus;

/**
 * The `isolated` tier: each script runs in a warm php-cgi child of this worker's pool (PHP's own CGI SAPI,
 * so every request starts from a fresh PHP state: constants, functions, classes, statics, globals, ini).
 *
 * The params are CgiParams::build(), the request body is STDIN, and the CGI response is parsed. A response
 * that is complete by the time its head is read (most are) is sent whole, with a Content-Length; a longer
 * or slower one streams to the client as php-cgi writes it. STDERR lines (PHP's logged errors) go to the error log with
 * the request id. Answers: 503 + Retry-After when every child is busy and the queue is full (or the wait
 * passed the time limit), 502 when php-cgi cannot start or the exchange breaks, 504 past the time limit
 * (its connection is closed; PHP's max_execution_time, a second past the time limit, ends a script that spins on,
 * and the child takes the next request). When the client goes away mid-response, the request is given up
 * (ABORT_REQUEST) and the child returns to the pool once it is done (see PhpCgiExchange).
 * A `Location: /path` without `Status` is sent as a 302, as nginx does with php-fpm.
 */
final class PhpCgiRunner implements ScriptRunner
{
    /** Bytes of a response already arrived that are held to send it whole; past this it streams. */
    private const WHOLE_LIMIT = 1 << 20;

    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /** The header blocks the scripts sent lately, parsed (most responses repeat one). */
    private readonly CgiHeadCache $heads;

    /**
     * NodeBus::scriptParams() of this worker, asked for at its first request: the same for the runner's life
     * (a runner is made in the worker that uses it), and asking costs a getpid() per request.
     *
     * @var array<string, string>|null
     */
    private ?array $busParams = null;

    /** @param (\Closure(string $level, string $message): void)|null $log the worker's error log; null: WorkerLog (the worker's) */
    public function __construct(
        private readonly PhpCgiClient $client,
        ?\Closure $log = null,
        private readonly int $retryAfter = 1,
        private readonly int $maxHeaderBytes = CgiResponseParser::DEFAULT_MAX_HEADER_BYTES,
    ) {
        $this->log = $log ?? WorkerLog::write(...); // the worker's error log (STDERR outside a worker)
        $this->heads = new CgiHeadCache();
    }

    /** With a pool of its own, as `kiln serve --tier=isolated` configures it. Call in the worker. */
    public static function fromConfig(SiteConfig $config, ?\Closure $log = null): self
    {
        return self::create(new PhpCgiOptions(
            $config->phpCgi ?? 'php-cgi',
            $config->poolSize,
            $config->poolMaxRequests,
            $config->poolQueue,
            $config->timeLimit,
            $config->phpIni,
            $config->passEnv,
            $config->poolJit,
            $config->poolReuse,
            $config->poolBatch,
        ), $log);
    }

    /** With a pool of its own. Call in the worker (app.php, a service factory): the supervisor runs the children. */
    public static function create(PhpCgiOptions $options, ?\Closure $log = null): self
    {
        return new self(PhpCgiClient::create($options), $log);
    }

    public function run(Request $request, Script $script): Response
    {
        $params = CgiParams::forPhpFastCgi(CgiParams::build($request, $script));
        unset($params['HTTP_PROXY']); // httpoxy: never, whatever built the params
        // The script's way to the node bus (Kiln\Store\Publish::to()): set here, never from the request.
        foreach ($this->busParams ??= NodeBus::scriptParams() as $name => $value) {
            $params[$name] = $value;
        }
        $tag = new LogTag($request, $script);
        $log = $this->log;
        $body = $request->isBodySpooled() ? $request->bodyStream() : $request->body();
        try {
            // The script's messages, one entry each (an uncaught exception with its trace) at PHP's level; the
            // filer is made for the first line (most requests write none).
            $stderr = null;
            $exchange = $this->client->request($params, $body, static function (string $line) use ($log, $tag, &$stderr): void {
                $stderr ??= new StderrFiler(static fn(string $level, string $message) => $log($level, "$tag: $message"));
                $stderr->write($line . "\n");
            });
        } catch (PoolBusyException $e) {
            $log('warning', "$tag: 503: {$e->getMessage()}");
            $request->setAttribute(Request::REFUSED, 'php_cgi_queue');
            return self::error($request, 503, ['Retry-After' => (string) $this->retryAfter]);
        } catch (PoolUnavailableException $e) {
            $log('error', "$tag: 502: {$e->getMessage()}");
            return self::error($request, 502);
        } catch (FastCgiTimeoutException $e) {
            $log('error', "$tag: 504: {$e->getMessage()}; its connection is closed (the child ends the script at max_execution_time)");
            return self::error($request, 504);
        } catch (FastCgiException $e) {
            $log('error', "$tag: 502: {$e->getMessage()}");
            return self::error($request, 502);
        }
        $parser = new CgiResponseParser($this->maxHeaderBytes, $this->heads);
        try {
            $head = null;
            while ($head === null) {
                $chunk = $exchange->read();
                $head = $chunk === null ? $parser->end() : $parser->feed($chunk);
            }
        } catch (FastCgiTimeoutException $e) {
            $log('error', "$tag: 504: {$e->getMessage()}; its connection is closed (the child ends the script at max_execution_time)");
            return self::error($request, 504);
        } catch (FastCgiException | CgiResponseException $e) {
            $exchange->abandon();
            $log('error', "$tag: 502: {$e->getMessage()}");
            return self::error($request, 502);
        }
        $body = $parser->body();
        if ($request->method() === 'HEAD') {
            // No body goes out, so none is read: wait for the end here, and the child is free at once.
            try {
                while ($exchange->read() !== null) {
                }
            } catch (FastCgiException $e) {
                $log('error', "$tag: {$e->getMessage()}");
            }
            $body = $this->stream($exchange, $body, $tag);
        } else {
            try {
                $body = $this->body($exchange, $body, $tag);
            } catch (FastCgiException $e) {
                $log('error', "$tag: 502: {$e->getMessage()}");
                return self::error($request, 502);
            }
        }
        $response = new Response($head->status, [], $body);
        foreach ($head->forwardedHeaders() as [$name, $value]) {
            $response->addHeader($name, $value);
        }
        return $response;
    }

    /**
     * The body: a string when END_REQUEST is here already (nearly every small script: php-cgi writes its
     * output and END_REQUEST at once), so it goes out in one write with a Content-Length; else a stream.
     * Only what has arrived is read, never waited for, so a script that flushes early output still streams.
     *
     * @return string|\Generator<int, string>
     *
     * @throws FastCgiException
     */
    private function body(PhpCgiExchange $exchange, string $first, LogTag $tag): string|\Generator
    {
        while (\strlen($first) < self::WHOLE_LIMIT) {
            $chunk = $exchange->poll();
            if ($chunk === null) {
                return $first;
            }
            if ($chunk === '') {
                break;
            }
            $first .= $chunk;
        }
        return $this->stream($exchange, $first, $tag);
    }

    /**
     * The body as php-cgi writes it. Left unfinished (client gone) or never started (HEAD), the generator
     * is destroyed and so is the exchange, which gives the request up.
     *
     * @return \Generator<int, string>
     */
    private function stream(PhpCgiExchange $exchange, string $first, LogTag $tag): \Generator
    {
        try {
            if ($first !== '') {
                yield $first;
            }
            while (($chunk = $exchange->read()) !== null) {
                yield $chunk;
            }
        } catch (FastCgiException $e) {
            ($this->log)('error', "$tag: the response was cut: {$e->getMessage()}");
            throw $e;
        } finally {
            $exchange->abandon();
        }
    }

    /** @param array<string, string> $headers */
    private static function error(Request $request, int $status, array $headers = []): Response
    {
        return ErrorResponse::forRequest($request, $status, '', $headers);
    }
}

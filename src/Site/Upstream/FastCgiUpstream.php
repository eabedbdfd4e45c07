<?php

declare(strict_types=1);

namespace Kiln\Site\Upstream;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Isolation\Cgi\CgiHead;
use Kiln\Isolation\Cgi\CgiRedirect;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiResponseParser;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiOptions;
use Kiln\Isolation\FastCgi\FastCgiResponse;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\FastCgi\FastCgiUnavailableException;
use Kiln\Loop\CancelledException;
use Kiln\Loop\DeferredCancellation;
use Kiln\Loop\Loop;
use Kiln\Server\WorkerLog;
use Kiln\Site\CgiParams;
use Kiln\Site\Internal\LocalRedirect;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\SiteConfig;

/**
 * The `fastcgi` tier: forwards the script to an existing FastCGI responder (php-fpm, or another language's)
 * chosen by a FastCgiUpstreamMap, with the CGI meta-variables as params and the request body streamed as
 * STDIN (from its temp file when spooled); the CGI response on STDOUT is parsed and its body streamed to the
 * client as it arrives. STDERR lines go to the error log, tagged with the script and the request id.
 *
 * Answers 502 when the responder cannot be reached, closes without answering, breaks the protocol or writes
 * a malformed CGI response; 503 + Retry-After when it says it is overloaded; 504 when the response head does
 * not arrive within $timeLimit seconds (the request is then aborted) or the responder stays silent longer
 * than the client's read timeout. The time limit covers the head only, so a long page or an event stream
 * keeps flowing; the responder's own limits (php-fpm request_terminate_timeout) bound the rest.
 * The script's php.ini values (.htaccess `php_value`) go as `PHP_VALUE`.
 * A local redirect (`Location: /path` without `Status`, RFC 3875 §6.2.2) is re-dispatched as a GET to
 * $redirects; without one it goes to the client as a 302, as nginx does.
 */
final class FastCgiUpstream implements ScriptRunner
{
    /** Body bytes already received with the head that are taken at once, before streaming the rest. */
    private const PREFETCH = 65536;


    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /**
     * @param (\Closure(string $level, string $message): void)|null $log the worker's error log; null: WorkerLog (the worker's)
     * @param float $timeLimit seconds for the response head (SiteConfig::$timeLimit); 0: only the client's limits
     */
    public function __construct(
        private readonly FastCgiUpstreamMap $map,
        private readonly FastCgiClient $client = new FastCgiClient(),
        ?\Closure $log = null,
        private readonly float $timeLimit = 30.0,
        private readonly ?RequestHandler $redirects = null,
        private readonly int $retryAfter = 5,
        private readonly int $maxHeaderBytes = CgiResponseParser::DEFAULT_MAX_HEADER_BYTES,
    ) {
        if (!($timeLimit >= 0) || \is_infinite($timeLimit)) {
            throw new \ValueError("The FastCGI time limit is a number of seconds (0: none), got {$timeLimit}");
        }
        $this->log = $log ?? WorkerLog::write(...); // the worker's error log (STDERR outside a worker)
    }

    /**
     * The runner of the fastcgi tier for one address (`--fastcgi`, or one `--fastcgi-map` entry), with a client
     * of its own. By default each request opens its own connection, as nginx does without fastcgi_keep_conn:
     * a kept connection pins a php-fpm child, and the workers of a node together must never keep more
     * connections than php-fpm has children (pm.max_children) or requests stall until idle ones time out.
     * With $keepConnections, keep $maxConnections * workers <= pm.max_children.
     *
     * @param (\Closure(string $level, string $message): void)|null $log
     */
    public static function create(
        string $address,
        SiteConfig $config,
        ?\Closure $log = null,
        bool $keepConnections = false,
        int $maxConnections = 8,
        ?RequestHandler $redirects = null,
    ): self {
        $options = new FastCgiOptions(
            readTimeout: $config->timeLimit > 0 ? \max(60.0, $config->timeLimit) : 3600.0,
            maxConnections: $maxConnections,
            keepConnections: $keepConnections,
        );

        return new self(FastCgiUpstreamMap::single($address), new FastCgiClient($options), $log, $config->timeLimit, $redirects);
    }

    public function run(Request $request, Script $script): Response
    {
        $address = $this->map->addressFor($script);
        $label = "fastcgi {$script->scriptName}" . self::requestId($request);
        if ($address === null) {
            ($this->log)('error', "{$label}: no FastCGI responder is mapped to this file's extension");

            return self::error($request, 502);
        }
        $label .= " ({$address})";
        $limit = new DeferredCancellation();
        $timedOut = false;
        $timer = $this->timeLimit > 0
            ? Loop::delay($this->timeLimit, static function () use ($limit, &$timedOut): void {
                $timedOut = true;
                $limit->cancel();
            })
            : null;
        $fcgi = null;
        try {
            $fcgi = $this->client->request(
                $address,
                CgiParams::forPhpFastCgi(CgiParams::build($request, $script, self::phpValue($script))),
                $request->isBodySpooled() ? $request->bodyStream() : $request->body(),
                $this->stderrLogger($label),
                $limit->getCancellation(),
            );
            [$head, $first] = $this->readHead($fcgi);
        } catch (CancelledException $e) {
            if (!$timedOut) {
                throw $e;
            }
            ($this->log)('error', "{$label}: no response head within the time limit of {$this->timeLimit} s, aborted");

            return self::error($request, 504);
        } catch (FastCgiTimeoutException $e) {
            ($this->log)('error', "{$label}: {$e->getMessage()}");

            return self::error($request, 504);
        } catch (FastCgiUnavailableException $e) {
            ($this->log)('error', "{$label}: {$e->getMessage()}");
            if ($e->overloaded) {
                $request->setAttribute(Request::REFUSED, 'upstream_overloaded');
            }

            return $e->overloaded ? self::error($request, 503, ['Retry-After' => (string) $this->retryAfter]) : self::error($request, 502);
        } catch (FastCgiException | CgiResponseException $e) {
            $fcgi?->abort();
            ($this->log)('error', "{$label}: {$e->getMessage()}");

            return self::error($request, 502);
        } finally {
            if ($timer !== null) {
                Loop::cancel($timer);
            }
        }
        if ($head->redirect === CgiRedirect::Local && $this->redirects !== null) {
            $fcgi->abort();

            return $this->redirect($request, $head, $label);
        }

        return $this->response($request, $head, $fcgi, $first, $label);
    }

    /**
     * Reads STDOUT until the CGI header block is complete, then takes what else is already there (a small
     * page usually came whole, and then goes out with a Content-Length).
     *
     * @return array{CgiHead, string} the head and the body bytes that came with it
     *
     * @throws FastCgiException|CgiResponseException|CancelledException
     */
    private function readHead(FastCgiResponse $fcgi): array
    {
        $parser = new CgiResponseParser($this->maxHeaderBytes);
        do {
            $chunk = $fcgi->read();
            $head = $chunk === null ? $parser->end() : $parser->feed($chunk);
        } while ($head === null);
        $body = $parser->body();
        while (\strlen($body) < self::PREFETCH && ($more = $fcgi->poll()) !== null && $more !== '') {
            $body .= $more;
        }

        return [$head, $body];
    }

    private function response(Request $request, CgiHead $head, FastCgiResponse $fcgi, string $first, string $label): Response
    {
        $response = new Response($head->status, [], $fcgi->isComplete() ? $first : $this->stream($fcgi, $first, $label));
        try {
            foreach ($head->forwardedHeaders() as [$name, $value]) {
                $response->addHeader($name, $value);
            }
        } catch (\ValueError $e) {
            $fcgi->abort();
            ($this->log)('error', "{$label}: unusable response header: {$e->getMessage()}");

            return self::error($request, 502);
        }

        return $response;
    }

    /**
     * The body as it arrives. Stopping early (the client went away) aborts the FastCGI request.
     *
     * @return \Generator<int, string>
     */
    private function stream(FastCgiResponse $fcgi, string $first, string $label): \Generator
    {
        if ($first !== '') {
            yield $first;
        }
        try {
            yield from $fcgi;
        } catch (FastCgiException $e) {
            ($this->log)('error', "{$label}: response cut short: {$e->getMessage()}");
            throw $e;
        }
    }

    private function redirect(Request $request, CgiHead $head, string $label): Response
    {
        \assert($this->redirects !== null);
        $location = (string) $head->location;
        $response = LocalRedirect::follow($request, $location, $this->redirects);
        if ($response === null) {
            ($this->log)('error', "{$label}: unusable local redirect to " . \json_encode($location) . ' (not a local path, or more than ' . LocalRedirect::MAX . ' deep)');
            return self::error($request, 502);
        }
        return $response;
    }

    /** @return \Closure(string): void */
    private function stderrLogger(string $label): \Closure
    {
        $log = $this->log;

        return static function (string $line) use ($log, $label): void {
            $log('warning', "{$label} stderr: {$line}");
        };
    }

    /**
     * The script's php.ini values (`php_value` in .htaccess) as php-fpm takes them: `PHP_VALUE`, one
     * `name=value` a line.
     *
     * @return array<string, string>
     */
    private static function phpValue(Script $script): array
    {
        if ($script->phpIni === []) {
            return [];
        }
        $lines = '';
        foreach ($script->phpIni as $name => $value) {
            // php-fpm reads these with the php.ini parser: quote what it would take apart (`;`, `"`, `{`, …).
            $safe = \preg_match('~^[A-Za-z0-9_./:+\-]*$~', $value) === 1;
            $lines .= $safe ? "{$name}={$value}\n" : $name . '="' . \addcslashes($value, '"\\') . "\"\n";
        }

        return ['PHP_VALUE' => $lines];
    }

    private static function requestId(Request $request): string
    {
        $id = $request->attribute('request_id');

        return \is_string($id) && $id !== '' ? " [{$id}]" : '';
    }

    /** @param array<string, string> $headers */
    private static function error(Request $request, int $status, array $headers = []): Response
    {
        return ErrorResponse::forRequest($request, $status, '', $headers);
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Body\BodyParser;
use Kiln\Http\Wire\RequestHead;

/**
 * One HTTP request as the app sees it. The body is held in memory up to Limits::$bodyMemory and in a
 * temporary file above it; the file is removed when the exchange ends, also when the client goes away.
 */
final class Request
{
    /** The attribute naming the tier that answered (`sequential`, `isolated`, `static`, ...): the metrics' `tier` label. */
    public const TIER = 'kiln.tier';

    /**
     * The attribute a layer sets when it refused the request at one of its limits, naming the limit (`php_cgi_queue`,
     * `cgi_slots`, `upstream_overloaded`, `task_queue`): the metrics count the answer in `kiln_http_rejections_total`.
     */
    public const REFUSED = 'kiln.refused';

    /** @var array<string, string>|null */
    private ?array $queryParams = null;

    /** @var array<string, mixed> */
    private array $attributes = [];

    /** @var array<string, string>|null */
    private ?array $cookies = null;

    /** Made on first use: most requests never parse a body, and BodyLimits checks its fields when built. */
    private ?BodyLimits $bodyLimits = null;

    /** @var array{array<array-key, mixed>, array<array-key, mixed>}|null fields and files */
    private ?array $form = null;

    /** @var list<UploadedFile> every upload, removed (unless moved) by releaseBody() */
    private array $uploads = [];

    /** @var array{mixed}|null */
    private ?array $json = null;

    /** @var Response|(\Closure(): Response)|null see setLastResponse() */
    private Response|\Closure|null $lastResponse = null;

    private string $exitReason = '';

    /** Whether the last response is an error the server made (see setLastResponse()). */
    private bool $lastResponseIsError = false;

    /** @var list<\Closure(Response, bool): void> see editLastResponse() */
    private array $lastResponseEdits = [];

    // The private fields below are declared with a default and written by the constructor rather than promoted
    // and readonly: a property that has a value already is written on the engine's fast path (one request, one
    // Request: the slow path cost about 100 instructions a field). Nothing but the constructor writes them.
    private string $bodyBytes = '';

    /** @var resource|null */
    private mixed $bodyFile = null;

    private ?WriteBatch $writeBatch = null;

    /**
     * @param RequestHead $head the parsed head, also readable as a property (as head() returns it) so hot
     *        paths (the router, middleware) reach the method, path and headers without a method call each
     * @param resource|null $bodyFile
     * @param WriteBatch|null $writeBatch the batch this request's response leaves with (null: not from a server)
     */
    public function __construct(
        public readonly RequestHead $head,
        string $bodyBytes,
        mixed $bodyFile,
        public readonly string $remoteAddress,
        public readonly int $remotePort,
        public readonly string $localAddress = '',
        public readonly int $localPort = 0,
        ?WriteBatch $writeBatch = null,
    ) {
        $this->bodyBytes = $bodyBytes;
        $this->bodyFile = $bodyFile;
        $this->writeBatch = $writeBatch;
    }

    public function method(): string
    {
        return $this->head->method;
    }

    /** The request target as sent on the request line. */
    public function target(): string
    {
        return $this->head->target;
    }

    public function path(): string
    {
        return $this->head->path;
    }

    public function queryString(): string
    {
        return $this->head->query;
    }

    /** @return array<string, mixed> */
    public function query(): array
    {
        if ($this->queryParams === null) {
            if ($this->head->query === '') {
                return $this->queryParams = [];
            }
            parse_str($this->head->query, $params);
            /** @var array<string, string> $params */
            $this->queryParams = $params;
        }
        return $this->queryParams;
    }

    public function protocolVersion(): string
    {
        return $this->head->version;
    }

    public function host(): string
    {
        return $this->head->host;
    }

    /** First value of a header, by case-insensitive name (a lower-case name is found without strtolower()). */
    public function header(string $name): ?string
    {
        return $this->head->headers[$name][0] ?? $this->head->headers[strtolower($name)][0] ?? null;
    }

    /** @return list<string> every value of a header */
    public function headerValues(string $name): array
    {
        return $this->head->headers[$name] ?? $this->head->headers[strtolower($name)] ?? [];
    }

    /** @return array<string, list<string>> lower-cased names */
    public function headers(): array
    {
        return $this->head->headers;
    }

    public function bodySize(): int
    {
        if ($this->bodyFile !== null) {
            $stat = fstat($this->bodyFile);
            return $stat === false ? 0 : $stat['size'];
        }
        return strlen($this->bodyBytes);
    }

    /** The whole body as a string (reads the temporary file when the body was spooled). */
    public function body(): string
    {
        if ($this->bodyFile === null) {
            return $this->bodyBytes;
        }
        rewind($this->bodyFile);
        return (string) stream_get_contents($this->bodyFile);
    }

    /**
     * The body as a readable stream, rewound. Owned by the request: do not close it.
     *
     * @return resource
     */
    public function bodyStream(): mixed
    {
        if ($this->bodyFile !== null) {
            rewind($this->bodyFile);
            return $this->bodyFile;
        }
        $stream = fopen('php://memory', 'w+b');
        if ($stream === false) {
            throw new \RuntimeException('Cannot open php://memory');
        }
        fwrite($stream, $this->bodyBytes);
        rewind($stream);
        return $stream;
    }

    public function isBodySpooled(): bool
    {
        return $this->bodyFile !== null;
    }

    /**
     * Cookies from the Cookie header(s), parsed once: values urldecode()d as in $_COOKIE, first value of a
     * name wins, malformed pairs skipped (see Cookie::parseHeader()).
     *
     * @return array<string, string>
     */
    public function cookies(): array
    {
        return $this->cookies ??= Cookie::parseHeader($this->headerValues('cookie'));
    }

    public function cookie(string $name): ?string
    {
        return $this->cookies()[$name] ?? null;
    }

    /** Limits for parsedBody(), files() and json(); set them before the body is parsed (middleware). */
    public function setBodyLimits(BodyLimits $limits): void
    {
        if ($this->form !== null || $this->json !== null) {
            throw new \Error('setBodyLimits() must be called before the body is parsed');
        }
        $this->bodyLimits = $limits;
    }

    /**
     * The body's fields, parsed once by Content-Type: urlencoded and multipart/form-data as $_POST would
     * hold them, JSON objects and arrays as arrays (other JSON values, other types, no body: []).
     *
     * @return array<array-key, mixed>
     * @throws BadRequestBodyException 400 for a malformed body, 413 past a BodyLimits limit
     */
    public function parsedBody(): array
    {
        return $this->form()[0];
    }

    /**
     * Uploaded files of a multipart/form-data body, nested by field name as in $_FILES but with one
     * UploadedFile per leaf (`a[b][]` gives ['a' => ['b' => [UploadedFile]]]). Removed when the exchange
     * ends unless moved.
     *
     * @return array<array-key, mixed>
     * @throws BadRequestBodyException
     */
    public function files(): array
    {
        return $this->form()[1];
    }

    /**
     * The body decoded as JSON whatever the Content-Type (objects as arrays, null for an empty body).
     *
     * @throws BadRequestBodyException 400 for invalid JSON, 413 for a body over BodyLimits::$formBytes
     */
    public function json(): mixed
    {
        return ($this->json ??= [BodyParser::json($this, $this->bodyLimits ??= new BodyLimits())])[0];
    }

    /** The client's address: the one trusted proxies named (forwardedClient()), else the peer's. */
    public function clientIp(): string
    {
        $client = $this->attributes[ForwardedClient::class] ?? null;
        return $client instanceof ForwardedClient ? $client->address : $this->remoteAddress;
    }

    /** "https" when trusted proxies say so (forwardedClient()), else "http". */
    public function scheme(): string
    {
        $client = $this->attributes[ForwardedClient::class] ?? null;
        return $client instanceof ForwardedClient && $client->scheme === 'https' ? 'https' : 'http';
    }

    /** The client as trusted reverse proxies describe it (TrustedProxies), or null: the peer is the client. */
    public function forwardedClient(): ?ForwardedClient
    {
        $client = $this->attributes[ForwardedClient::class] ?? null;
        return $client instanceof ForwardedClient ? $client : null;
    }

    /** Kept as the attribute named ForwardedClient::class. */
    public function setForwardedClient(ForwardedClient $client): void
    {
        $this->attributes[ForwardedClient::class] = $client;
    }

    public function attribute(string $name, mixed $default = null): mixed
    {
        return $this->attributes[$name] ?? $default;
    }

    public function setAttribute(string $name, mixed $value): void
    {
        $this->attributes[$name] = $value;
    }

    public function head(): RequestHead
    {
        return $this->head;
    }

    /**
     * The responses of this loop turn that this one will leave with. Code about to do something slow (a
     * script that may take long) flushes it first, so the responses finished before it are not held back.
     */
    public function writeBatch(): ?WriteBatch
    {
        return $this->writeBatch;
    }

    /**
     * The answer to send should this request's handler end the worker process: a classic PHP script calling
     * exit(), or a time limit that ends a script it cannot otherwise stop. A handler sets it before running
     * such code and clears it after; the server reads it as the process ends.
     *
     * - A Response is sent as it is, first thing at shutdown (a 504 for a script past its time limit).
     * - A Closure is called last, after the shutdown functions registered meanwhile ran, because PHP runs them
     *   before it sends the response of an exit(): what they print or set belongs to that response.
     * - A fatal error ignores both: the request gets a 500, like every other request in flight. Except an error
     *   Response the server made ($error): the sequential tier sets its 504, then ends the script with a fatal error.
     *
     * Only a string body can be sent at shutdown; any other body is answered with a 500.
     *
     * The edits registered with editLastResponse() are made to it before it is sent.
     *
     * @param Response|\Closure(): Response $answer
     * @param string $why why the process ends, when the handler ends it itself (said in the supervisor's log);
     *        '' for a script's own exit()
     * @param bool $error the answer is an error the server made (a 504), not the handler's own response
     */
    public function setLastResponse(Response|\Closure $answer, string $why = '', bool $error = false): void
    {
        $this->lastResponse = $answer;
        $this->exitReason = $why;
        $this->lastResponseIsError = $error;
    }

    public function clearLastResponse(): void
    {
        $this->lastResponse = null;
        $this->exitReason = '';
        $this->lastResponseIsError = false;
    }

    /**
     * What a layer around the handler does to the response it returns (a document root's `.htaccess` headers),
     * made also to a last response sent as the process ends (setLastResponse()), which no layer returns through.
     * A layer registers it before it calls the handler inside it; the edits run innermost first. Each gets the
     * response and whether it is an error the server made.
     *
     * @param \Closure(Response, bool): void $edit
     */
    public function editLastResponse(\Closure $edit): void
    {
        $this->lastResponseEdits[] = $edit;
    }

    /**
     * @internal the server, as the worker process ends: the last response with the edits made to it
     * @param bool $error the server answers with an error of its own instead (the last response could not be made)
     */
    public function editedLastResponse(Response $response, bool $error = false): Response
    {
        for ($i = \count($this->lastResponseEdits) - 1; $i >= 0; $i--) {
            ($this->lastResponseEdits[$i])($response, $error || $this->lastResponseIsError);
        }
        return $response;
    }

    /** @internal read by the server as the worker process ends: the last response is an error it made itself */
    public function lastResponseIsError(): bool
    {
        return $this->lastResponseIsError;
    }

    /** @internal read by the server as the worker process ends: see setLastResponse() */
    public function exitReason(): string
    {
        return $this->exitReason;
    }

    /**
     * @internal read by the server as the worker process ends
     * @return Response|\Closure(): Response|null
     */
    public function lastResponse(): Response|\Closure|null
    {
        return $this->lastResponse;
    }

    /**
     * Closes (and so removes) the spooled body file and removes uploaded files nobody moved. Called by
     * the server when the exchange ends.
     *
     * @internal
     */
    public function releaseBody(): void
    {
        if (\is_resource($this->bodyFile)) {
            fclose($this->bodyFile);
        }
        foreach ($this->uploads as $upload) {
            $upload->discard();
        }
        $this->uploads = [];
    }

    /**
     * Files a tier's own reading of the body made (ScriptForm, as PHP reads it for a script): removed with the
     * others when the exchange ends, unless moved.
     *
     * @param list<UploadedFile> $files
     * @internal
     */
    public function keepUploads(array $files): void
    {
        array_push($this->uploads, ...$files);
    }

    /** @return array{array<array-key, mixed>, array<array-key, mixed>} */
    private function form(): array
    {
        if ($this->form === null) {
            [$fields, $files, $this->uploads] = BodyParser::parse($this, $this->bodyLimits ??= new BodyLimits());
            $this->form = [$fields, $files];
        }
        return $this->form;
    }
}

<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\App\Middleware\Internal\ErrorHeaders;
use Kiln\App\Middleware\Internal\Vary;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Cross-origin resource sharing. Preflights (OPTIONS with Origin and Access-Control-Request-Method) are
 * answered here with 204 and never reach the app; other requests from an allowed origin get
 * Access-Control-Allow-Origin and friends on the app's response.
 *
 * Decisions: credentials with origins '*' is refused at construction (reflecting every origin with
 * credentials lets any site read a user's authenticated responses; list the origins or pass a Closure
 * to say so explicitly). A preflight from a disallowed origin gets 403 without CORS headers; an actual
 * request from one gets the app's response without CORS headers, so the browser withholds it. When
 * origins is not '*', every response carries Vary: Origin, so a cache never serves one origin's answer
 * to another. An HttpErrorException thrown further down is re-thrown carrying the same headers, so a page can
 * read the API's error responses.
 */
final class Cors implements Middleware
{
    /** @var array<string, true>|null lower-cased origins; null when a Closure or '*' decides */
    private readonly ?array $originSet;

    private readonly ?\Closure $originCheck;

    private readonly bool $anyOrigin;

    /** @var array<string, true>|null lower-cased allowed request headers; null for any */
    private readonly ?array $headerSet;

    /**
     * @param list<string>|string|\Closure(string): bool $origins exact origins ("https://app.example"),
     *        '*' for any, or a Closure deciding per origin
     * @param list<string> $methods advertised to preflights
     * @param list<string>|string $headers request headers allowed in preflights, or '*' for any requested
     * @param list<string> $exposedHeaders response headers scripts may read
     * @param int|null $maxAge seconds a preflight answer may be cached; null sends no Access-Control-Max-Age
     */
    public function __construct(
        array|string|\Closure $origins,
        private readonly array $methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        array|string $headers = ['Content-Type'],
        private readonly array $exposedHeaders = [],
        private readonly bool $credentials = false,
        private readonly ?int $maxAge = null,
    ) {
        if (\is_array($origins) && \in_array('*', $origins, true)) {
            $origins = '*';
        }
        if (\is_string($origins) && $origins !== '*') {
            throw new \ValueError("Cors origins must be '*', a list of origins or a Closure, got '$origins'; wrap a single origin in a list");
        }
        if ($origins === '*' && $credentials) {
            throw new \ValueError("Cors with credentials cannot allow origins '*': list the trusted origins (or pass a Closure that decides)");
        }
        $this->anyOrigin = $origins === '*';
        $this->originCheck = $origins instanceof \Closure ? $origins : null;
        $this->originSet = \is_array($origins) ? self::originSet($origins) : null;
        if (\is_string($headers) && $headers !== '*') {
            throw new \ValueError("Cors headers must be a list of header names or '*', got '$headers'");
        }
        $this->headerSet = \is_array($headers) ? array_fill_keys(array_map(strtolower(...), $headers), true) : null;
        foreach ($methods as $method) {
            if (preg_match('/^[A-Z]+$/D', $method) !== 1) {
                throw new \ValueError("Cors methods are upper-case method names such as 'PUT', got '$method'");
            }
        }
        if ($maxAge !== null && $maxAge < 0) {
            throw new \ValueError("Cors maxAge is a number of seconds >= 0 (or null to omit it), got $maxAge");
        }
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $origin = $request->header('Origin');
        $preflight = $origin !== null && $request->method() === 'OPTIONS'
            && $request->header('Access-Control-Request-Method') !== null;
        $allowed = $origin !== null && $this->allows($origin);
        if ($preflight) {
            if (!$allowed) {
                throw HttpErrorException::forbidden('Origin not allowed');
            }
            return $this->preflight($request, $origin);
        }
        $headers = $allowed ? $this->actualHeaders($origin) : [];
        try {
            $response = $next->handle($request);
        } catch (HttpErrorException $e) {
            // So the page's script can read the API's 401/404/422, not just a CORS failure.
            throw ErrorHeaders::with($e, $this->anyOrigin ? $headers : $headers + ['Vary' => 'Origin']);
        }
        if (!$this->anyOrigin) {
            Vary::add($response, 'Origin');
        }
        foreach ($headers as $name => $value) {
            $response->setHeader($name, $value);
        }
        return $response;
    }

    /** @return array<string, string> */
    private function actualHeaders(string $origin): array
    {
        $headers = ['Access-Control-Allow-Origin' => $this->anyOrigin ? '*' : $origin];
        if ($this->credentials) {
            $headers['Access-Control-Allow-Credentials'] = 'true';
        }
        if ($this->exposedHeaders !== []) {
            $headers['Access-Control-Expose-Headers'] = implode(', ', $this->exposedHeaders);
        }
        return $headers;
    }

    private function preflight(Request $request, string $origin): Response
    {
        $response = new Response(204);
        $response->setHeader('Access-Control-Allow-Origin', $this->anyOrigin ? '*' : $origin);
        $response->setHeader('Access-Control-Allow-Methods', implode(', ', $this->methods));
        $allowedHeaders = $this->allowedRequestHeaders($request);
        if ($allowedHeaders !== []) {
            $response->setHeader('Access-Control-Allow-Headers', implode(', ', $allowedHeaders));
        }
        if ($this->credentials) {
            $response->setHeader('Access-Control-Allow-Credentials', 'true');
        }
        if ($this->maxAge !== null) {
            $response->setHeader('Access-Control-Max-Age', (string) $this->maxAge);
        }
        $vary = ['Access-Control-Request-Method', 'Access-Control-Request-Headers'];
        Vary::add($response, ...($this->anyOrigin ? $vary : ['Origin', ...$vary]));
        return $response;
    }

    /**
     * The requested headers this policy allows; a disallowed one is left out, so the browser refuses.
     *
     * @return list<string>
     */
    private function allowedRequestHeaders(Request $request): array
    {
        $allowed = [];
        foreach ($request->headerValues('Access-Control-Request-Headers') as $value) {
            foreach (explode(',', $value) as $name) {
                $name = strtolower(trim($name));
                if ($name !== '' && ($this->headerSet === null || isset($this->headerSet[$name]))) {
                    $allowed[$name] = $name;
                }
            }
        }
        return array_values($allowed);
    }

    private function allows(string $origin): bool
    {
        if ($this->anyOrigin) {
            return true;
        }
        if ($this->originCheck !== null) {
            return ($this->originCheck)($origin) === true;
        }
        return isset($this->originSet[strtolower($origin)]);
    }

    /**
     * @param array<mixed> $origins
     * @return array<string, true>
     */
    private static function originSet(array $origins): array
    {
        $set = [];
        foreach ($origins as $origin) {
            if (!\is_string($origin) || ($origin !== 'null' && preg_match('~^[a-z][a-z0-9+.-]*://[^/?#\s]+$~iD', $origin) !== 1)) {
                $shown = \is_string($origin) ? $origin : get_debug_type($origin);
                throw new \ValueError("Cors origins are scheme://host[:port] without a path, e.g. 'https://app.example.com', got '$shown'");
            }
            $set[strtolower($origin)] = true;
        }
        return $set;
    }
}

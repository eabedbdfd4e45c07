<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * ETag and 304 Not Modified for buffered responses. A GET or HEAD answered 200 with a string body gets a
 * strong ETag (xxh3 of the body) unless the app set one; a matching If-None-Match (weak comparison, a
 * list, or `*`) turns it into a 304 without a body. If-Modified-Since is consulted only when the request
 * has no If-None-Match and the app set Last-Modified (RFC 9110 §13.2.2).
 *
 * Streamed bodies (iterables, resources) pass through untouched: hashing them would mean buffering them.
 * Give such responses their own ETag/Last-Modified and check the request in the handler.
 */
final class ConditionalGet implements Middleware
{
    /** Representation headers a 304 should not carry (RFC 9110 §15.4.5). */
    private const STRIPPED = ['Content-Type', 'Content-Length', 'Content-Encoding', 'Content-Language', 'Content-Range', 'Accept-Ranges'];

    private const HTTP_DATE_FORMATS = ['D, d M Y H:i:s \G\M\T', 'l, d-M-y H:i:s \G\M\T', 'D M j H:i:s Y'];

    public function process(Request $request, RequestHandler $next): Response
    {
        $response = $next->handle($request);
        $method = $request->method();
        $body = $response->body();
        if (($method !== 'GET' && $method !== 'HEAD') || $response->status() !== 200 || !\is_string($body)) {
            return $response;
        }
        $etag = $response->header('ETag');
        if ($etag === null) {
            $etag = '"' . hash('xxh3', $body) . '"';
            $response->setHeader('ETag', $etag);
        }
        if ($this->notModified($request, $response, $etag)) {
            $response->setStatus(304);
            $response->setBody('');
            foreach (self::STRIPPED as $name) {
                $response->removeHeader($name);
            }
        }
        return $response;
    }

    private function notModified(Request $request, Response $response, string $etag): bool
    {
        $ifNoneMatch = $request->headerValues('If-None-Match');
        if ($ifNoneMatch !== []) {
            return self::matchesAny(implode(',', $ifNoneMatch), $etag);
        }
        $since = $request->header('If-Modified-Since');
        $lastModified = $response->header('Last-Modified');
        if ($since === null || $lastModified === null) {
            return false;
        }
        $sinceTime = self::httpDate($since);
        $modifiedTime = self::httpDate($lastModified);
        return $sinceTime !== null && $modifiedTime !== null && $modifiedTime <= $sinceTime;
    }

    /** Weak comparison: W/"x" matches "x"; `*` matches any current representation. */
    private static function matchesAny(string $list, string $etag): bool
    {
        if (trim($list) === '*') {
            return true;
        }
        $opaque = str_starts_with($etag, 'W/') ? substr($etag, 2) : $etag;
        preg_match_all('~(?:W/)?("[^"]*")|\*~', $list, $matches);
        foreach ($matches[0] as $i => $tag) {
            if ($tag === '*' || $matches[1][$i] === $opaque) {
                return true;
            }
        }
        return false;
    }

    private static function httpDate(string $value): ?int
    {
        $utc = new \DateTimeZone('UTC');
        foreach (self::HTTP_DATE_FORMATS as $format) {
            $date = \DateTimeImmutable::createFromFormat('!' . $format, trim($value), $utc);
            if ($date !== false) {
                return $date->getTimestamp();
            }
        }
        return null;
    }
}

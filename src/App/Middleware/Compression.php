<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\Middleware;
use Kiln\App\Middleware\Internal\Vary;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventStream;

/**
 * Gzip for clients that accept it. A string body is compressed at once when it is at least $minLength
 * bytes; a streamed body (iterable or resource) is compressed piece by piece as it is produced, each piece
 * sync-flushed so a slow stream (server-sent events, progress output) still reaches the client promptly.
 *
 * Skipped: no acceptable gzip in Accept-Encoding (q-values honoured, `*` counts), a content type outside
 * $types, an existing Content-Encoding, Cache-Control: no-transform, statuses without a body or ranges
 * (1xx, 204, 206, 304). Responses that could have been compressed carry Vary: Accept-Encoding either way.
 */
final class Compression implements Middleware
{
    private const PIECE = 65536;

    /**
     * @param list<string> $types media types to compress: exact ('application/json'), a family
     *        ('text/*'), or a structured suffix ('*\/*+json')
     * @param int $minLength smallest string body worth compressing, in bytes
     * @param int $level zlib level 1-9, or -1 for zlib's default (6)
     */
    public function __construct(
        private readonly int $minLength = 1024,
        private readonly int $level = 6,
        private readonly array $types = [
            'text/*', 'application/json', 'application/javascript', 'application/xml', 'application/wasm',
            'application/x-javascript', 'application/manifest+json', 'image/svg+xml', '*/*+json', '*/*+xml',
        ],
    ) {
        if ($minLength < 0) {
            throw new \ValueError("Compression minLength is a byte count >= 0, got $minLength");
        }
        if ($level !== -1 && ($level < 1 || $level > 9)) {
            throw new \ValueError("Compression level is 1 (fastest) to 9 (smallest), or -1 for the default, got $level");
        }
        foreach ($types as $type) {
            if (preg_match('~^(\*/\*\+[a-z0-9.-]+|[a-z0-9.+-]+/(\*|[a-z0-9.+-]+))$~D', $type) !== 1) {
                throw new \ValueError("Compression types are lower-case media types like 'application/json', 'text/*' or '*/*+json', got '$type'");
            }
        }
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $response = $next->handle($request);
        if (!$this->eligible($response)) {
            return $response;
        }
        $body = $response->body();
        if ($body instanceof EventStream) {
            return $response; // events must reach the client as they are sent, not when a deflate block fills
        }
        if (\is_string($body) ? \strlen($body) < $this->minLength : $this->knownSmall($response, $body)) {
            return $response;
        }
        Vary::add($response, 'Accept-Encoding');
        if (!self::acceptsGzip($request->headerValues('Accept-Encoding'))) {
            return $response;
        }
        if (\is_string($body)) {
            $response->setBody((string) gzencode($body, $this->level));
        } else {
            $response->setBody($this->gzipStream(is_iterable($body) ? $body : self::pieces($body)));
        }
        $response->setHeader('Content-Encoding', 'gzip');
        $response->removeHeader('Content-Length');
        $response->removeHeader('Accept-Ranges');
        $etag = $response->header('ETag');
        if ($etag !== null && str_starts_with($etag, '"')) {
            $response->setHeader('ETag', 'W/' . $etag);
        }
        return $response;
    }

    private function eligible(Response $response): bool
    {
        $status = $response->status();
        if ($status < 200 || $status === 204 || $status === 206 || $status === 304 || $response->upgrade() !== null) {
            return false;
        }
        $encoding = $response->header('Content-Encoding');
        if ($encoding !== null && strtolower(trim($encoding)) !== 'identity') {
            return false;
        }
        if (stripos((string) $response->header('Cache-Control'), 'no-transform') !== false) {
            return false;
        }
        $type = $response->header('Content-Type');
        return $type !== null && $this->compressible(strtolower(trim(explode(';', $type, 2)[0])));
    }

    private function compressible(string $type): bool
    {
        foreach ($this->types as $pattern) {
            $match = match (true) {
                str_starts_with($pattern, '*/*+') => str_ends_with($type, substr($pattern, 3)),
                str_ends_with($pattern, '/*') => str_starts_with($type, substr($pattern, 0, -1)),
                default => $type === $pattern,
            };
            if ($match) {
                return true;
            }
        }
        return false;
    }

    /** A streamed body below the threshold, judged by a Content-Length the app set or the file size. */
    private function knownSmall(Response $response, mixed $body): bool
    {
        $length = $response->header('Content-Length');
        if ($length !== null && ctype_digit($length)) {
            return (int) $length < $this->minLength;
        }
        if (\is_resource($body)) {
            $stat = @fstat($body);
            $position = @ftell($body);
            if ($stat !== false && ($stat['mode'] & 0170000) === 0100000 && $position !== false) {
                return $stat['size'] - $position < $this->minLength;
            }
        }
        return false;
    }

    /** @param list<string> $values Accept-Encoding field values */
    private static function acceptsGzip(array $values): bool
    {
        $gzip = null;
        $any = null;
        foreach ($values as $value) {
            foreach (explode(',', $value) as $item) {
                $params = explode(';', $item);
                $coding = strtolower(trim($params[0]));
                $q = 1.0;
                foreach (\array_slice($params, 1) as $param) {
                    if (preg_match('/^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i', $param, $m) === 1) {
                        $q = (float) $m[1];
                    }
                }
                if ($coding === 'gzip' || $coding === 'x-gzip') {
                    $gzip = max($gzip ?? 0.0, $q);
                } elseif ($coding === '*') {
                    $any = $q;
                }
            }
        }
        return ($gzip ?? $any ?? 0.0) > 0.0;
    }

    /**
     * @param iterable<string> $chunks
     * @return \Generator<int, string>
     */
    private function gzipStream(iterable $chunks): \Generator
    {
        $context = deflate_init(ZLIB_ENCODING_GZIP, ['level' => $this->level]);
        if ($context === false) {
            throw new \RuntimeException('deflate_init failed');
        }
        foreach ($chunks as $chunk) {
            if (!\is_string($chunk)) {
                $chunk = (string) $chunk; // as the server does with a streamed piece
            }
            if ($chunk === '') {
                continue;
            }
            $out = deflate_add($context, $chunk, ZLIB_SYNC_FLUSH);
            if ($out !== false && $out !== '') {
                yield $out;
            }
        }
        yield (string) deflate_add($context, '', ZLIB_FINISH);
    }

    /**
     * @param resource $stream
     * @return \Generator<int, string>
     */
    private static function pieces(mixed $stream): \Generator
    {
        try {
            while (!feof($stream)) {
                $piece = fread($stream, self::PIECE);
                if ($piece === false) {
                    return;
                }
                yield $piece;
            }
        } finally {
            if (\is_resource($stream)) {
                fclose($stream);
            }
        }
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;

/**
 * Serves one resolved regular file: representation (identity, precompressed sibling, on-the-fly gzip),
 * validators, preconditions, ranges, HEAD. Path safety is the caller's (StaticFiles), but PHP sources
 * are refused here too, whoever calls.
 *
 * Decisions:
 * - Precompressed siblings are looked for only for compressible types the client can take; they must
 *   be regular files inside the root (a FILE.gz symlinked out of the root is ignored). Ranges on a
 *   precompressed reply count bytes of the encoded file (as nginx's gzip_static does): its ETag is its
 *   own, so If-Range never mixes encoded and identity bytes.
 * - On-the-fly gzip is never combined with Range: a GET carrying Range gets the identity bytes.
 * - A client refusing identity with nothing else on offer still gets identity, as nginx and Apache
 *   do; a 406 would break more clients than it helps.
 * - Vary: Accept-Encoding goes on every reply for a compressible type when compression is enabled,
 *   whether or not this request got a compressed variant (a shared cache must not reuse one for all).
 * - HEAD ignores Range (RFC 9110 §14.2 defines ranges for GET only), and so does POST where it is served.
 * - POST is refused (405) unless the caller serves it (a document root, as Apache does): then it gets the
 *   file as GET would, its body already read within the limits and dropped; If-None-Match that matches is a
 *   412 for it, If-Modified-Since is not looked at (RFC 9110 §13.1).
 *
 * @internal
 */
final class FileServer
{
    private readonly RangeParser $ranges;

    private readonly string $prefix;

    public function __construct(string $root, private readonly StaticOptions $options)
    {
        $this->ranges = new RangeParser($options->maxRanges);
        $this->prefix = rtrim($root, '/') . '/';
    }

    /**
     * @param bool $post POST is served as GET is (without ranges), as Apache's default handler serves it; else 405
     */
    public function serve(Request $request, string $file, string $urlPath, bool $post = false): Response
    {
        $method = $request->method();
        if ($method !== 'GET' && $method !== 'HEAD' && ($method !== 'POST' || !$post)) {
            return self::methodNotAllowed($post);
        }
        if (PathGuard::isSource($file)) {
            return self::status(403);
        }
        // PHP caches the last stat() per process: a long-lived worker must look again each time.
        clearstatcache();
        $stat = @stat($file);
        if ($stat === false || ($stat['mode'] & 0170000) !== 0100000) {
            return self::status(404);
        }
        $type = MimeTypes::forPath($file);
        $compressible = MimeTypes::isCompressible($type) && ($this->options->precompressed || $this->options->gzip);
        $ranges = $method === 'GET' ? $request->headerValues('range') : [];
        $range = \count($ranges) === 1 ? $ranges[0] : null;
        $identity = new Representation($file, $stat['size'], $stat['mtime'], null);
        $chosen = $compressible ? $this->negotiate($request, $identity, $range !== null) : $identity;

        $headers = ['Content-Type' => $type, 'ETag' => $chosen->etag(), 'Last-Modified' => $chosen->lastModified()];
        if ($chosen->rangeable()) {
            $headers['Accept-Ranges'] = 'bytes';
        }
        if ($chosen->encoding !== null) {
            $headers['Content-Encoding'] = $chosen->encoding;
        }
        if ($compressible) {
            $headers['Vary'] = 'Accept-Encoding';
        }
        $cacheControl = $this->options->cache->for($urlPath, $file);
        if ($cacheControl !== null) {
            $headers['Cache-Control'] = $cacheControl;
        }

        $preconditions = new Preconditions($chosen->etag(), $chosen->mtime);
        $all = $request->headers();
        switch ($preconditions->evaluate($method, $all)) {
            case Precondition::NotModified:
                unset($headers['Content-Type'], $headers['Accept-Ranges'], $headers['Content-Encoding']);
                return new Response(304, $headers);
            case Precondition::Failed:
                return self::status(412);
            case Precondition::Proceed:
                break;
        }
        if ($chosen->onTheFly) {
            return new Response(200, $headers, GzipStream::pieces($chosen->path, $this->options->gzipLevel));
        }
        $handle = @fopen($chosen->path, 'rb');
        if ($handle === false) {
            return self::status(file_exists($chosen->path) ? 403 : 404);
        }
        if ($range !== null && $preconditions->ifRangeHolds($all)) {
            return $this->ranged($this->ranges->parse($range, $chosen->size), $chosen, $handle, $headers);
        }
        return new Response(200, $headers, $handle);
    }

    /**
     * @param resource $handle
     * @param array<string, string> $headers
     */
    private function ranged(RangeSet $set, Representation $chosen, mixed $handle, array $headers): Response
    {
        switch ($set->outcome) {
            case RangeOutcome::Full:
                return new Response(200, $headers, $handle);
            case RangeOutcome::Unsatisfiable:
                fclose($handle);
                $response = self::status(416);
                $response->setHeader('Content-Range', "bytes */{$chosen->size}");
                $response->setHeader('Accept-Ranges', 'bytes');
                return $response;
            case RangeOutcome::Partial:
                break;
        }
        $ranges = $set->ranges;
        if (\count($ranges) === 1) {
            $headers['Content-Range'] = $ranges[0]->contentRange($chosen->size);
            return new Response(206, $headers, SliceStream::open($handle, [[$ranges[0]->first, $ranges[0]->length()]]));
        }
        \assert($ranges !== []);
        $multipart = new MultipartByteranges($ranges, $chosen->size, $headers['Content-Type']);
        $headers['Content-Type'] = $multipart->contentType();
        return new Response(206, $headers, SliceStream::open($handle, $multipart->segments()));
    }

    private function negotiate(Request $request, Representation $identity, bool $ranged): Representation
    {
        $accept = AcceptEncoding::parse($request->headerValues('accept-encoding'));
        $candidates = [];
        if ($this->options->precompressed) {
            foreach (['br' => '.br', 'gzip' => '.gz'] as $coding => $suffix) {
                if ($accept->accepts($coding) && ($sibling = $this->sibling($identity->path . $suffix, $coding)) !== null) {
                    $candidates[$coding] = $sibling;
                }
            }
        }
        if ($this->options->gzip && !isset($candidates['gzip']) && $accept->accepts('gzip')
            && $identity->size >= $this->options->gzipMinSize && $identity->size <= $this->options->gzipMaxSize
            && (!$ranged || !$accept->accepts('identity'))) {
            $candidates['gzip'] = new Representation($identity->path, $identity->size, $identity->mtime, 'gzip', onTheFly: true);
        }
        if ($candidates === []) {
            return $identity;
        }
        $candidates['identity'] = $identity;
        return $candidates[$accept->choose(array_keys($candidates)) ?? 'identity'];
    }

    /** A precompressed sibling, when it is a regular file inside the root and not hidden or a source. */
    private function sibling(string $path, string $coding): ?Representation
    {
        $real = realpath($path);
        if ($real === false || !str_starts_with($real, $this->prefix)
            || PathGuard::isHidden(substr($real, \strlen($this->prefix))) || PathGuard::isSource($real)) {
            return null;
        }
        $stat = @stat($real);
        if ($stat === false || ($stat['mode'] & 0170000) !== 0100000) {
            return null;
        }
        return new Representation($real, $stat['size'], $stat['mtime'], $coding);
    }

    public static function methodNotAllowed(bool $post = false): Response
    {
        $response = self::status(405);
        $response->setHeader('Allow', $post ? 'GET, HEAD, POST' : 'GET, HEAD');
        return $response;
    }

    public static function status(int $status): Response
    {
        return ErrorResponse::plain($status);
    }
}

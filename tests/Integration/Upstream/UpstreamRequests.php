<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Upstream;

use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;
use Kiln\Site\Script;

/** Requests and scripts as a document root would hand them to a ScriptRunner. */
final class UpstreamRequests
{
    /**
     * @param array<string, string|list<string>> $headers any case; a list gives repeated fields
     * @param string|resource $body a string, or a temp file standing for a spooled body
     */
    public static function make(string $method = 'GET', string $target = '/', array $headers = [], mixed $body = ''): Request
    {
        $lower = ['host' => ['localhost:8080']];
        foreach ($headers as $name => $value) {
            $lower[\strtolower($name)] = \is_array($value) ? $value : [$value];
        }
        [$path, $query] = \array_pad(\explode('?', $target, 2), 2, '');
        $length = \is_string($body) ? \strlen($body) : (int) (\fstat($body)['size'] ?? 0);
        $kind = $length > 0 ? RequestHead::BODY_LENGTH : RequestHead::BODY_NONE;
        $lower += $length > 0 ? ['content-length' => [(string) $length]] : [];
        $head = new RequestHead($method, $target, '1.1', $lower, $path, $query, 'localhost', $kind, $length, true, false);

        return new Request($head, \is_string($body) ? $body : '', \is_string($body) ? null : $body, '127.0.0.1', 40000, '127.0.0.1', 8080);
    }

    public static function script(string $root, string $name): Script
    {
        return new Script($root . $name, $name, '', $root);
    }

    /** @param string|iterable<string>|resource $body */
    public static function body(mixed $body): string
    {
        if (\is_string($body)) {
            return $body;
        }
        if (\is_iterable($body)) {
            $all = '';
            foreach ($body as $piece) {
                $all .= $piece;
            }

            return $all;
        }

        return (string) \stream_get_contents($body);
    }
}

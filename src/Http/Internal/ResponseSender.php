<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Server\WorkerContext;

/**
 * Puts one Response on the wire: a string with Content-Length in one write; an iterable chunk by chunk
 * (chunked on HTTP/1.1, close-delimited on 1.0); a stream in 64 KiB pieces. Streaming pauses whenever
 * the connection's write buffer is full.
 *
 * @internal
 */
final class ResponseSender
{
    private const PIECE = 65536;

    public function __construct(
        private readonly ResponseEncoder $encoder,
        private readonly WorkerContext $context,
    ) {}

    /** @return array{bool, int} whether the connection stays open, and body bytes sent */
    public function send(Connection $connection, Request $request, Response $response, bool $keepAlive): array
    {
        $head = $request->head();
        $status = $response->status();
        $body = $response->body();
        $withBody = $head->method !== 'HEAD' && $status >= 200 && $status !== 204 && $status !== 304;
        try {
            if (\is_string($body)) {
                $length = \strlen($body);
                $bytes = $this->encoder->head($status, $response->wireHeaders(), $length, $head->version, $keepAlive, !$withBody);
                $connection->write($withBody ? $bytes . $body : $bytes);
                return [$keepAlive, $withBody ? $length : 0];
            }
            if ($status === 101 && $response->upgrade() !== null) {
                return $this->upgrade($connection, $request, $response);
            }
            if (!is_iterable($body)) {
                return $this->sendStream($connection, $request, $response, $body, $keepAlive, $withBody);
            }
            return $this->sendIterable($connection, $request, $response, $body, $keepAlive, $withBody);
        } catch (\ValueError $e) {
            // The app set a header we refuse to emit (CR/LF/NUL, bad name): nothing was written yet.
            $this->context->log('error', 'Refused response for ' . $head->method . ' ' . $head->target . ': ' . $e->getMessage());
            $text = "500 Internal Server Error\n";
            $headers = ['Content-Type' => 'text/plain; charset=utf-8'];
            $connection->write($this->encoder->head(500, $headers, \strlen($text), $head->version, false) . $text);
            return [false, \strlen($text)];
        }
    }

    /**
     * @param iterable<string> $body
     * @return array{bool, int}
     */
    private function sendIterable(Connection $connection, Request $request, Response $response, iterable $body, bool $keepAlive, bool $withBody): array
    {
        $head = $request->head();
        $chunked = $head->version === '1.1';
        if (!$chunked) {
            $keepAlive = false;
        }
        $connection->write($this->encoder->head($response->status(), $response->wireHeaders(), null, $head->version, $keepAlive, !$withBody));
        if (!$withBody) {
            return [$keepAlive, 0];
        }
        $sent = 0;
        try {
            foreach ($body as $piece) {
                $piece = (string) $piece;
                if ($piece === '') {
                    continue;
                }
                $connection->write($chunked ? $this->encoder->chunk($piece) : $piece);
                $sent += \strlen($piece);
                if (!$connection->awaitDrain()) {
                    return [false, $sent];
                }
            }
        } catch (\Throwable $e) {
            // Headers are out: the only honest signal left is to end the message unfinished.
            $this->context->log('error', 'Streamed body of ' . $head->method . ' ' . $head->target . ' failed: ' . $e->getMessage());
            return [false, $sent];
        }
        if ($chunked) {
            $connection->write($this->encoder->end());
        }
        return [$keepAlive, $sent];
    }

    /**
     * @param resource $stream
     * @return array{bool, int}
     */
    private function sendStream(Connection $connection, Request $request, Response $response, mixed $stream, bool $keepAlive, bool $withBody): array
    {
        try {
            $length = null;
            $stat = @fstat($stream);
            $position = @ftell($stream);
            if ($stat !== false && ($stat['mode'] & 0170000) === 0100000 && $position !== false) {
                $length = max(0, $stat['size'] - $position);
            }
            if ($length === null) {
                return $this->sendIterable($connection, $request, $response, self::pieces($stream), $keepAlive, $withBody);
            }
            $head = $request->head();
            $connection->write($this->encoder->head($response->status(), $response->wireHeaders(), $length, $head->version, $keepAlive, !$withBody));
            if (!$withBody) {
                return [$keepAlive, 0];
            }
            $sent = 0;
            while ($sent < $length) {
                $piece = fread($stream, max(1, min(self::PIECE, $length - $sent)));
                if ($piece === false || $piece === '') {
                    // The file shrank under us: the promised length cannot be met.
                    return [false, $sent];
                }
                $connection->write($piece);
                $sent += \strlen($piece);
                if (!$connection->awaitDrain()) {
                    return [false, $sent];
                }
            }
            return [$keepAlive, $sent];
        } finally {
            if (\is_resource($stream)) {
                fclose($stream);
            }
        }
    }

    /**
     * @param resource $stream
     * @return \Generator<int, string>
     */
    private static function pieces(mixed $stream): \Generator
    {
        while (!feof($stream)) {
            $piece = fread($stream, self::PIECE);
            if ($piece === false) {
                return;
            }
            yield $piece;
        }
    }

    /** @return array{bool, int} */
    private function upgrade(Connection $connection, Request $request, Response $response): array
    {
        $takeOver = $response->upgrade();
        \assert($takeOver !== null);
        $head = $request->head();
        $connection->write($this->encoder->head(101, $response->wireHeaders(), null, $head->version, true, true));
        if (!$connection->awaitDrain(0)) {
            return [false, 0];
        }
        $socket = $connection->socket;
        $rest = $connection->detach();
        $takeOver($socket, $rest);
        return [false, 0];
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Server\WorkerContext;

/**
 * Puts one Response on the wire: a string with Content-Length in one write; an iterable chunk by chunk
 * (chunked on HTTP/1.1, close-delimited on 1.0; with the Content-Length the handler set, when it set one);
 * a stream in 64 KiB pieces. Streaming pauses whenever
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

    /** @return array{bool, int, int} whether the connection stays open, body bytes sent, the status sent */
    public function send(Connection $connection, Request $request, Response $response, bool $keepAlive): array
    {
        $head = $request->head();
        $status = $response->status();
        $body = $response->body();
        $withBody = $head->method !== 'HEAD' && $status >= 200 && $status !== 204 && $status !== 304;
        try {
            if ($status < 200) {
                if ($status === 101 && $response->upgrade() !== null) {
                    return [...$this->upgrade($connection, $request, $response), 101];
                }
                throw new \ValueError("status $status is interim, not a final response (101 needs setUpgrade())");
            }
            if (\is_string($body)) {
                return [$keepAlive, $this->writeWhole($connection, $head, $response, $status, $body, $keepAlive), $status];
            }
            if (is_iterable($body)) {
                return [...$this->sendIterable($connection, $request, $response, $body, $keepAlive, $withBody), $status];
            }
            if (!\is_resource($body) || get_resource_type($body) !== 'stream') {
                throw new \ValueError('body is ' . get_debug_type($body) . ', not a string, an iterable or an open stream');
            }
            return [...$this->sendStream($connection, $request, $response, $body, $keepAlive, $withBody), $status];
        } catch (\ValueError $e) {
            return [false, $this->refuse($connection, $request, $e, $body), 500];
        }
    }

    /**
     * A string body with a final status: its head and body in one write (no body for HEAD, 204, 304).
     *
     * @return int body bytes sent
     * @throws \ValueError a response we refuse to emit (nothing was written)
     */
    public function writeWhole(Connection $connection, RequestHead $head, Response $response, int $status, string $body, bool $keepAlive): int
    {
        // encode() straight from here, with the status already read: nearly every response comes this way, and
        // responseHead()'s calls in between cost a few hundred instructions.
        $headRequest = $head->method === 'HEAD';
        $bodiless = $headRequest || $status === 204 || $status === 304;
        // A HEAD answer advertises the length the handler declared: a script that prints nothing for HEAD is not 0.
        $length = $headRequest ? $response->declaredLength() ?? \strlen($body) : \strlen($body);
        $bytes = $this->encoder->encode($status, $response->headers(), false, $length, $head->version, $keepAlive, $bodiless);
        if ($bodiless) {
            $connection->write($bytes);
            return 0;
        }
        $connection->write($bytes . $body);
        return \strlen($body);
    }

    /**
     * The app made a response we refuse to emit (bad header, status or body), and nothing of it was written:
     * logged, its stream body closed, and a 500 sent instead (the connection then ends).
     *
     * @return int body bytes of the 500 sent
     */
    public function refuse(Connection $connection, Request $request, \ValueError $e, mixed $body): int
    {
        $head = $request->head;
        $this->context->log('error', 'Refused response for ' . $head->method . ' ' . $head->target . ': ' . $e->getMessage());
        if (\is_resource($body) && get_resource_type($body) === 'stream') {
            fclose($body);
        }
        $error = ErrorResponse::plain(500);
        $text = $error->body();
        \assert(\is_string($text));
        $connection->write($this->encoder->responseHead($error, \strlen($text), $head->version, false) . $text);
        return \strlen($text);
    }

    /**
     * Chunked on HTTP/1.1 and close-delimited on 1.0, unless the handler declared the length (a CGI or FastCGI
     * script's own `Content-Length`, as Apache and nginx pass it on): then sent with that length, so a download
     * shows its size. What the body yields past a declared length is read and dropped (the script runs to its end);
     * a body that ends short closes the connection, so the client sees the message is incomplete. Either is logged.
     *
     * @param iterable<string> $body
     * @return array{bool, int}
     */
    private function sendIterable(Connection $connection, Request $request, Response $response, iterable $body, bool $keepAlive, bool $withBody): array
    {
        $head = $request->head();
        $length = $response->declaredLength();
        $chunked = $length === null && $head->version === '1.1';
        if ($length === null && !$chunked) {
            $keepAlive = false;
        }
        $connection->write($this->encoder->responseHead($response, $length, $head->version, $keepAlive, !$withBody));
        if (!$withBody) {
            return [$keepAlive, 0];
        }
        $sent = 0;
        $dropped = 0;
        try {
            foreach ($body as $piece) {
                $piece = (string) $piece;
                if ($length !== null && \strlen($piece) > $length - $sent) {
                    $dropped += \strlen($piece) - ($length - $sent);
                    $piece = substr($piece, 0, $length - $sent);
                }
                if ($piece === '') {
                    continue;
                }
                $connection->write($chunked ? $this->encoder->chunk($piece) : $piece);
                $sent += \strlen($piece);
                if (!$connection->output->awaitDrain()) {
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
        if ($length === null) {
            return [$keepAlive, $sent];
        }
        $where = "$head->method $head->target declared Content-Length: $length";
        if ($sent < $length) {
            $this->context->log('warning', "$where but its body ended after $sent bytes: the connection is closed");
            return [false, $sent];
        }
        if ($dropped > 0) {
            $this->context->log('warning', "$where and its body went on for $dropped bytes more: those were not sent");
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
                return $this->sendIterable($connection, $request, $response, self::pieces($connection, $stream), $keepAlive, $withBody);
            }
            $head = $request->head();
            $connection->write($this->encoder->responseHead($response, $length, $head->version, $keepAlive, !$withBody));
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
                if (!$connection->output->awaitDrain()) {
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
     * A stream of unknown length (pipe, socket) read without blocking the worker: when nothing is ready
     * the Fiber waits for the stream to be readable, or for the client to go away.
     *
     * @param resource $stream
     * @return \Generator<int, string>
     */
    private static function pieces(Connection $connection, mixed $stream): \Generator
    {
        $async = @stream_set_blocking($stream, false);
        while (true) {
            $piece = @fread($stream, self::PIECE);
            if ($piece === false || ($piece === '' && feof($stream))) {
                return;
            }
            if ($piece !== '') {
                yield $piece;
            } elseif ($async && !$connection->output->awaitReadable($stream)) {
                return;
            }
        }
    }

    /** @return array{bool, int} */
    private function upgrade(Connection $connection, Request $request, Response $response): array
    {
        $takeOver = $response->upgrade();
        \assert($takeOver !== null);
        $head = $request->head();
        $connection->write($this->encoder->responseHead($response, null, $head->version, true, true));
        $connection->output->send(); // now, not with the loop turn's batch: the socket changes hands next
        if (!$connection->output->awaitDrain(0)) {
            return [false, 0];
        }
        $socket = $connection->socket;
        $rest = $connection->detach();
        $takeOver($socket, $rest);
        return [false, 0];
    }
}

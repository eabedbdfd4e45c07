<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

use Kiln\Loop\StreamPoll;
use Kiln\Server\ListenAddress;
use Kiln\Server\ServerException;

/**
 * The admin listener (--admin-listen), served by the supervisor inside its own select: a request line is read
 * without blocking, the answer (a few KiB) is written with a short deadline, and the connection is closed.
 * Only GET and HEAD; no keep-alive, no body. It is meant for a scraper and a load balancer on a private address.
 */
final class AdminServer
{
    private const MAX_HEAD = 8192;
    private const MAX_CLIENTS = 32;
    private const WRITE_DEADLINE = 2.0;

    /** @var resource|null */
    private mixed $server = null;

    /** @var array<int, array{resource, string, float}> open clients: stream, bytes read, when accepted */
    private array $clients = [];

    private ?StreamPoll $poll = null;

    private int $next = 0;

    public function __construct(private readonly ListenAddress $address) {}

    /** @throws ServerException when the address cannot be bound */
    public function listen(): void
    {
        $context = stream_context_create(['socket' => ['backlog' => 64, 'so_reuseaddr' => true]]);
        $server = @stream_socket_server($this->address->uri(), $code, $message, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $context);
        if ($server === false) {
            throw new ServerException("Cannot listen on {$this->address->authority()} for --admin-listen: $message");
        }
        stream_set_blocking($server, false);
        $this->server = $server;
    }

    public function bound(): ListenAddress
    {
        $name = \is_resource($this->server) ? (string) stream_socket_get_name($this->server, false) : '';
        $colon = strrpos($name, ':');
        return $colon === false ? $this->address : $this->address->withPort((int) substr($name, $colon + 1));
    }

    /** @return array<string, resource> the streams to watch for reading, by key */
    public function streams(): array
    {
        $streams = \is_resource($this->server) ? ['admin' => $this->server] : [];
        foreach ($this->clients as $id => [$stream]) {
            $streams["admin$id"] = $stream;
        }
        return $streams;
    }

    /** @param \Closure(string): array{int, string, string} $answer path → status, content type, body */
    public function onReadable(string $key, \Closure $answer): void
    {
        if ($key === 'admin') {
            $this->accept();
            return;
        }
        $id = (int) substr($key, 5);
        if (!isset($this->clients[$id])) {
            return;
        }
        [$stream, $buffer, $since] = $this->clients[$id];
        $data = @fread($stream, self::MAX_HEAD);
        if ($data === false || $data === '') {
            $this->close($id);
            return;
        }
        $buffer .= $data;
        if (!str_contains($buffer, "\r\n\r\n") && !str_contains($buffer, "\n\n")) {
            \strlen($buffer) > self::MAX_HEAD ? $this->answer($id, 431, 'text/plain', "Request header too large\n", false) : $this->clients[$id] = [$stream, $buffer, $since];
            return;
        }
        $line = strtok($buffer, "\r\n");
        if ($line === false || preg_match('#^(GET|HEAD) (/[^ ?]*)(?:\?\S*)? HTTP/1\.[01]$#', $line, $m) !== 1) {
            $this->answer($id, 405, 'text/plain', "Only GET and HEAD\n", false);
            return;
        }
        [$status, $type, $body] = $answer($m[2]);
        $this->answer($id, $status, $type, $body, $m[1] === 'HEAD');
    }

    /** Closes clients that sent no whole head within a few seconds. */
    public function tick(float $now): void
    {
        foreach ($this->clients as $id => [, , $since]) {
            if ($now - $since > 5.0) {
                $this->close($id);
            }
        }
    }

    public function close(?int $id = null): void
    {
        if ($id !== null) {
            @fclose($this->clients[$id][0]);
            unset($this->clients[$id]);
            return;
        }
        foreach (array_keys($this->clients) as $client) {
            $this->close($client);
        }
        if (\is_resource($this->server)) {
            fclose($this->server);
        }
        $this->server = null;
    }

    private function accept(): void
    {
        \assert(\is_resource($this->server));
        $client = @stream_socket_accept($this->server, 0);
        if ($client === false) {
            return;
        }
        if (\count($this->clients) >= self::MAX_CLIENTS) {
            @fclose($client);
            return;
        }
        stream_set_blocking($client, false);
        $this->clients[$this->next++] = [$client, '', microtime(true)];
    }

    private function answer(int $id, int $status, string $type, string $body, bool $head): void
    {
        $reasons = [200 => 'OK', 404 => 'Not Found', 405 => 'Method Not Allowed', 431 => 'Request Header Fields Too Large', 503 => 'Service Unavailable'];
        $bytes = 'HTTP/1.1 ' . $status . ' ' . ($reasons[$status] ?? 'Status') . "\r\nContent-Type: $type\r\nContent-Length: "
            . \strlen($body) . "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n" . ($head ? '' : $body);
        $stream = $this->clients[$id][0];
        $deadline = microtime(true) + self::WRITE_DEADLINE;
        while ($bytes !== '' && microtime(true) < $deadline) {
            $written = @fwrite($stream, $bytes);
            if ($written === false) {
                break;
            }
            $bytes = substr($bytes, $written);
            if ($bytes !== '') {
                ($this->poll ??= new StreamPoll())->wait([], [$stream], 0.05); // past stream_select()'s 1024 too
            }
        }
        $this->close($id);
    }
}

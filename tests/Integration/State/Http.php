<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\State;

use Kiln\Tests\Support\HttpClient;

/** Requests with any method, body and headers, one connection each, sent in parallel; a timeout on every wait. */
final class Http
{
    /**
     * @param list<array{string, string, string, array<string, string>}> $requests method, path, body, headers
     * @return list<array{status: int, headers: array<string, string>, body: string}> in the order given
     */
    public static function parallel(string $host, int $port, array $requests, float $timeout = 20.0): array
    {
        $sockets = [];
        foreach ($requests as $i => [$method, $path, $body, $headers]) {
            $socket = @stream_socket_client("tcp://$host:$port", $errno, $error, 5);
            if ($socket === false) {
                throw new \RuntimeException("Cannot connect to $host:$port: $error");
            }
            $head = "$method $path HTTP/1.1\r\nHost: $host:$port\r\nConnection: close\r\nContent-Length: " . \strlen($body) . "\r\n";
            foreach ($headers as $name => $value) {
                $head .= "$name: $value\r\n";
            }
            fwrite($socket, "$head\r\n$body");
            stream_set_blocking($socket, false);
            $sockets[$i] = $socket;
        }
        $raw = array_fill_keys(array_keys($sockets), '');
        $deadline = microtime(true) + $timeout;
        while ($sockets !== []) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException(\count($sockets) . ' responses did not arrive in time');
            }
            $read = array_values($sockets);
            $write = $except = null;
            if (stream_select($read, $write, $except, 0, 200_000) === false) {
                throw new \RuntimeException('select failed');
            }
            foreach ($read as $socket) {
                $i = array_search($socket, $sockets, true);
                $chunk = fread($socket, 65536);
                if ($chunk === '' || $chunk === false) {
                    fclose($socket);
                    unset($sockets[$i]);
                    continue;
                }
                $raw[$i] .= $chunk;
            }
        }
        $responses = [];
        foreach (array_keys($requests) as $i) {
            $responses[] = HttpClient::parse($raw[$i]);
        }
        return $responses;
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    public static function one(string $host, int $port, string $method, string $path, string $body = '', array $headers = []): array
    {
        return self::parallel($host, $port, [[$method, $path, $body, $headers]])[0];
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/** A minimal blocking HTTP/1.1 client for tests: one request per connection, read to EOF, chunked decoded. */
final class HttpClient
{
    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, string>, body: string} header names lower-cased
     */
    public static function get(string $url, array $headers = [], float $timeout = 5): array
    {
        $parts = parse_url($url);
        if ($parts === false || !isset($parts['host'])) {
            throw new \InvalidArgumentException("Bad URL $url");
        }
        $host = $parts['host'];
        $port = $parts['port'] ?? 80;
        $target = ($parts['path'] ?? '/') . (isset($parts['query']) ? '?' . $parts['query'] : '');
        $socket = @stream_socket_client("tcp://$host:$port", $errno, $errstr, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("Cannot connect to $host:$port: $errstr");
        }
        stream_set_timeout($socket, (int) ceil($timeout));
        $request = "GET $target HTTP/1.1\r\nHost: $host:$port\r\nConnection: close\r\n";
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        fwrite($socket, $request . "\r\n");
        $raw = '';
        $deadline = microtime(true) + $timeout;
        while (!feof($socket)) {
            $chunk = fread($socket, 65536);
            if ($chunk === false || (stream_get_meta_data($socket)['timed_out'] ?? false) || microtime(true) > $deadline) {
                fclose($socket);
                throw new \RuntimeException("Timed out reading the response from $url");
            }
            $raw .= $chunk;
        }
        fclose($socket);
        return self::parse($raw);
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    public static function parse(string $raw): array
    {
        $end = strpos($raw, "\r\n\r\n");
        if ($end === false || preg_match('~^HTTP/1\.[01] (\d{3})~', $raw, $m) !== 1) {
            throw new \RuntimeException('Malformed response: ' . substr($raw, 0, 200));
        }
        $headers = [];
        foreach (\array_slice(explode("\r\n", substr($raw, 0, $end)), 1) as $line) {
            [$name, $value] = array_map('trim', explode(':', $line, 2) + [1 => '']);
            $headers[strtolower($name)] = $value;
        }
        $body = substr($raw, $end + 4);
        if (strtolower($headers['transfer-encoding'] ?? '') === 'chunked') {
            $body = self::dechunk($body);
        }
        return ['status' => (int) $m[1], 'headers' => $headers, 'body' => $body];
    }

    private static function dechunk(string $body): string
    {
        $out = '';
        while (($eol = strpos($body, "\r\n")) !== false) {
            $size = hexdec(trim(explode(';', substr($body, 0, $eol))[0]));
            if ($size === 0) {
                break;
            }
            $out .= substr($body, $eol + 2, (int) $size);
            $body = substr($body, $eol + 2 + (int) $size + 2);
        }
        return $out;
    }
}

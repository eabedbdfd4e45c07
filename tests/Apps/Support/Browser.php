<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

/**
 * A small blocking HTTP/1.1 client that keeps cookies, as a browser would for one site: cookies are stored by
 * name and path, sent to paths under their Path, dropped when a response expires them. One request per
 * connection (`Connection: close`), the body read to EOF, chunked decoded. Redirects are not followed: a flow
 * checks each one. Bodies: urlencoded fields, or multipart when files are given.
 */
final class Browser
{
    /** @var array<string, array{name: string, value: string, path: string}> keyed by path + "\0" + name */
    private array $cookies = [];

    public function __construct(private readonly string $baseUrl, private readonly float $timeout = 60.0) {}

    public function baseUrl(): string
    {
        return $this->baseUrl;
    }

    /** @param array<string, string> $headers */
    public function get(string $target, array $headers = []): Page
    {
        return $this->request('GET', $target, '', $headers);
    }

    /**
     * @param array<string, string|list<string>> $fields a list value is sent as repeated `name[]` fields
     * @param array<string, array{filename: string, type: string, content: string}> $files
     * @param array<string, string> $headers
     */
    public function post(string $target, array $fields, array $files = [], array $headers = []): Page
    {
        if ($files === []) {
            $headers['Content-Type'] = 'application/x-www-form-urlencoded';
            return $this->request('POST', $target, self::urlencode($fields), $headers);
        }
        $boundary = '----kiln-apps-' . bin2hex(random_bytes(8));
        $body = '';
        foreach (self::flatten($fields) as [$name, $value]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$value\r\n";
        }
        foreach ($files as $name => $file) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\"; filename=\"{$file['filename']}\"\r\n"
                . "Content-Type: {$file['type']}\r\n\r\n{$file['content']}\r\n";
        }
        $headers['Content-Type'] = "multipart/form-data; boundary=$boundary";
        return $this->request('POST', $target, $body . "--$boundary--\r\n", $headers);
    }

    /**
     * One request on a new connection. A 503 with Retry-After is sent once more after the wait it asks for
     * (at most 2 s), as a user would reload: Kiln answers so a request that reached a worker as the worker
     * ended (the sequential tier replaces a worker after exit()) without having run it.
     *
     * @param array<string, string> $headers
     */
    public function request(string $method, string $target, string $body = '', array $headers = []): Page
    {
        $page = $this->send($method, $target, $body, $headers);
        $retryAfter = $page->headers['retry-after'][0] ?? null;
        if ($page->status === 503 && $retryAfter !== null && ctype_digit($retryAfter)) {
            usleep((int) (min(2.0, (float) $retryAfter) * 1e6));
            $page = $this->send($method, $target, $body, $headers);
        }
        return $page;
    }

    /** @param array<string, string> $headers */
    private function send(string $method, string $target, string $body, array $headers): Page
    {
        $url = str_starts_with($target, 'http') ? $target : $this->baseUrl . $target;
        $parts = parse_url($url);
        if ($parts === false || !isset($parts['host'], $parts['port'])) {
            throw new \ValueError("Browser needs http://host:port URLs, got $url");
        }
        $path = ($parts['path'] ?? '/') . (isset($parts['query']) ? '?' . $parts['query'] : '');
        $socket = @stream_socket_client("tcp://{$parts['host']}:{$parts['port']}", $errno, $error, 5.0);
        if ($socket === false) {
            throw new \RuntimeException("$method $url: cannot connect: $error");
        }
        stream_set_timeout($socket, (int) ceil($this->timeout));
        $head = "$method $path HTTP/1.1\r\nHost: {$parts['host']}:{$parts['port']}\r\nConnection: close\r\n"
            . "User-Agent: kiln-apps-test/1.0\r\nAccept: text/html,application/json;q=0.9,*/*;q=0.8\r\n";
        $cookie = $this->cookieHeader($parts['path'] ?? '/');
        if ($cookie !== '') {
            $head .= "Cookie: $cookie\r\n";
        }
        if ($body !== '' || $method === 'POST') {
            $head .= 'Content-Length: ' . \strlen($body) . "\r\n";
        }
        foreach ($headers as $name => $value) {
            $head .= "$name: $value\r\n";
        }
        fwrite($socket, "$head\r\n$body");
        $raw = '';
        $deadline = microtime(true) + $this->timeout;
        while (!feof($socket)) {
            $chunk = fread($socket, 65536);
            if ($chunk === false || stream_get_meta_data($socket)['timed_out'] || microtime(true) > $deadline) {
                fclose($socket);
                throw new \RuntimeException("$method $url: timed out after {$this->timeout}s reading the response");
            }
            $raw .= $chunk;
        }
        fclose($socket);
        $page = self::parse($method, $url, $raw);
        $this->remember($page);
        return $page;
    }

    public function cookie(string $name): ?string
    {
        foreach ($this->cookies as $cookie) {
            if ($cookie['name'] === $name) {
                return $cookie['value'];
            }
        }
        return null;
    }

    /** @return list<string> names of the cookies held */
    public function cookieNames(): array
    {
        return array_values(array_unique(array_column($this->cookies, 'name')));
    }

    private function cookieHeader(string $path): string
    {
        $pairs = [];
        foreach ($this->cookies as $cookie) {
            $prefix = rtrim($cookie['path'], '/');
            if ($path === $cookie['path'] || $prefix === '' || $path === $prefix || str_starts_with($path, $prefix . '/')) {
                $pairs[] = "{$cookie['name']}={$cookie['value']}";
            }
        }
        return implode('; ', $pairs);
    }

    private function remember(Page $page): void
    {
        foreach ($page->headers['set-cookie'] ?? [] as $line) {
            $attributes = array_map('trim', explode(';', $line));
            [$name, $value] = explode('=', (string) array_shift($attributes), 2) + [1 => ''];
            $path = '/';
            $expired = false;
            foreach ($attributes as $attribute) {
                [$key, $val] = explode('=', $attribute, 2) + [1 => ''];
                $key = strtolower($key);
                if ($key === 'path' && $val !== '') {
                    $path = $val;
                } elseif ($key === 'max-age') {
                    $expired = (int) $val <= 0;
                } elseif ($key === 'expires' && ($time = strtotime($val)) !== false) {
                    $expired = $expired || $time < time();
                }
            }
            $key = "$path\0$name";
            if ($expired || $value === 'deleted') {
                unset($this->cookies[$key]);
            } else {
                $this->cookies[$key] = ['name' => $name, 'value' => $value, 'path' => $path];
            }
        }
    }

    private static function parse(string $method, string $url, string $raw): Page
    {
        $end = strpos($raw, "\r\n\r\n");
        if ($end === false || preg_match('~^HTTP/1\.[01] (\d{3})~', $raw, $m) !== 1) {
            throw new \RuntimeException("$method $url: malformed response: " . substr($raw, 0, 200));
        }
        $headers = [];
        foreach (\array_slice(explode("\r\n", substr($raw, 0, $end)), 1) as $line) {
            [$name, $value] = array_map('trim', explode(':', $line, 2) + [1 => '']);
            $headers[strtolower($name)][] = $value;
        }
        $body = substr($raw, $end + 4);
        if (str_contains(strtolower(implode(',', $headers['transfer-encoding'] ?? [])), 'chunked')) {
            $body = self::dechunk($body);
        }
        return new Page($method, $url, (int) $m[1], $headers, $body);
    }

    private static function dechunk(string $body): string
    {
        $out = '';
        while (($eol = strpos($body, "\r\n")) !== false) {
            $size = (int) hexdec(trim(explode(';', substr($body, 0, $eol))[0]));
            if ($size === 0) {
                break;
            }
            $out .= substr($body, $eol + 2, $size);
            $body = substr($body, $eol + 2 + $size + 2);
        }
        return $out;
    }

    /** @param array<string, string|list<string>> $fields */
    private static function urlencode(array $fields): string
    {
        return implode('&', array_map(static fn(array $f): string => rawurlencode($f[0]) . '=' . rawurlencode($f[1]), self::flatten($fields)));
    }

    /**
     * @param array<string, string|list<string>> $fields
     * @return list<array{string, string}>
     */
    private static function flatten(array $fields): array
    {
        $out = [];
        foreach ($fields as $name => $value) {
            foreach (\is_array($value) ? $value : [$value] as $one) {
                $out[] = [\is_array($value) ? "{$name}[]" : (string) $name, (string) $one];
            }
        }
        return $out;
    }
}

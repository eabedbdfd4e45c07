<?php

declare(strict_types=1);

namespace Kiln\Db;

/**
 * A parsed database URL: `postgres://user:pass@host:5432/db`, `mysql://user:pass@host:3306/db`, or over a
 * unix socket `postgres://user@/db?host=/run/postgresql&port=5432` (the socket's directory and port, as libpq has them) and
 * `mysql://user@/db?socket=/run/mysqld/mysqld.sock`. User, password and database are percent-decoded.
 * Pool settings ride along in the query: `max` (connections), `wait` (seconds to wait for one), `idle`
 * (seconds before an idle one is closed), `connect_timeout` (seconds), `timeout` (seconds a statement may run, 0 for no
 * limit).
 *
 * The password is kept out of every string the class makes: redacted() is what messages and logs show.
 */
final class Dsn
{
    /** @param array<string, string> $options the query parameters */
    private function __construct(
        public readonly DbKind $kind,
        public readonly string $host,
        public readonly int $port,
        public readonly ?string $socket,
        public readonly string $user,
        #[\SensitiveParameter]
        private readonly string $password,
        public readonly string $database,
        public readonly array $options,
    ) {}

    public static function parse(#[\SensitiveParameter] string $url): self
    {
        $scheme = strtolower((string) strstr($url, '://', true));
        $kind = DbKind::fromScheme($scheme)
            ?? throw new \ValueError("A database URL starts with postgres:// or mysql://, got '" . self::schemeOf($url) . "'");
        // parse_url() refuses an empty host ("user@/db"): put a placeholder in and take it out again.
        $parts = parse_url(preg_replace('~^([a-z]+://(?:[^@/]*@)?)(?=/|\?|$)~i', '$1localhost', $url) ?? $url);
        if ($parts === false) {
            throw new \ValueError('The database URL cannot be parsed (check its percent-encoding); it is ' . self::schemeOf($url) . '://...');
        }
        parse_str($parts['query'] ?? '', $query);
        $options = [];
        foreach ($query as $name => $value) {
            if (!\is_string($value)) {
                throw new \ValueError("The database URL option '$name' must be given once, as name=value");
            }
            $options[(string) $name] = $value;
        }
        $socket = $options['socket'] ?? (isset($options['host']) && str_starts_with($options['host'], '/') ? $options['host'] : null);
        $port = (int) ($parts['port'] ?? $options['port'] ?? $kind->defaultPort());
        unset($options['socket'], $options['host'], $options['port']);

        return new self(
            $kind,
            $socket === null ? (string) ($parts['host'] ?? 'localhost') : 'localhost',
            $port,
            $socket,
            rawurldecode($parts['user'] ?? ''),
            rawurldecode($parts['pass'] ?? ''),
            rawurldecode(ltrim($parts['path'] ?? '', '/')),
            $options,
        );
    }

    public function password(): string
    {
        return $this->password;
    }

    public function option(string $name, string $default): string
    {
        return $this->options[$name] ?? $default;
    }

    /** The URL without its password and options, for messages and logs. */
    public function redacted(): string
    {
        $where = $this->socket ?? "{$this->host}:{$this->port}";

        return "{$this->kind->value}://" . rawurlencode($this->user) . "@$where/" . rawurlencode($this->database);
    }

    public function __toString(): string
    {
        return $this->redacted();
    }

    /** @return array<string, mixed> */
    public function __debugInfo(): array
    {
        return ['dsn' => $this->redacted()];
    }

    private static function schemeOf(string $url): string
    {
        return preg_match('~^([A-Za-z0-9+.-]{1,20})://~', $url, $m) === 1 ? $m[1] : '(no scheme)';
    }
}

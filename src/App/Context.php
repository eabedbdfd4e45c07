<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\Request;

/**
 * The per-request context: the request, its route parameters, and values middleware and handlers pass
 * along (the authenticated user, a request id, a database transaction). One per request, made by the App
 * when the request arrives and dropped when it is answered; nothing in it is shared between requests.
 */
final class Context
{
    /** @var array<string, mixed> */
    private array $values = [];

    /**
     * @param array<string, string> $params route parameters, by name
     */
    public function __construct(
        private readonly Request $request,
        private readonly array $params = [],
    ) {}

    public function request(): Request
    {
        return $this->request;
    }

    /** @return array<string, string> */
    public function params(): array
    {
        return $this->params;
    }

    public function param(string $name, ?string $default = null): ?string
    {
        return $this->params[$name] ?? $default;
    }

    /** The value set under $key, or $default when none was set (a value set to null is returned as null). */
    public function get(string $key, mixed $default = null): mixed
    {
        return \array_key_exists($key, $this->values) ? $this->values[$key] : $default;
    }

    public function set(string $key, mixed $value): void
    {
        $this->values[$key] = $value;
    }

    public function has(string $key): bool
    {
        return \array_key_exists($key, $this->values);
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Site\Upstream;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Site\Script;

/**
 * Which FastCGI responder runs a script: the one mapped to its file's extension (`.py` → 127.0.0.1:9001),
 * else the default (php-fpm for `.php`). Extensions compare case-sensitively, with their dot.
 */
final class FastCgiUpstreamMap
{
    /** @var array<string, FastCgiAddress> */
    private readonly array $extensions;

    /** @param array<string, FastCgiAddress> $extensions `.py` (dot optional) => address */
    public function __construct(
        private readonly ?FastCgiAddress $default,
        array $extensions = [],
    ) {
        $normalized = [];
        foreach ($extensions as $extension => $address) {
            $extension = \str_starts_with($extension, '.') ? $extension : '.' . $extension;
            if (\preg_match('/^\.[A-Za-z0-9_]+$/D', $extension) !== 1) {
                throw new \ValueError("A FastCGI map extension looks like .py, got '{$extension}'");
            }
            $normalized[$extension] = $address;
        }
        if ($default === null && $normalized === []) {
            throw new \ValueError('A FastCGI upstream map needs a default address or at least one extension');
        }
        $this->extensions = $normalized;
    }

    /** One responder for every script. */
    public static function single(FastCgiAddress|string $address): self
    {
        return new self(\is_string($address) ? FastCgiAddress::parse($address) : $address);
    }

    /**
     * From the text forms of the command line (`--fastcgi=ADDR`, `--fastcgi-map=EXT=ADDR`).
     *
     * @param array<string, string> $extensions
     *
     * @throws \ValueError naming the address that does not parse
     */
    public static function fromStrings(?string $default, array $extensions = []): self
    {
        return new self(
            $default === null ? null : FastCgiAddress::parse($default),
            \array_map(static fn(string $address): FastCgiAddress => FastCgiAddress::parse($address), $extensions),
        );
    }

    /** Null when the script's extension is not mapped and there is no default. */
    public function addressFor(Script $script): ?FastCgiAddress
    {
        $base = \basename($script->filename);
        $dot = \strrpos($base, '.');

        return ($dot === false ? null : ($this->extensions[\substr($base, $dot)] ?? null)) ?? $this->default;
    }
}

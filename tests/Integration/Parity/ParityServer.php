<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\NginxProcess;
use Kiln\Tests\Support\PhpFpmProcess;

/** One side of a parity comparison: where it listens, its document root, how to stop it, what it logged. */
final class ParityServer
{
    /**
     * @param \Closure(): void $stop
     * @param \Closure(): string $diagnostics
     */
    public function __construct(
        public readonly string $name,
        public readonly string $host,
        public readonly int $port,
        /** as the server reports it in DOCUMENT_ROOT (realpath) */
        public readonly string $documentRoot,
        private readonly \Closure $stop,
        private readonly \Closure $diagnostics,
    ) {}

    /** nginx in front of php-fpm on $documentRoot (the reference), optionally with kept FastCGI connections. */
    public static function nginxFpm(string $documentRoot, bool $keepConn = false): self
    {
        $fpm = PhpFpmProcess::start(children: 2, tcp: false, unix: true);
        try {
            $nginx = NginxProcess::start($documentRoot, $fpm, keepConn: $keepConn);
        } catch (\Throwable $e) {
            $fpm->stop();
            throw $e;
        }
        return new self(
            $keepConn ? 'nginx+php-fpm (fastcgi_keep_conn)' : 'nginx+php-fpm',
            '127.0.0.1',
            $nginx->port(),
            $nginx->documentRoot(),
            static function () use ($nginx, $fpm): void {
                $nginx->stop();
                $fpm->stop();
            },
            static fn(): string => $nginx->diagnostics() . "\n" . $fpm->diagnostics(),
        );
    }

    /** A running `kiln serve` whose document root is $documentRoot. */
    public static function kiln(string $name, KilnProcess $kiln, string $documentRoot): self
    {
        return new self(
            $name,
            $kiln->host(),
            $kiln->port(),
            (string) realpath($documentRoot),
            static function () use ($kiln): void {
                $kiln->stop();
            },
            static fn(): string => "--- kiln log\n" . implode("\n", \array_slice(explode("\n", rtrim($kiln->log())), -40)),
        );
    }

    public function stop(): void
    {
        ($this->stop)();
    }

    public function diagnostics(): string
    {
        return ($this->diagnostics)();
    }
}

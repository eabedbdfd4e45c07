<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A throwaway PostgreSQL 15: initdb in a temp dir, `postgres` on a free 127.0.0.1 port with its unix socket
 * in that dir, password (SCRAM) authentication over TCP and trust over the socket. PostgreSQL refuses to run
 * as root, so under root both run as the `postgres` user (setpriv, no intermediate process: the PID is the
 * server's). Ready when a connection answers SELECT 1; stopped by PID (TERM, then KILL), the dir removed.
 */
final class PostgresServer implements DbServer
{
    public const BIN = '/usr/lib/postgresql/15/bin';
    public const USER = 'kiln';
    public const PASSWORD = 's3cret-pw';
    public const DATABASE = 'postgres';

    private function __construct(
        private readonly PeerProcess $process,
        private readonly string $dir,
        private readonly int $port,
    ) {}

    public static function start(float $timeout = 60.0): self
    {
        if (!is_executable(self::BIN . '/postgres') || !\extension_loaded('pgsql')) {
            throw new \RuntimeException('PostgreSQL 15 or php-pgsql is missing: run scripts/install-deps.sh dev');
        }
        $dir = PeerProcess::tempDir('kiln-postgres');
        $as = self::runAs($dir);
        file_put_contents("$dir/pw", self::PASSWORD . "\n");
        PeerProcess::runToEnd('initdb', [...$as, self::BIN . '/initdb', '-D', "$dir/data", '-U', self::USER,
            '--pwfile', "$dir/pw", '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync',
            '--locale=C'], "$dir/initdb.log", $dir, $timeout);
        try {
            return PeerProcess::onFreePort(static function (int $port) use ($dir, $as, $timeout): self {
                $process = PeerProcess::launch('postgres', [...$as, self::BIN . '/postgres', '-D', "$dir/data", '-p', (string) $port,
                    '-k', $dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300',
                    '-c', 'shared_buffers=32MB', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'], "$dir/postgres.log");
                try {
                    $process->waitUntil(static fn(): bool => self::answers($port), $timeout, "SELECT 1 answered on port $port", static fn(): string => PeerProcess::tail("$dir/postgres.log"));
                } catch (\RuntimeException $e) {
                    $process->stop(5.0);
                    throw $e;
                }

                return new self($process, $dir, $port);
            });
        } catch (\RuntimeException $e) {
            PeerProcess::removeDir($dir);
            throw $e;
        }
    }

    /** postgres://kiln:…@127.0.0.1:port/postgres, with extra query options. */
    public function url(string $options = ''): string
    {
        return 'postgres://' . self::USER . ':' . self::PASSWORD . "@127.0.0.1:{$this->port}/" . self::DATABASE . ($options === '' ? '' : "?$options");
    }

    /** The same database over the unix socket in the temp dir. */
    public function socketUrl(): string
    {
        return 'postgres://' . self::USER . '@/' . self::DATABASE . '?host=' . rawurlencode($this->dir) . "&port={$this->port}";
    }

    public function port(): int
    {
        return $this->port;
    }

    /** A blocking connection for test setup and checks (never used by the code under test). */
    public function admin(): \PgSql\Connection
    {
        return self::connect($this->port);
    }

    public function diagnostics(): string
    {
        return PeerProcess::tail("{$this->dir}/postgres.log");
    }

    public function stop(): void
    {
        $this->process->stop(10.0);
        PeerProcess::removeDir($this->dir);
    }

    public function __destruct()
    {
        $this->stop();
    }

    private static function connect(int $port): \PgSql\Connection
    {
        $link = @pg_connect("host=127.0.0.1 port=$port user=" . self::USER . ' password=' . self::PASSWORD
            . ' dbname=' . self::DATABASE . ' connect_timeout=2', PGSQL_CONNECT_FORCE_NEW);
        if ($link === false) {
            throw new \RuntimeException("cannot connect to the test PostgreSQL on port $port");
        }

        return $link;
    }

    private static function answers(int $port): bool
    {
        try {
            pg_close(self::connect($port));

            return true;
        } catch (\RuntimeException) {
            return false;
        }
    }

    /** @return list<string> the command prefix that drops root to the postgres user, after giving it $dir */
    private static function runAs(string $dir): array
    {
        if (!PeerProcess::isRoot()) {
            return [];
        }
        $user = posix_getpwnam('postgres');
        if ($user === false) {
            throw new \RuntimeException('PostgreSQL refuses to run as root and there is no postgres user: run scripts/install-deps.sh dev');
        }
        chown($dir, $user['uid']);
        chgrp($dir, $user['gid']);
        chmod($dir, 0o700);

        return ['/usr/bin/setpriv', "--reuid={$user['uid']}", "--regid={$user['gid']}", '--init-groups'];
    }
}

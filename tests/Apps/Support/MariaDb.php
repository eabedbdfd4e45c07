<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\PeerProcess;

/**
 * A throwaway MariaDB for the application tests: its own datadir in a temp dir (`mariadb-install-db`), `mariadbd
 * --no-defaults` on a free 127.0.0.1 port and a unix socket in that dir, ready when `SELECT 1` answers over TCP.
 * Stopped by PID (TERM, then KILL) when stop() is called or the object goes away; the temp dir is removed.
 */
final class MariaDb
{
    public const SERVER = '/usr/sbin/mariadbd';
    public const INSTALL_DB = '/usr/bin/mariadb-install-db';

    private function __construct(
        private readonly PeerProcess $process,
        private readonly string $dir,
        private readonly int $port,
    ) {}

    public static function isInstalled(): bool
    {
        return is_executable(self::SERVER) && is_executable(self::INSTALL_DB) && \extension_loaded('mysqli');
    }

    public static function start(float $timeout = 60.0): self
    {
        if (!self::isInstalled()) {
            throw new \RuntimeException('MariaDB or php-mysql is missing: run scripts/install-apps.sh');
        }
        $dir = PeerProcess::tempDir('kiln-mariadb');
        $user = PeerProcess::isRoot() ? 'root' : (string) (posix_getpwuid(posix_geteuid())['name'] ?? 'root');
        $install = PeerProcess::launch('mariadb-install-db', [self::INSTALL_DB, '--no-defaults', "--datadir=$dir/data",
            '--auth-root-authentication-method=normal', "--user=$user", '--skip-test-db'], "$dir/install.log");
        $deadline = microtime(true) + $timeout;
        while ($install->isRunning() && microtime(true) < $deadline) {
            usleep(20_000);
        }
        $code = $install->exitCode();
        $install->stop(1.0);
        if ($code !== 0) {
            $log = PeerProcess::tail("$dir/install.log");
            PeerProcess::removeDir($dir);
            throw new \RuntimeException("mariadb-install-db failed (exit " . var_export($code, true) . "):\n$log");
        }
        return self::startIn($dir, $user, $timeout);
    }

    private static function startIn(string $dir, string $user, float $timeout): self
    {
        $lastError = null;
        for ($attempt = 0; $attempt < 3; $attempt++) {
            $port = PeerProcess::freePort();
            $process = PeerProcess::launch('mariadbd', [self::SERVER, '--no-defaults', "--datadir=$dir/data",
                "--socket=$dir/mysqld.sock", "--port=$port", '--bind-address=127.0.0.1', '--skip-networking=0',
                "--user=$user", "--pid-file=$dir/mysqld.pid", "--log-error=$dir/error.log", '--skip-log-bin',
                '--innodb-buffer-pool-size=64M', '--max-connections=200', '--skip-name-resolve'], "$dir/mariadbd.out");
            $db = new self($process, $dir, $port);
            try {
                $process->waitUntil($db->answers(...), $timeout, "SELECT 1 answered on port $port", $db->diagnostics(...));
                return $db;
            } catch (\RuntimeException $e) {
                $process->stop(2.0);
                $lastError = $e;
                if (!str_contains($e->getMessage(), 'already in use')) {
                    break;
                }
            }
        }
        PeerProcess::removeDir($dir);
        throw $lastError;
    }

    private function answers(): bool
    {
        try {
            $this->root()->close();
            return true;
        } catch (\mysqli_sql_exception) {
            return false;
        }
    }

    private function root(): \mysqli
    {
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        $mysqli = mysqli_init();
        if ($mysqli === false) {
            throw new \mysqli_sql_exception('mysqli_init() failed');
        }
        $mysqli->options(MYSQLI_OPT_CONNECT_TIMEOUT, 2);
        $mysqli->real_connect('127.0.0.1', 'root', '', null, $this->port);
        return $mysqli;
    }

    /** A fresh database and a user with every right on it, reachable from 127.0.0.1 and localhost. */
    public function createDatabase(string $name, string $user, string $password): void
    {
        if (preg_match('/^\w+$/', $name . $user) !== 1) {
            throw new \ValueError("database and user names must be word characters, got $name / $user");
        }
        $db = $this->root();
        $quoted = $db->real_escape_string($password);
        $db->query("CREATE DATABASE `$name` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci");
        foreach (['127.0.0.1', 'localhost'] as $host) {
            $db->query("CREATE USER '$user'@'$host' IDENTIFIED BY '$quoted'");
            $db->query("GRANT ALL PRIVILEGES ON `$name`.* TO '$user'@'$host'");
        }
        $db->close();
    }

    /** @return list<array<mixed>> */
    public function query(string $database, string $sql): array
    {
        $db = $this->root();
        $db->select_db($database);
        $result = $db->query($sql);
        $rows = $result instanceof \mysqli_result ? array_values($result->fetch_all(MYSQLI_ASSOC)) : [];
        $db->close();
        return $rows;
    }

    public function host(): string
    {
        return '127.0.0.1';
    }

    public function port(): int
    {
        return $this->port;
    }

    public function socket(): string
    {
        return "{$this->dir}/mysqld.sock";
    }

    public function diagnostics(): string
    {
        return PeerProcess::tail("{$this->dir}/mariadbd.out") . "\n" . PeerProcess::tail("{$this->dir}/error.log");
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
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A throwaway MariaDB for the database tests: `mariadb-install-db` into a temp dir, `mariadbd --no-defaults`
 * on a free 127.0.0.1 port and a unix socket in that dir, a database `kiln` and a user `kiln` (password,
 * mysql_native_password) with every right on it. Ready when that user can log in; stopped by PID (TERM, then
 * KILL) by stop() or when the object goes away; the dir is removed.
 */
final class MariaDbServer implements DbServer
{
    public const SERVER = '/usr/sbin/mariadbd';
    public const INSTALL_DB = '/usr/bin/mariadb-install-db';
    public const USER = 'kiln';
    public const PASSWORD = 'm4ria-pw';
    public const DATABASE = 'kiln';

    private function __construct(
        private readonly PeerProcess $process,
        private readonly string $dir,
        private readonly int $port,
    ) {}

    public static function start(float $timeout = 60.0): self
    {
        if (!is_executable(self::SERVER) || !is_executable(self::INSTALL_DB)) {
            throw new \RuntimeException('MariaDB is missing (' . self::SERVER . '): run scripts/install-deps.sh dev');
        }
        $dir = PeerProcess::tempDir('kiln-mariadb');
        $user = PeerProcess::isRoot() ? 'root' : (string) (posix_getpwuid(posix_geteuid())['name'] ?? 'root');
        file_put_contents("$dir/init.sql", 'CREATE DATABASE ' . self::DATABASE . ";\n"
            . "CREATE USER '" . self::USER . "'@'%' IDENTIFIED BY '" . self::PASSWORD . "';\n"
            . "CREATE USER '" . self::USER . "'@'localhost' IDENTIFIED BY '" . self::PASSWORD . "';\n"
            . 'GRANT ALL ON *.* TO ' . "'" . self::USER . "'@'%';\n"
            . 'GRANT ALL ON *.* TO ' . "'" . self::USER . "'@'localhost';\n");
        $install = PeerProcess::launch('mariadb-install-db', [self::INSTALL_DB, '--no-defaults', "--datadir=$dir/data",
            "--user=$user", '--skip-test-db', '--auth-root-authentication-method=normal'], "$dir/install.log");
        $deadline = microtime(true) + $timeout;
        while ($install->isRunning() && microtime(true) < $deadline) {
            usleep(20_000);
        }
        $code = $install->exitCode();
        $install->stop(1.0);
        if ($code !== 0) {
            $log = PeerProcess::tail("$dir/install.log");
            PeerProcess::removeDir($dir);
            throw new \RuntimeException('mariadb-install-db failed (exit ' . var_export($code, true) . "):\n$log");
        }
        $lastError = null;
        for ($attempt = 0; $attempt < 3; $attempt++) {
            $port = PeerProcess::freePort();
            $process = PeerProcess::launch('mariadbd', [self::SERVER, '--no-defaults', "--datadir=$dir/data",
                "--socket=$dir/mysqld.sock", "--port=$port", '--bind-address=127.0.0.1', "--user=$user",
                "--pid-file=$dir/mysqld.pid", "--log-error=$dir/error.log", '--skip-log-bin', "--init-file=$dir/init.sql",
                '--innodb-buffer-pool-size=64M', '--max-connections=400', '--skip-name-resolve', '--max-allowed-packet=64M'], "$dir/mariadbd.out");
            $server = new self($process, $dir, $port);
            try {
                $process->waitUntil($server->answers(...), $timeout, "user kiln logged in on port $port", $server->diagnostics(...));

                return $server;
            } catch (\RuntimeException $e) {
                $process->stop(5.0);
                $lastError = $e;
                if (!str_contains($e->getMessage(), 'already in use')) {
                    break;
                }
            }
        }
        PeerProcess::removeDir($dir);
        throw $lastError;
    }

    /** mysql://kiln:…@127.0.0.1:port/kiln, with extra query options. */
    public function url(string $options = ''): string
    {
        return 'mysql://' . self::USER . ':' . self::PASSWORD . "@127.0.0.1:{$this->port}/" . self::DATABASE . ($options === '' ? '' : "?$options");
    }

    public function socketUrl(): string
    {
        return 'mysql://' . self::USER . ':' . self::PASSWORD . '@/' . self::DATABASE . '?socket=' . rawurlencode($this->socket());
    }

    public function port(): int
    {
        return $this->port;
    }

    public function socket(): string
    {
        return "{$this->dir}/mysqld.sock";
    }

    /** A blocking mysqli connection for test setup and checks (never used by the code under test). */
    public function admin(): \mysqli
    {
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        $mysqli = mysqli_init();
        if ($mysqli === false) {
            throw new \RuntimeException('mysqli_init() failed');
        }
        $mysqli->options(MYSQLI_OPT_CONNECT_TIMEOUT, 2);
        $mysqli->real_connect('127.0.0.1', self::USER, self::PASSWORD, self::DATABASE, $this->port);

        return $mysqli;
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

    private function answers(): bool
    {
        try {
            $this->admin()->close();

            return true;
        } catch (\mysqli_sql_exception) {
            return false;
        }
    }
}

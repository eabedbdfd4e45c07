<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A throwaway MariaDB for the database, background and application tests: `mariadb-install-db` into a temp
 * dir, `mariadbd --no-defaults` on a free 127.0.0.1 port and a unix socket in that dir, a database `kiln` and
 * a user `kiln` (password, mysql_native_password) with every right; root logs in over TCP without a password
 * (createDatabase(), query()). Ready when the user kiln can log in; stopped by PID (TERM, then KILL) by stop()
 * or when the object goes away; the dir is removed.
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

    public static function isInstalled(): bool
    {
        return is_executable(self::SERVER) && is_executable(self::INSTALL_DB) && \extension_loaded('mysqli');
    }

    public static function start(float $timeout = 60.0): self
    {
        if (!self::isInstalled()) {
            throw new \RuntimeException('MariaDB or php-mysql is missing (' . self::SERVER . '): run scripts/install-deps.sh dev');
        }
        $dir = PeerProcess::tempDir('kiln-mariadb');
        $user = PeerProcess::isRoot() ? 'root' : (string) (posix_getpwuid(posix_geteuid())['name'] ?? 'root');
        file_put_contents("$dir/init.sql", 'CREATE DATABASE ' . self::DATABASE . ";\n"
            . "CREATE USER '" . self::USER . "'@'%' IDENTIFIED BY '" . self::PASSWORD . "';\n"
            . "CREATE USER '" . self::USER . "'@'localhost' IDENTIFIED BY '" . self::PASSWORD . "';\n"
            . 'GRANT ALL ON *.* TO ' . "'" . self::USER . "'@'%';\n"
            . 'GRANT ALL ON *.* TO ' . "'" . self::USER . "'@'localhost';\n");
        PeerProcess::runToEnd('mariadb-install-db', [self::INSTALL_DB, '--no-defaults', "--datadir=$dir/data",
            "--user=$user", '--skip-test-db', '--auth-root-authentication-method=normal'], "$dir/install.log", $dir, $timeout);
        try {
            return PeerProcess::onFreePort(static function (int $port) use ($dir, $user, $timeout): self {
                $process = PeerProcess::launch('mariadbd', [self::SERVER, '--no-defaults', "--datadir=$dir/data",
                    "--socket=$dir/mysqld.sock", "--port=$port", '--bind-address=127.0.0.1', "--user=$user",
                    "--pid-file=$dir/mysqld.pid", "--log-error=$dir/error.log", '--skip-log-bin', "--init-file=$dir/init.sql",
                    '--innodb-buffer-pool-size=64M', '--max-connections=400', '--skip-name-resolve', '--max-allowed-packet=64M'], "$dir/mariadbd.out");
                try {
                    $process->waitUntil(static fn(): bool => self::answers($port), $timeout, "user kiln logged in on port $port", static fn(): string => self::logs($dir));
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

    /** mysql://kiln:…@127.0.0.1:port/kiln, with extra query options. */
    public function url(string $options = ''): string
    {
        return 'mysql://' . self::USER . ':' . self::PASSWORD . "@127.0.0.1:{$this->port}/" . self::DATABASE . ($options === '' ? '' : "?$options");
    }

    public function socketUrl(): string
    {
        return 'mysql://' . self::USER . ':' . self::PASSWORD . '@/' . self::DATABASE . '?socket=' . rawurlencode($this->socket());
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

    /** A blocking mysqli connection as the user kiln, for test setup and checks (never used by the code under test). */
    public function admin(): \mysqli
    {
        return self::connect($this->port, self::USER, self::PASSWORD, self::DATABASE);
    }

    /** A fresh database and a user with every right on it, reachable from 127.0.0.1 and localhost. */
    public function createDatabase(string $name, string $user, string $password): void
    {
        if (preg_match('/^\w+$/', $name . $user) !== 1) {
            throw new \ValueError("database and user names must be word characters, got $name / $user");
        }
        $db = self::connect($this->port, 'root', '', null);
        $quoted = $db->real_escape_string($password);
        $db->query("CREATE DATABASE `$name` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci");
        foreach (['127.0.0.1', 'localhost'] as $host) {
            $db->query("CREATE USER '$user'@'$host' IDENTIFIED BY '$quoted'");
            $db->query("GRANT ALL PRIVILEGES ON `$name`.* TO '$user'@'$host'");
        }
        $db->close();
    }

    /**
     * The rows $sql returns in $database, run as root.
     *
     * @return list<array<mixed>>
     */
    public function query(string $database, string $sql): array
    {
        $db = self::connect($this->port, 'root', '', $database);
        $result = $db->query($sql);
        $rows = $result instanceof \mysqli_result ? array_values($result->fetch_all(MYSQLI_ASSOC)) : [];
        $db->close();

        return $rows;
    }

    public function diagnostics(): string
    {
        return self::logs($this->dir);
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

    private static function connect(int $port, string $user, string $password, ?string $database): \mysqli
    {
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        $mysqli = mysqli_init();
        if ($mysqli === false) {
            throw new \mysqli_sql_exception('mysqli_init() failed');
        }
        $mysqli->options(MYSQLI_OPT_CONNECT_TIMEOUT, 2);
        $mysqli->real_connect('127.0.0.1', $user, $password, $database, $port);

        return $mysqli;
    }

    private static function answers(int $port): bool
    {
        try {
            self::connect($port, self::USER, self::PASSWORD, self::DATABASE)->close();

            return true;
        } catch (\mysqli_sql_exception) {
            return false;
        }
    }

    private static function logs(string $dir): string
    {
        return PeerProcess::tail("$dir/mariadbd.out") . "\n" . PeerProcess::tail("$dir/error.log");
    }
}

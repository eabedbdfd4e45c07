<?php

declare(strict_types=1);

namespace Kiln\Server;

use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;

/**
 * Which loop driver the workers run and how many connections each takes, decided once before the workers are
 * forked (they inherit the open-files limit set here).
 *
 * - epoll, when FFI is usable (`--driver=auto`, the default, or `--driver=epoll`): EPOLL_DEFAULT connections per
 *   worker unless `--connections` says otherwise, and the soft RLIMIT_NOFILE raised to what that needs, as far as
 *   the hard limit allows (the kernel's fs.nr_open when the hard limit is unlimited). Only as far as needed: the
 *   php-cgi children, fork servers and CGI scripts a worker starts inherit the limit too.
 * - select otherwise: SELECT_DEFAULT connections unless `--connections` says otherwise, at most the driver's
 *   capacity (960), and the reason epoll was not chosen and what would give more, for the start-up line.
 *
 * What a connection costs in descriptors: itself, while idle. A request that runs may hold more (a php-cgi or
 * fork-server socket, a FastCGI upstream's, a CGI script's three pipes, a body spooled to a file): at most
 * PER_REQUEST, for at most `concurrency` requests at a time. So a worker needs `connections + concurrency ×
 * PER_REQUEST + RESERVE` descriptors, RESERVE covering its own (listeners, logs, the loop's, pipes to its
 * sidecars) as the epoll driver's capacity() does. Under a low hard limit the cap is what is left, and the
 * requests' share is at most half of the budget.
 */
final class ConnectionPlan
{
    public const EPOLL_DEFAULT = 10_000;
    public const SELECT_DEFAULT = 512;
    public const PER_REQUEST = 4;
    public const RESERVE = 64;

    /**
     * @param 'epoll'|'select' $driver
     * @param int|null $openFiles the soft open-files limit to set (null: leave it)
     */
    private function __construct(
        public readonly string $driver,
        public readonly int $connections,
        public readonly ?int $openFiles,
        /** Why this driver, and what bounds the cap, for the start-up lines. */
        public readonly string $reason,
    ) {}

    /**
     * The plan for this process: its FFI, its open-files limits.
     *
     * @param 'auto'|'epoll'|'select' $driver
     * @param int|null $requested --connections, when given
     *
     * @throws ServerException --driver=epoll without a usable FFI
     */
    public static function forThisProcess(string $driver, ?int $requested, int $concurrency): self
    {
        $limits = \function_exists('posix_getrlimit') ? posix_getrlimit() : false;
        $soft = \is_array($limits) ? ($limits['soft openfiles'] ?? null) : null;
        $hard = \is_array($limits) ? ($limits['hard openfiles'] ?? null) : null;
        $nrOpen = (int) @file_get_contents('/proc/sys/fs/nr_open');

        return self::decide(
            $driver,
            $requested,
            $concurrency,
            $driver === 'select' ? null : EpollDriver::unsupportedReason(),
            is_numeric($soft) ? (int) $soft : null,
            is_numeric($hard) ? (int) $hard : ($hard === 'unlimited' && $nrOpen > 0 ? $nrOpen : null),
        );
    }

    /**
     * The decision alone, from what forThisProcess() reads.
     *
     * @param 'auto'|'epoll'|'select' $driver
     * @param string|null $epollUnsupported why epoll cannot run here, null when it can
     * @param int|null $soft the soft open-files limit, null when unknown
     * @param int|null $hard the hard one (unlimited: the kernel's fs.nr_open), null when unknown
     *
     * @throws ServerException --driver=epoll without a usable FFI
     */
    public static function decide(string $driver, ?int $requested, int $concurrency, ?string $epollUnsupported, ?int $soft, ?int $hard): self
    {
        if ($requested !== null && $requested < 1) {
            throw new \ValueError("--connections must be at least 1, got $requested");
        }
        if ($driver === 'select' || ($driver === 'auto' && $epollUnsupported !== null)) {
            $why = $driver === 'select' ? '--driver=select' : "$epollUnsupported, and the epoll driver needs it";
            $want = $requested ?? self::SELECT_DEFAULT;
            $capacity = SelectDriver::CAPACITY;
            if ($want <= $capacity) {
                return new self('select', $want, null, "$why; the select driver watches at most $capacity connections");
            }
            $more = $driver === 'select' ? 'leave out --driver=select (the epoll driver)' : 'install php-ffi (the epoll driver)';
            return new self('select', $capacity, null, "$why; the select driver watches at most $capacity connections: --connections=$want capped at $capacity; $more for more");
        }
        if ($epollUnsupported !== null) {
            throw new ServerException("--driver=epoll cannot run: $epollUnsupported");
        }
        $want = $requested ?? self::EPOLL_DEFAULT;
        $needed = $want + $concurrency * self::PER_REQUEST + self::RESERVE;
        if ($soft === null || $hard === null) {
            return new self('epoll', $want, null, 'the open-files limit is unknown (no posix_getrlimit): not raised');
        }
        $target = max($soft, min($needed, $hard));
        $budget = $target - self::RESERVE;
        $connections = max(1, min($want, $budget - min($concurrency * self::PER_REQUEST, intdiv($budget, 2))));
        $raised = $target > $soft ? "open-files limit raised from $soft to $target" : "open-files limit $soft";
        $reason = $connections < $want
            ? "$raised, the hard limit: capped below $want; raise the hard limit (ulimit -Hn, systemd LimitNOFILE=) for more"
            : $raised;

        return new self('epoll', $connections, $target > $soft ? $target : null, $reason);
    }

    /**
     * Sets the soft open-files limit the plan needs (the hard one stays).
     *
     * @throws ServerException
     */
    public function apply(): void
    {
        if ($this->openFiles === null) {
            return;
        }
        $hard = posix_getrlimit()['hard openfiles'] ?? null;
        $hard = is_numeric($hard) ? (int) $hard : POSIX_RLIMIT_INFINITY;
        if (!posix_setrlimit(POSIX_RLIMIT_NOFILE, $this->openFiles, $hard)) {
            throw new ServerException("Cannot raise the open-files limit to {$this->openFiles}: " . posix_strerror(posix_get_last_error()));
        }
    }

    /** The start-up line: driver, cap and why. */
    public function describe(): string
    {
        return "{$this->driver} driver, {$this->connections} connections per worker ({$this->reason})";
    }
}

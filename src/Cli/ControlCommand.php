<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Server\Config;
use Kiln\Server\ListenAddress;
use Kiln\Server\PidFile;
use Kiln\Server\StatusFile;

/**
 * `kiln stop|reload|status`: signals (or reads) a running server found through its pid file
 * (--pid-file, or the default one for --listen). Only a process verified to be Kiln's supervisor is signalled
 * (PidFile::isSupervisor): a stale pid file means "not running". Exit codes: 0 done (also when the output
 * was closed, as in `kiln status | head -1`); 1 failed or not running; status: 3 not running.
 */
final class ControlCommand
{
    public const NOT_RUNNING = 3;

    /**
     * @param resource $stdout
     * @param resource $stderr
     */
    public function __construct(
        private readonly mixed $stdout,
        private readonly mixed $stderr,
    ) {}

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     * @throws UsageException
     */
    public function run(string $command, array $args, array $env, string $cwd): int
    {
        $flags = match ($command) {
            'stop' => ['graceful'],
            'status' => ['json', 'watch'],
            default => [],
        };
        $valued = $command === 'stop' ? ['pid-file', 'listen', 'timeout'] : ['pid-file', 'listen'];
        $options = Options::parse($args, $env, $valued, $flags);
        if ($options->positional !== []) {
            throw new UsageException("kiln $command takes no PATH; use --pid-file=FILE or --listen=HOST:PORT");
        }
        $pidPath = $options->string('pid-file');
        if ($pidPath !== null && !str_starts_with($pidPath, '/')) {
            $pidPath = rtrim($cwd, '/') . '/' . $pidPath;
        }
        try {
            $pidPath ??= Config::defaultPidFile(ListenAddress::parse($options->string('listen') ?? Config::DEFAULT_LISTEN));
        } catch (\ValueError $e) {
            throw new UsageException($e->getMessage(), 0, $e);
        }
        $recorded = PidFile::recordedPid($pidPath);
        $pid = $recorded !== null && PidFile::isSupervisor($recorded) ? $recorded : null;
        if ($pid === null) {
            $this->err($recorded === null
                ? "no running server found through pid file $pidPath"
                : "no running server: the pid file $pidPath is stale (" . PidFile::whyStale($recorded) . ')');
            return $command === 'status' ? self::NOT_RUNNING : 1;
        }
        return match ($command) {
            'stop' => $this->stop($pid, $options->flag('graceful'), $options->float('timeout')),
            'reload' => $this->signal($pid, SIGHUP, 'reload'),
            default => $options->flag('watch')
                ? $this->watch($pid, StatusFile::besidePidFile($pidPath), $pidPath, $options->flag('json'))
                : $this->status($pid, StatusFile::besidePidFile($pidPath), $options->flag('json')),
        };
    }

    private function stop(int $pid, bool $graceful, ?float $timeout): int
    {
        if ($this->signal($pid, $graceful ? SIGQUIT : SIGTERM, $graceful ? 'graceful stop' : 'stop') !== 0) {
            return 1;
        }
        $deadline = microtime(true) + ($timeout ?? ($graceful ? 60.0 : 15.0));
        while (PidFile::isSupervisor($pid)) {
            if (microtime(true) >= $deadline) {
                $this->err("server $pid is still running after the timeout; try again, or kill -KILL $pid");
                return 1;
            }
            usleep(50_000);
        }
        $this->out("stopped server $pid\n");
        return 0;
    }

    private function signal(int $pid, int $signal, string $what): int
    {
        if (!posix_kill($pid, $signal)) {
            $this->err("cannot signal server $pid for $what: " . posix_strerror(posix_get_last_error()));
            return 1;
        }
        if ($signal === SIGHUP) {
            $this->out("reload requested from server $pid\n");
        }
        return 0; // Said or not (a closed output), the signal went.
    }

    /**
     * `kiln status --watch`: the table redrawn every second until the server goes (or Ctrl-C, or the output is
     * closed). With --json, one JSON object a line every second, and nothing else on stdout.
     */
    private function watch(int $pid, StatusFile $file, string $pidPath, bool $json): int
    {
        while (PidFile::livePid($pidPath) === $pid) {
            $text = $json ? '' : "\e[H\e[2J" . date('H:i:s') . "  (kiln status --watch; Ctrl-C to leave)\n";
            if (!$this->out($text . $this->render($pid, $file, $json, 0))) {
                return 0;
            }
            usleep(1_000_000);
        }
        if ($json) {
            $this->err("the server (pid $pid) is gone");
        } else {
            $this->out("the server (pid $pid) is gone\n");
        }
        return self::NOT_RUNNING;
    }

    private function status(int $pid, StatusFile $file, bool $json): int
    {
        $this->out($this->render($pid, $file, $json, JSON_PRETTY_PRINT));
        return 0; // Also when the output was closed (`kiln status | head -1`), as `yes | head` does.
    }

    private function render(int $pid, StatusFile $file, bool $json, int $jsonFlags): string
    {
        $status = $file->read() ?? ['pid' => $pid, 'workers' => []];
        if ($json) {
            return json_encode($status, $jsonFlags | JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        }
        $state = \is_string($status['state'] ?? null) ? $status['state'] : 'running';
        $listen = \is_array($status['listen'] ?? null) ? implode(' ', array_map(static fn(mixed $v): string => \is_string($v) ? $v : '', $status['listen'])) : '';
        $text = "kiln $state: supervisor pid $pid $listen\n";
        $now = microtime(true);
        foreach (\is_array($status['workers'] ?? null) ? $status['workers'] : [] as $w) {
            if (!\is_array($w)) {
                continue;
            }
            // A stalled worker cannot report: its counts are from before the stall, and at least the request blocking
            // it is in flight. So its in-flight count is not shown as a number it is known not to be.
            $stalled = self::num($w['stalled'] ?? 0) > 0;
            $text .= sprintf(
                "  worker %d  pid %d  %s  requests %d  in flight %s  http %d  websockets %d  sse %d  memory %.1fM  uptime %ds  restarts %d\n",
                self::num($w['id'] ?? 0),
                self::num($w['pid'] ?? 0),
                $stalled ? sprintf('stalled %ds', self::num($w['stalled'])) : (\is_string($w['state'] ?? null) ? $w['state'] : '?'),
                self::num($w['requests'] ?? 0),
                $stalled ? 'unknown (stalled)' : (string) (int) self::num($w['inflight'] ?? 0),
                self::num($w['http'] ?? 0),
                self::num($w['websocket'] ?? 0),
                self::num($w['sse'] ?? 0),
                self::num($w['memory'] ?? 0) / 1048576,
                (int) ($now - self::num($w['started'] ?? $now)),
                self::num($w['restarts'] ?? 0),
            );
        }
        $sidecars = \is_array($status['sidecars'] ?? null) ? $status['sidecars'] : [];
        if (self::num($sidecars['processes'] ?? 0) > 0) {
            $pss = $sidecars['pss'] ?? null;
            $text .= sprintf(
                "  php-cgi pool  processes %d  pss %s\n",
                self::num($sidecars['processes']),
                is_numeric($pss) ? sprintf('%.1fM', (float) $pss / 1048576) : 'unknown',
            );
        }
        return $text;
    }

    private static function num(mixed $value): float
    {
        return is_numeric($value) ? (float) $value : 0.0;
    }

    /** False once stdout is closed (EPIPE: the reader left, as `head -1` does); PHP's notice is not shown. */
    private function out(string $text): bool
    {
        return @fwrite($this->stdout, $text) === \strlen($text);
    }

    private function err(string $text): void
    {
        @fwrite($this->stderr, "kiln: $text\n");
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Server\Log;

/**
 * `kiln serve --watch`: notices an edit to the PHP files under the served folder (the app's directory, or the
 * document root) and asks the supervisor for a reload, once the changed files compile. A file that does not
 * compile is reported (PHP's own message, with file and line) and the workers keep serving the code they have.
 *
 * How: the folder's `*.php` files are listed and stat'ed every POLL seconds (modification time, size, inode);
 * a file modified in the last two seconds is also hashed, since a second edit within the same second may keep
 * both its time and its size. Hidden directories are skipped. Polling needs no extension and sees every kind
 * of editor save (rename over, truncate and write); see docs/design/025 for why not inotify.
 *
 * poll() is called from the supervisor's loop (at least every 0.5 s); it returns true when the workers should
 * be reloaded.
 */
final class SourceWatch
{
    /** Seconds between two scans. */
    private const POLL = 0.5;

    /** Files listed at most: past that, the rest of the tree is not watched (said once in the log). */
    private const MAX_FILES = 20_000;

    /** @var array<string, array{string, ?string}> path => [time, size and inode; a hash when modified lately] */
    private array $files;

    private float $nextAt = 0.0;

    /** @var array<string, string> path => the lint message last reported for it (not repeated) */
    private array $broken = [];

    private bool $tooMany = false;

    public function __construct(
        private readonly string $folder,
        private readonly Log $log,
        private readonly string $php = \PHP_BINARY,
    ) {
        $this->files = $this->scan();
    }

    /** The folder --watch looks at for a served PATH. */
    public static function folderOf(Target $target): string
    {
        return $target->kind === Target::DOCROOT ? $target->path : (is_dir($target->path) ? $target->path : \dirname($target->path));
    }

    public function poll(float $now): bool
    {
        if ($now < $this->nextAt) {
            return false;
        }
        $this->nextAt = $now + self::POLL;
        $files = $this->scan();
        $changed = [];
        foreach ($files as $path => $signature) {
            $before = $this->files[$path] ?? null;
            if ($before === null || $before[0] !== $signature[0] || ($before[1] !== null && $signature[1] !== null && $before[1] !== $signature[1])) {
                $changed[] = $path;
            }
        }
        $removed = array_diff_key($this->files, $files) !== [];
        $this->files = $files;
        foreach (array_keys(array_diff_key($this->broken, $files)) as $gone) {
            unset($this->broken[$gone]);
        }
        if ($changed === [] && !$removed) {
            return false;
        }
        foreach ($changed as $path) {
            $error = $this->lint($path);
            if ($error === null) {
                unset($this->broken[$path]);
            } elseif (($this->broken[$path] ?? null) !== $error) {
                $this->broken[$path] = $error;
                $this->log->error("--watch: $error; the workers keep serving the previous code");
            }
        }
        if ($this->broken !== []) {
            return false;
        }
        // The workers are forked from this process and share its opcache, whose own timestamp checks follow a
        // clock the CLI never moves forward: the changed files are dropped from it here, for the new workers.
        if (\function_exists('opcache_invalidate')) {
            foreach ($changed as $path) {
                @opcache_invalidate($path, true);
            }
        }
        $names = array_map(fn(string $path): string => substr($path, \strlen($this->folder) + 1), $changed);
        $this->log->info('--watch: ' . ($names === [] ? 'a file was removed' : implode(', ', \array_slice($names, 0, 5))
            . (\count($names) > 5 ? ' and ' . (\count($names) - 5) . ' more' : '') . ' changed') . ': reloading the workers');
        return true;
    }

    /** PHP's message when $path does not compile (`php -l`), else null. */
    private function lint(string $path): ?string
    {
        $output = [];
        $status = 0;
        exec(escapeshellarg($this->php) . ' -n -l ' . escapeshellarg($path) . ' 2>&1', $output, $status);
        if ($status === 0) {
            return null;
        }
        foreach ($output as $line) {
            if (str_contains($line, ' on line ')) {
                return trim(preg_replace('/^(PHP )?/', '', $line) ?? $line);
            }
        }
        return "$path does not compile: " . trim(implode(' ', $output));
    }

    /** @return array<string, array{string, ?string}> every *.php file under the folder => its signature */
    private function scan(): array
    {
        clearstatcache();
        $files = [];
        $recent = microtime(true) - 2.0;
        $pending = [$this->folder];
        while ($pending !== []) {
            $dir = array_pop($pending);
            $entries = @scandir($dir);
            if ($entries === false) {
                continue;
            }
            foreach ($entries as $entry) {
                if ($entry[0] === '.') {
                    continue;
                }
                $path = "$dir/$entry";
                if (is_dir($path)) {
                    $pending[] = $path;
                    continue;
                }
                if (!str_ends_with($entry, '.php')) {
                    continue;
                }
                if (\count($files) >= self::MAX_FILES) {
                    if (!$this->tooMany) {
                        $this->tooMany = true;
                        $this->log->warning('--watch: more than ' . self::MAX_FILES . " PHP files under $this->folder: only the first are watched");
                    }
                    return $files;
                }
                $stat = @stat($path);
                if ($stat === false) {
                    continue;
                }
                $hash = $stat['mtime'] >= $recent - 1 ? (@md5_file($path) ?: null) : null;
                $files[$path] = ["{$stat['mtime']}:{$stat['size']}:{$stat['ino']}", $hash];
            }
        }
        return $files;
    }
}

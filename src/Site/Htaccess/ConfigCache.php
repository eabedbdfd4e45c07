<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Per directory: is it a directory, and what its .htaccess says. Each file is parsed once; an entry is
 * re-checked (one stat of the directory, one of the file) at most once per `$recheck` seconds, and
 * parsed again only when the file's stamp changed. Paths that are not directories, and directories with
 * no .htaccess, are cached the same way, so a request never walks the file system beyond those checks.
 * Entries beyond `$maxEntries` are dropped, least recently checked first.
 */
final class ConfigCache
{
    /** @var array<string, array{checked: float, directory: bool, stamp: ?string, config: DirectoryConfig}> */
    private array $entries = [];

    /** @var list<Warning> */
    private array $warnings = [];

    private readonly DirectoryConfig $empty;

    /** The earliest check time of the entries answered since takeOldest() (INF: none). */
    private float $oldest = INF;

    /** @var \Closure(): float */
    private readonly \Closure $clock;

    /** @param ?\Closure(): float $clock seconds, as microtime(true) (the default) */
    public function __construct(
        private readonly Filesystem $files,
        ?\Closure $clock = null,
        private readonly string $fileName = '.htaccess',
        private readonly float $recheck = 1.0,
        private readonly int $maxEntries = 10_000,
    ) {
        $this->clock = $clock ?? static fn(): float => microtime(true);
        $this->empty = DirectoryConfig::empty();
    }

    /**
     * The config of a directory (empty when it has no .htaccess), null when $path is not a directory.
     *
     * @param string $urlDirectory the directory's URL path with a trailing slash, for its rewrite prefix
     */
    public function directory(string $path, string $urlDirectory): ?DirectoryConfig
    {
        $now = ($this->clock)();
        $entry = $this->entries[$path] ?? null;
        if ($entry !== null && $now - $entry['checked'] < $this->recheck && $now >= $entry['checked']) {
            if ($entry['checked'] < $this->oldest) {
                $this->oldest = $entry['checked'];
            }
            return $entry['directory'] ? $entry['config'] : null;
        }
        $directory = $this->files->isDirectory($path);
        $stamp = $directory ? $this->files->stamp($path . '/' . $this->fileName) : null;
        if ($entry === null || $entry['directory'] !== $directory || $entry['stamp'] !== $stamp) {
            $entry = ['checked' => $now, 'directory' => $directory, 'stamp' => $stamp, 'config' => $this->load($path . '/' . $this->fileName, $stamp, $urlDirectory)];
        }
        $entry['checked'] = $now;
        $this->oldest = min($this->oldest, $now);
        unset($this->entries[$path]);
        $this->entries[$path] = $entry;
        if (\count($this->entries) > $this->maxEntries) {
            unset($this->entries[array_key_first($this->entries)]);
        }
        return $directory ? $entry['config'] : null;
    }

    /**
     * When the oldest of the entries answered since the last call was checked (INF: none answered): an
     * answer built from them is as fresh as that, and must be rebuilt once $recheck seconds have passed.
     */
    public function takeOldest(): float
    {
        $oldest = $this->oldest;
        $this->oldest = INF;
        return $oldest;
    }

    public function recheck(): float
    {
        return $this->recheck;
    }

    public function hasWarnings(): bool
    {
        return $this->warnings !== [];
    }

    /**
     * Warnings of the files parsed since the last call, each once per parse: the caller logs them.
     *
     * @return list<Warning>
     */
    public function takeWarnings(): array
    {
        $warnings = $this->warnings;
        $this->warnings = [];
        return $warnings;
    }

    private function load(string $file, ?string $stamp, string $urlDirectory): DirectoryConfig
    {
        if ($stamp === null) {
            return $this->empty;
        }
        $text = $this->files->read($file);
        if ($text === null) {
            $this->warnings[] = new Warning($file, 0, $this->fileName, 'cannot be read; everything under its directory is refused (403), as Apache does');
            $settings = new Settings();
            $settings->require = new Requirement('denied');
            return new DirectoryConfig($settings, [], null, []);
        }
        $config = ConfigBuilder::build(Parser::parse($text, $file), $urlDirectory);
        array_push($this->warnings, ...$config->warnings);
        return $config;
    }
}

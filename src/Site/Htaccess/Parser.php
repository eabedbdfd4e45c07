<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Reads an .htaccess file as Apache's config reader does: a backslash at the very end of a line joins the
 * next one; lines starting with `#` are comments (there are no trailing comments); arguments split on
 * white space, `"…"` or `'…'` quote one (a backslash escapes the quote inside); directive and section names
 * are case-insensitive. Sections: `<IfModule [!]name>` (evaluated against MODULES), `<IfDefine [!]name>`
 * (nothing is defined), `<Files>` (wildcard, or `~ regex`), `<FilesMatch>`, `<Limit>`, `<LimitExcept>`,
 * `<RequireAll|Any|None>`. Any other section is reported and its contents skipped. Never throws: what it
 * cannot read becomes a Warning.
 */
final class Parser
{
    /**
     * Modules a `<IfModule>` sees as loaded, by source file and by module name: the ones whose directives
     * Kiln applies, plus core and PHP (php_value, php_flag).
     */
    public const MODULES = [
        'core.c', 'http_core.c', 'mod_so.c', 'core_module', 'so_module', 'http_module',
        'mod_rewrite.c', 'rewrite_module', 'mod_headers.c', 'headers_module', 'mod_expires.c', 'expires_module',
        'mod_mime.c', 'mime_module', 'mod_dir.c', 'dir_module', 'mod_env.c', 'env_module',
        'mod_authz_core.c', 'authz_core_module', 'mod_authz_host.c', 'authz_host_module',
        'mod_access_compat.c', 'access_compat_module',
        'mod_php.c', 'mod_php7.c', 'mod_php8.c', 'php_module', 'php7_module', 'php8_module',
    ];

    private const SECTIONS = ['ifmodule', 'ifdefine', 'files', 'filesmatch', 'limit', 'limitexcept', 'requireall', 'requireany', 'requirenone'];

    /** @var list<Warning> */
    private array $warnings = [];

    private function __construct(private readonly string $file) {}

    /** @param string $file the file's path, for directives and warnings */
    public static function parse(string $text, string $file): ParsedFile
    {
        $parser = new self($file);
        $directives = $parser->read($text);
        return new ParsedFile($directives, $parser->warnings);
    }

    /**
     * Splits a directive's argument text as Apache's ap_getword_conf() does.
     *
     * @return list<string>
     */
    public static function words(string $text): array
    {
        $words = [];
        $length = \strlen($text);
        $i = 0;
        while (true) {
            while ($i < $length && ($text[$i] === ' ' || $text[$i] === "\t")) {
                $i++;
            }
            if ($i >= $length) {
                return $words;
            }
            $quote = $text[$i];
            if ($quote === '"' || $quote === "'") {
                $word = '';
                for ($i++; $i < $length && $text[$i] !== $quote; $i++) {
                    if ($text[$i] === '\\' && $i + 1 < $length && $text[$i + 1] === $quote) {
                        $i++;
                    }
                    $word .= $text[$i];
                }
                $i++;
                $words[] = $word;
                continue;
            }
            $end = strcspn($text, " \t", $i);
            $words[] = substr($text, $i, $end);
            $i += $end;
        }
    }

    /** @return list<Directive> */
    private function read(string $text): array
    {
        $directives = [];
        /** @var list<array{name: string, line: int, active: bool, files: ?FilesMatcher, methods: ?list<string>, except: bool, block: ?string}> $stack */
        $stack = [];
        foreach ($this->logicalLines($text) as [$number, $line]) {
            $active = $stack === [] || $stack[\count($stack) - 1]['active'];
            if (str_starts_with($line, '</')) {
                $name = strtolower(rtrim(substr($line, 2), "> \t"));
                $top = array_pop($stack);
                if ($top === null) {
                    $this->warn($number, "</$name>", 'closes a section that was never opened; ignored');
                } elseif ($top['name'] !== $name) {
                    $this->warn($number, "</$name>", "does not match <{$top['name']}> opened on line {$top['line']}; taken as its end");
                }
                continue;
            }
            if ($line[0] === '<') {
                $stack[] = $this->open($line, $number, $active, $stack === [] ? null : $stack[\count($stack) - 1]);
                continue;
            }
            if (!$active) {
                continue;
            }
            $words = self::words($line);
            $name = array_shift($words);
            if ($name === null) {
                continue;
            }
            $files = [];
            $methods = null;
            $except = false;
            $blocks = [];
            foreach ($stack as $frame) {
                if ($frame['files'] !== null) {
                    $files[] = $frame['files'];
                }
                if ($frame['methods'] !== null) {
                    [$methods, $except] = [$frame['methods'], $frame['except']];
                }
                if ($frame['block'] !== null) {
                    $blocks[] = $frame['block'];
                }
            }
            $directives[] = new Directive($name, $words, $this->file, $number, $files, $methods, $except, $blocks);
        }
        foreach (array_reverse($stack) as $frame) {
            $this->warn($frame['line'], "<{$frame['name']}>", 'is never closed; taken to end at the end of the file');
        }
        return $directives;
    }

    /**
     * @param ?array{name: string, line: int, active: bool, files: ?FilesMatcher, methods: ?list<string>, except: bool, block: ?string} $parent
     * @return array{name: string, line: int, active: bool, files: ?FilesMatcher, methods: ?list<string>, except: bool, block: ?string}
     */
    private function open(string $line, int $number, bool $active, ?array $parent): array
    {
        $closed = str_ends_with($line, '>');
        $words = self::words(rtrim($closed ? substr($line, 1, -1) : substr($line, 1)));
        $shown = $words[0] ?? '';
        $name = strtolower($shown);
        $frame = ['name' => $name, 'line' => $number, 'active' => false, 'files' => null, 'methods' => null, 'except' => false, 'block' => null];
        if (!$active) {
            return $frame;
        }
        if (!$closed) {
            $this->warn($number, "<$shown", "section opening has no closing '>'; its contents are ignored");
            return $frame;
        }
        if (!\in_array($name, self::SECTIONS, true)) {
            $this->warn($number, "<$shown>", 'section not supported; its contents are ignored');
            return $frame;
        }
        $arg = $words[1] ?? '';
        if ($arg === '' && !str_starts_with($name, 'require')) {
            $this->warn($number, "<$shown>", 'section needs an argument; its contents are ignored');
            return $frame;
        }
        $frame['active'] = true;
        if ($name === 'ifmodule' || $name === 'ifdefine') {
            $negate = $arg[0] === '!';
            $module = strtolower($negate ? substr($arg, 1) : $arg);
            $present = $name === 'ifmodule' && (\in_array($module, self::MODULES, true) || \in_array("mod_$module.c", self::MODULES, true));
            $frame['active'] = $present !== $negate;
        } elseif ($name === 'files' || $name === 'filesmatch') {
            if ($parent !== null && $parent['files'] !== null) {
                $this->warn($number, "<$shown>", 'nested in another files section (Apache refuses this); both must match');
            }
            if ($name === 'files' && $arg === '~' && ($words[2] ?? '') === '') {
                $this->warn($number, "<$shown>", 'needs a regex after ~; its contents are ignored');
                $frame['active'] = false;
                return $frame;
            }
            try {
                $frame['files'] = $name === 'filesmatch' || $arg === '~' ? FilesMatcher::regex($name === 'files' ? $words[2] ?? '' : $arg) : FilesMatcher::wildcard($arg);
            } catch (\InvalidArgumentException $e) {
                $this->warn($number, "<$shown>", $e->getMessage() . '; its contents are ignored');
                $frame['active'] = false;
            }
        } elseif ($name === 'limit' || $name === 'limitexcept') {
            $frame['methods'] = array_map('strtoupper', \array_slice($words, 1));
            $frame['except'] = $name === 'limitexcept';
        } else {
            $frame['block'] = substr($name, 7) . '#' . $number;
        }
        return $frame;
    }

    /** @return \Generator<int, array{int, string}> line number of the first physical line => the joined line, trimmed */
    private function logicalLines(string $text): \Generator
    {
        $lines = explode("\n", $text);
        $count = \count($lines);
        for ($i = 0; $i < $count; $i++) {
            $number = $i + 1;
            $line = rtrim($lines[$i], "\r");
            while (str_ends_with($line, '\\') && $i + 1 < $count) {
                $line = substr($line, 0, -1) . rtrim($lines[++$i], "\r");
            }
            $line = trim($line);
            if ($line !== '' && $line[0] !== '#') {
                yield $number => [$number, $line];
            }
        }
    }

    private function warn(int $line, string $directive, string $message): void
    {
        $this->warnings[] = new Warning($this->file, $line, $directive, $message);
    }
}

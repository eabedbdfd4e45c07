<?php

declare(strict_types=1);

namespace Kiln\Cli;

/**
 * Options of one command, from the command line and the environment (the command line wins):
 * `--name=value`, `--name value`, `--flag`; env KILN_NAME (upper-snake). Options given several times
 * (--listen) keep every value; in env they are comma-separated (or by the separator given for the option).
 */
final class Options
{
    /**
     * @param list<string> $positional
     * @param array<string, list<string>> $values option name => values as given (flags: "1")
     */
    private function __construct(
        public readonly array $positional,
        private readonly array $values,
        /** @var array<string, string> option name => the environment variable its value came from */
        private readonly array $fromEnv,
    ) {}

    /**
     * @param list<string> $args the command's arguments (after the command name)
     * @param array<string, string> $env
     * @param list<string> $valued options taking a value
     * @param list<string> $flags options taking none (`--daemon`, or `--daemon=0` to turn off)
     * @param string $prefix options starting with it take a value and are accepted under any name (--limit-)
     * @param array<string, non-empty-string> $envSeparators option => what separates its values in env, for values holding commas (default ',')
     * @throws UsageException
     */
    public static function parse(array $args, array $env, array $valued, array $flags, string $prefix = '', array $envSeparators = []): self
    {
        $positional = [];
        $cli = [];
        $count = \count($args);
        for ($i = 0; $i < $count; $i++) {
            $arg = $args[$i];
            if ($arg === '--') {
                array_push($positional, ...\array_slice($args, $i + 1));
                break;
            }
            if (!str_starts_with($arg, '--') || $arg === '--') {
                if (str_starts_with($arg, '-') && $arg !== '-') {
                    throw new UsageException("Unknown option $arg (options are --long=value; see kiln help)");
                }
                $positional[] = $arg;
                continue;
            }
            $name = substr($arg, 2);
            $value = null;
            if (str_contains($name, '=')) {
                [$name, $value] = explode('=', $name, 2);
            }
            $isValued = \in_array($name, $valued, true) || ($prefix !== '' && str_starts_with($name, $prefix) && $name !== $prefix);
            if ($isValued) {
                if ($value === null) {
                    if ($i + 1 >= $count) {
                        throw new UsageException("Option --$name needs a value: --$name=VALUE");
                    }
                    $value = $args[++$i];
                }
            } elseif (\in_array($name, $flags, true)) {
                $value = $value === null ? '1' : (string) self::bool("--$name", $value);
            } else {
                throw new UsageException("Unknown option --$name (see kiln help)");
            }
            $cli[$name][] = $value;
        }
        $values = $cli;
        $fromEnv = [];
        foreach ([...$valued, ...$flags] as $name) {
            $key = self::envName($name);
            if (!isset($values[$name]) && isset($env[$key])) {
                $fromEnv[$name] = $key;
                $values[$name] = \in_array($name, $flags, true)
                    ? [(string) self::bool($key, $env[$key])]
                    : array_values(array_filter(array_map('trim', explode($envSeparators[$name] ?? ',', $env[$key])), static fn($v) => $v !== ''));
            }
        }
        if ($prefix !== '') {
            $envPrefix = self::envName($prefix);
            foreach ($env as $key => $value) {
                $name = strtolower(str_replace('_', '-', substr($key, 5)));
                if (str_starts_with($key, $envPrefix) && \strlen($key) > \strlen($envPrefix) && !isset($cli[$name])) {
                    $values[$name] = [$value];
                    $fromEnv[$name] = $key;
                }
            }
        }
        return new self($positional, $values, $fromEnv);
    }

    public static function envName(string $option): string
    {
        return 'KILN_' . strtoupper(str_replace('-', '_', $option));
    }

    /**
     * $message with each `--name` of an option whose value came from the environment named as the variable the user
     * set (`KILN_WORKERS must be …`): the messages name options as typed on the command line.
     */
    public function inUsersTerms(string $message): string
    {
        if ($this->fromEnv === []) {
            return $message;
        }
        return (string) preg_replace_callback(
            '~(?<![\w-])--([a-z][a-z0-9-]*)~',
            fn(array $m): string => $this->fromEnv[$m[1]] ?? $m[0],
            $message,
        );
    }

    public function has(string $name): bool
    {
        return isset($this->values[$name]);
    }

    public function string(string $name): ?string
    {
        $values = $this->values[$name] ?? [];
        return $values === [] ? null : $values[\count($values) - 1];
    }

    /** @return list<string> */
    public function all(string $name): array
    {
        return $this->values[$name] ?? [];
    }

    public function int(string $name): ?int
    {
        $value = $this->string($name);
        if ($value === null) {
            return null;
        }
        if (preg_match('/^\d+$/', $value) !== 1) {
            throw new UsageException("--$name must be a whole number, got '$value'");
        }
        return (int) $value;
    }

    public function float(string $name): ?float
    {
        $value = $this->string($name);
        if ($value === null) {
            return null;
        }
        if (!is_numeric($value) || (float) $value < 0) {
            throw new UsageException("--$name must be a number of seconds, got '$value'");
        }
        return (float) $value;
    }

    public function flag(string $name): bool
    {
        return $this->string($name) === '1';
    }

    /** @return array<string, string> every option starting with $prefix, the prefix cut off */
    public function prefixed(string $prefix): array
    {
        $found = [];
        foreach ($this->values as $name => $values) {
            if (str_starts_with($name, $prefix) && $values !== []) {
                $found[substr($name, \strlen($prefix))] = $values[\count($values) - 1];
            }
        }
        return $found;
    }

    private static function bool(string $name, string $value): int
    {
        return match (strtolower(trim($value))) {
            '1', 'true', 'yes', 'on' => 1,
            '0', 'false', 'no', 'off', '' => 0,
            default => throw new UsageException("$name must be true or false, got '$value'"),
        };
    }
}

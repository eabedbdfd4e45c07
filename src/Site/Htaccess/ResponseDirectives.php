<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * The directives that change a response or a script's settings rather than the path: mod_headers,
 * mod_expires, mod_mime's AddType, core's AddDefaultCharset / ErrorDocument / Options, mod_dir,
 * mod_env, mod_mime's SetHandler / RemoveHandler (whether PHP runs) and PHP's php_value family.
 */
final class ResponseDirectives
{
    public const NAMES = [
        'header', 'expiresactive', 'expiresbytype', 'expiresdefault', 'addtype', 'adddefaultcharset', 'errordocument',
        'options', 'directoryindex', 'setenv', 'unsetenv', 'php_value', 'php_flag', 'php_admin_value', 'php_admin_flag',
        'sethandler', 'removehandler',
    ];

    /** @return list<string> what was not applied, as messages */
    public static function apply(Directive $d, Settings $s): array
    {
        $args = $d->args;
        $count = \count($args);
        try {
            switch ($d->key()) {
                case 'header':
                    return self::header($args, $s);
                case 'expiresactive':
                    $s->expiresActive = self::onOff($args);
                    return [];
                case 'expiresbytype':
                    self::count($args, 2, 2);
                    $s->expiresByType[strtolower($args[0])] = Expiry::parse($args[1]);
                    return [];
                case 'expiresdefault':
                    self::count($args, 1, 1);
                    $s->expiresDefault = Expiry::parse($args[0]);
                    return [];
                case 'addtype':
                    self::count($args, 2, PHP_INT_MAX);
                    if (preg_match('~^application/x-httpd-(php|ea-php)~i', $args[0]) === 1) {
                        throw new \InvalidArgumentException("'{$args[0]}' names a PHP handler, not a type: Kiln runs only its script extensions as PHP and never sends such a type");
                    }
                    foreach (\array_slice($args, 1) as $extension) {
                        $s->types[strtolower(ltrim($extension, '.'))] = $args[0];
                    }
                    return [];
                case 'adddefaultcharset':
                    self::count($args, 1, 1);
                    $lower = strtolower($args[0]);
                    $s->defaultCharset = $lower === 'off' ? '' : ($lower === 'on' ? 'iso-8859-1' : $args[0]);
                    return [];
                case 'errordocument':
                    self::count($args, 2, 2);
                    $status = (int) $args[0];
                    if ($status < 400 || $status > 599) {
                        throw new \InvalidArgumentException("needs a 4xx or 5xx status, got '{$args[0]}'");
                    }
                    $s->errorDocuments[$status] = $args[1] === 'default' ? '' : $args[1];
                    return [];
                case 'options':
                    return self::options($args, $s);
                case 'directoryindex':
                    self::count($args, 1, PHP_INT_MAX);
                    $s->directoryIndex = $count === 1 && strtolower($args[0]) === 'disabled' ? [] : $args;
                    return [];
                case 'setenv':
                    self::count($args, 1, 2);
                    $s->env[$args[0]] = $args[1] ?? '';
                    return [];
                case 'unsetenv':
                    self::count($args, 1, PHP_INT_MAX);
                    array_push($s->unsetEnv, ...$args);
                    foreach ($args as $name) {
                        unset($s->env[$name]);
                    }
                    return [];
                case 'sethandler':
                    self::count($args, 1, 1);
                    $s->handler = strtolower($args[0]) === 'none' ? '' : $args[0];
                    return [];
                case 'removehandler':
                    self::count($args, 1, PHP_INT_MAX);
                    foreach ($args as $extension) {
                        $s->removedHandlers[] = strtolower(ltrim($extension, '.'));
                    }
                    return [];
                default: // php_value, php_flag, php_admin_value, php_admin_flag
                    self::count($args, 2, 2);
                    $flag = str_ends_with($d->key(), '_flag');
                    $value = $flag ? (self::onOff([$args[1]]) ? '1' : '0') : (strtolower($args[1]) === 'none' ? '' : $args[1]);
                    if (strtolower($args[0]) === 'engine') {
                        // Not a setting to pass on: it decides whether the script runs at all (DocumentRoot).
                        $s->phpEngine = $flag ? $value === '1' : self::onOff([$args[1]]);
                    } else {
                        $s->phpIni[$args[0]] = $value;
                    }
                    return str_contains($d->key(), 'admin') ? ['Apache refuses php_admin_* in .htaccess; Kiln applies it as php_value'] : [];
            }
        } catch (\InvalidArgumentException $e) {
            return [$e->getMessage() . '; ignored'];
        }
    }

    /**
     * @param list<string> $args
     * @return list<string>
     */
    private static function header(array $args, Settings $s): array
    {
        $always = false;
        if (\in_array(strtolower($args[0] ?? ''), ['always', 'onsuccess'], true)) {
            $always = strtolower((string) array_shift($args)) === 'always';
        }
        $op = strtolower($args[0] ?? '');
        if (!\in_array($op, HeaderAction::OPS, true)) {
            throw new \InvalidArgumentException("action '$op' is not supported (only " . implode(', ', HeaderAction::OPS) . ')');
        }
        $name = $args[1] ?? '';
        if (preg_match('/^[!#$%&\'*+\-.^_`|~0-9A-Za-z]+$/', $name) !== 1) {
            throw new \InvalidArgumentException("needs a header name, got '$name'");
        }
        $rest = \array_slice($args, $op === 'unset' ? 2 : 3);
        $value = $op === 'unset' ? '' : ($args[2] ?? throw new \InvalidArgumentException("'$op' needs a value"));
        $env = null;
        if ($rest !== []) {
            if (\count($rest) > 1 || !str_starts_with(strtolower($rest[0]), 'env=')) {
                throw new \InvalidArgumentException("only an env=[!]VAR condition may follow, got '" . implode(' ', $rest) . "'");
            }
            $env = substr($rest[0], 4);
        }
        $negated = $env !== null && str_starts_with($env, '!');
        $s->headers[] = new HeaderAction($op, $name, $value, $always, $negated ? substr((string) $env, 1) : $env, $negated);
        return [];
    }

    /**
     * @param list<string> $args
     * @return list<string>
     */
    private static function options(array $args, Settings $s): array
    {
        $warnings = [];
        foreach ($args as $option) {
            $sign = $option !== '' && ($option[0] === '+' || $option[0] === '-') ? $option[0] : '';
            $name = strtolower(ltrim($option, '+-'));
            if ($name === 'indexes') {
                $s->indexes = $sign !== '-';
                if ($sign !== '-') {
                    $warnings[] = 'Kiln never lists a directory: +Indexes has no effect';
                }
            } elseif ($name === 'none') {
                $s->indexes = false;
            } elseif (\in_array($name, ['followsymlinks', 'symlinksifownermatch'], true) || ($sign === '-' && \in_array($name, ['multiviews', 'execcgi', 'includes', 'includesnoexec'], true))) {
                continue; // Kiln follows symlinks that stay under the root, never negotiates, never runs SSI.
            } else {
                $warnings[] = "option '$option' is not supported; ignored";
            }
        }
        return $warnings;
    }

    /** @param list<string> $args */
    private static function onOff(array $args): bool
    {
        self::count($args, 1, 1);
        return match (strtolower($args[0])) {
            'on', '1', 'true', 'yes' => true,
            'off', '0', 'false', 'no' => false,
            default => throw new \InvalidArgumentException("needs on or off, got '{$args[0]}'"),
        };
    }

    /** @param list<string> $args */
    private static function count(array $args, int $min, int $max): void
    {
        $count = \count($args);
        if ($count < $min || $count > $max) {
            throw new \InvalidArgumentException($min === $max ? "takes $min argument(s), got $count" : "takes $min to $max arguments, got $count");
        }
    }
}

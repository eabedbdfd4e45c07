<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Turns one file's directives into a DirectoryConfig: rewrite directives into a RewriteSet, access
 * directives (mod_authz_core, mod_authz_host, mod_access_compat) into Requirement trees and AccessCompat
 * sets, the rest through ResponseDirectives. Every directive it does not apply, or applies only in part,
 * becomes a Warning with the file and line.
 */
final class ConfigBuilder
{
    private const REWRITE = ['rewriteengine', 'rewritebase', 'rewriteoptions', 'rewritecond', 'rewriterule'];

    private const ACCESS = ['require', 'order', 'allow', 'deny', 'satisfy'];

    /** @var list<Warning> */
    private array $warnings = [];

    /** @var array<string, Requirement> group nodes by settings object and block id */
    private array $groups = [];

    private function __construct() {}

    /** @param string $directory URL path of the file's directory, with a trailing slash (`/`, `/blog/`) */
    public static function build(ParsedFile $parsed, string $directory): DirectoryConfig
    {
        $builder = new self();
        $builder->warnings = $parsed->warnings;
        $settings = new Settings();
        /** @var array<string, array{list<FilesMatcher>, Settings}> $files */
        $files = [];
        $rewrite = null;
        $conditions = [];
        foreach ($parsed->directives as $d) {
            $key = $d->key();
            $target = $settings;
            if ($d->files !== []) {
                $id = implode(',', array_map('spl_object_id', $d->files));
                $files[$id] ??= [$d->files, new Settings()];
                $target = $files[$id][1];
            }
            if (\in_array($key, self::REWRITE, true)) {
                if ($d->files !== []) {
                    $builder->warn($d, 'rewrite directives inside <Files> are not supported; ignored');
                    continue;
                }
                $rewrite ??= new RewriteSet($directory);
                $builder->rewrite($d, $rewrite, $conditions);
            } elseif (\in_array($key, self::ACCESS, true)) {
                $builder->access($d, $target);
            } elseif (\in_array($key, ResponseDirectives::NAMES, true)) {
                foreach (ResponseDirectives::apply($d, $target) as $message) {
                    $builder->warn($d, $message);
                }
            } else {
                $builder->warn($d, 'directive not supported; ignored');
            }
        }
        if ($conditions !== []) {
            $builder->warn($conditions[0][1], 'RewriteCond with no RewriteRule after it; ignored');
        }
        return new DirectoryConfig($settings, array_values($files), $rewrite, $builder->warnings, $parsed->directives === []);
    }

    /** @param list<array{RewriteCondition, Directive}> $conditions pending conditions, taken by the next rule */
    private function rewrite(Directive $d, RewriteSet $set, array &$conditions): void
    {
        $args = $d->args;
        try {
            switch ($d->key()) {
                case 'rewriteengine':
                    $set->engine = match (strtolower($args[0] ?? '')) {
                        'on' => true,
                        'off' => false,
                        default => throw new \InvalidArgumentException('needs on or off'),
                    };
                    return;
                case 'rewritebase':
                    if (\count($args) !== 1 || !str_starts_with($args[0], '/')) {
                        throw new \InvalidArgumentException('needs one URL path starting with /');
                    }
                    $set->base = $args[0];
                    return;
                case 'rewriteoptions':
                    foreach ($args as $option) {
                        $lower = strtolower($option);
                        if ($lower === 'inherit' || $lower === 'inheritbefore') {
                            $set->inherit = $lower;
                        } elseif ($lower === 'mergebase') {
                            $set->mergeBase = true;
                        } else {
                            $this->warn($d, "option '$option' is not supported; ignored");
                        }
                    }
                    return;
                case 'rewritecond':
                    if (\count($args) < 2 || \count($args) > 3) {
                        throw new \InvalidArgumentException('takes a test string, a pattern and optional [flags]');
                    }
                    $this->checkVariables($d, $args[0]);
                    $flags = isset($args[2]) ? self::flagList($args[2]) : [];
                    $conditions[] = [RewriteCondition::create($args[0], $args[1], $flags), $d];
                    return;
                default:
                    $pending = $conditions;
                    $conditions = [];
                    if (\count($args) < 2 || \count($args) > 3) {
                        throw new \InvalidArgumentException('takes a pattern, a substitution and optional [flags]');
                    }
                    $this->checkVariables($d, $args[1]);
                    $messages = [];
                    $set->rules[] = RewriteRule::create($args[0], $args[1], $args[2] ?? '', array_column($pending, 0), $d->file, $d->line, $messages);
                    foreach ($messages as $message) {
                        $this->warn($d, $message);
                    }
            }
        } catch (\InvalidArgumentException $e) {
            $this->warn($d, $e->getMessage() . ($d->key() === 'rewritecond' ? '; the rule it belongs to is skipped' : '; ignored'));
            if ($d->key() === 'rewritecond') {
                $conditions[] = [RewriteCondition::create('', '!.?', []), $d]; // never true: the rule cannot match
            }
        }
    }

    private function access(Directive $d, Settings $s): void
    {
        $args = $d->args;
        $key = $d->key();
        if ($key === 'satisfy') {
            if (strtolower($args[0] ?? '') !== 'all') {
                $this->warn($d, 'only Satisfy All (the default) is supported; ignored');
            }
            return;
        }
        if ($key === 'order') {
            $order = strtolower(str_replace(' ', '', implode('', $args)));
            if (!\in_array($order, ['allow,deny', 'deny,allow', 'mutual-failure'], true)) {
                $this->warn($d, "order must be allow,deny, deny,allow or mutual-failure, got '" . implode(' ', $args) . "'; ignored");
                return;
            }
            $s->accessCompat ??= new AccessCompat();
            $s->accessCompat->order = $order;
            return;
        }
        if ($key === 'allow' || $key === 'deny') {
            if (strtolower($args[0] ?? '') !== 'from' || \count($args) < 2) {
                $this->warn($d, 'must be written ' . ucfirst($key) . ' from HOST…; ignored');
                return;
            }
            $s->accessCompat ??= new AccessCompat();
            foreach (\array_slice($args, 1) as $host) {
                $lower = strtolower($host);
                $range = IpRange::parse($host);
                if ($lower !== 'all' && !str_starts_with($lower, 'env=') && $range === null) {
                    $this->warn($d, "host name '$host' is never looked up: it matches no client");
                }
                $s->accessCompat->add($key === 'allow', $lower === 'all', $range === null ? [] : [$range], str_starts_with($lower, 'env=') ? substr($host, 4) : null, $d->methods, $d->exceptMethods);
            }
            return;
        }
        $this->require($d, $s);
    }

    private function require(Directive $d, Settings $s): void
    {
        $args = $d->args;
        $negate = strtolower($args[0] ?? '') === 'not';
        if ($negate) {
            array_shift($args);
        }
        $type = strtolower((string) array_shift($args));
        $values = [];
        if ($type === 'all' && \in_array(strtolower($args[0] ?? ''), ['granted', 'denied'], true)) {
            $kind = strtolower($args[0]);
        } elseif ($type === 'ip' && $args !== []) {
            $kind = 'ip';
            foreach ($args as $ip) {
                $range = IpRange::parse($ip);
                $range === null ? $this->warn($d, "'$ip' is not an address or range; it matches no client") : $values[] = $range;
            }
        } elseif ($type === 'local') {
            [$kind, $values] = ['local', array_values(array_filter([IpRange::parse('127.0.0.0/8'), IpRange::parse('::1')]))];
        } elseif (($type === 'method' || $type === 'env') && $args !== []) {
            [$kind, $values] = [$type, $type === 'method' ? array_map('strtoupper', $args) : $args];
        } else {
            $kind = 'never';
            $this->warn($d, "'Require $type' is not supported (no authentication, no DNS, no expressions): it never grants access");
        }
        $s->require ??= new Requirement('any');
        $parent = $s->require;
        $prefix = spl_object_id($s) . ':';
        foreach ($d->requireBlocks as $block) {
            if (!isset($this->groups[$prefix . $block])) {
                $this->groups[$prefix . $block] = new Requirement(explode('#', $block)[0]);
                $parent->add($this->groups[$prefix . $block]);
            }
            $parent = $this->groups[$prefix . $block];
        }
        $parent->add(new Requirement($kind, $negate, $values, $d->methods, $d->exceptMethods));
    }

    private function checkVariables(Directive $d, string $text): void
    {
        preg_match_all('/%\{([^}]*)\}/', $text, $m);
        foreach ($m[1] as $name) {
            if (!Variables::isKnown($name)) {
                $this->warn($d, "variable %{{$name}} is not supported; it reads as empty");
            }
        }
        if (str_contains($text, '${')) {
            $this->warn($d, 'RewriteMap lookups ${…} are not supported; kept as written');
        }
    }

    /** @return list<string> upper-case */
    private static function flagList(string $flags): array
    {
        if (!str_starts_with($flags, '[') || !str_ends_with($flags, ']')) {
            throw new \InvalidArgumentException("flags must be written [A,B], got '$flags'");
        }
        return array_values(array_filter(array_map(static fn(string $f): string => strtoupper(trim($f)), explode(',', substr($flags, 1, -1))), static fn(string $f): bool => $f !== ''));
    }

    private function warn(Directive $d, string $message): void
    {
        $this->warnings[] = $d->warning($message);
    }
}

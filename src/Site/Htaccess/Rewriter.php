<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Runs one round of a directory's rewrite rules as mod_rewrite does in per-directory context: the
 * directory's URL prefix is stripped from the path before a pattern is tried; a relative substitution gets
 * RewriteBase (else the directory's URL path) put in front; `-` keeps the path (and ignores [R]); `$N`
 * are the rule's groups, `%N` the last matched condition's; [L]/[END] end the round; F, G and R end the
 * request.
 */
final class Rewriter
{
    public function __construct(private readonly Filesystem $files) {}

    public function run(RewriteSet $set, Variables $vars, string $uri, string $query, string $host): RewriteResult
    {
        $path = null;
        $type = null;
        $skip = 0;
        $skipChain = false;
        foreach ($set->rules as $rule) {
            if ($skip > 0) {
                $skip--;
                continue;
            }
            if ($skipChain) {
                $skipChain = $rule->chain;
                continue;
            }
            $subject = $path ?? $uri;
            if (str_starts_with($subject, $set->directory)) {
                $subject = substr($subject, \strlen($set->directory));
            }
            $groups = [];
            $matched = preg_match($rule->pattern, $subject, $groups) === 1;
            if ($rule->negate) {
                [$matched, $groups] = [!$matched, []];
            }
            $condGroups = [];
            if (!$matched || !$this->conditions($rule, $vars, $groups, $condGroups)) {
                $skipChain = $rule->chain;
                continue;
            }
            foreach ($rule->env as [$name, $value]) {
                if ($value === null) {
                    unset($vars->env[$name]);
                } else {
                    $vars->env[$name] = $this->expand($value, $vars, $groups, $condGroups, false);
                }
            }
            $type = $rule->type ?? $type;
            if ($rule->refuse !== 0) {
                return new RewriteResult(null, $query, null, $rule->refuse);
            }
            if ($rule->qsd) {
                $query = '';
            }
            if ($rule->substitution !== '-') {
                $new = $this->expand($rule->substitution, $vars, $groups, $condGroups, $rule->escapeBackrefs);
                $mark = strpos($new, '?');
                if ($mark !== false) {
                    $added = substr($new, $mark + 1);
                    $new = substr($new, 0, $mark);
                    $query = $rule->qsa && $query !== '' && $added !== '' ? "$added&$query" : ($rule->qsa ? $added . $query : $added);
                }
                $absolute = preg_match('~^https?://([^/?#]*)(.*)$~i', $new, $url) === 1;
                if ($absolute && $rule->redirect === null && strcasecmp($url[1], $host) === 0) {
                    [$new, $absolute] = [$url[2] === '' ? '/' : $url[2], false];
                }
                if ($absolute || $rule->redirect !== null) {
                    $location = $absolute ? $new : $this->prefix($set, $new);
                    return new RewriteResult(null, $query, $this->location($location, $query, $vars, $rule->noEscape), $rule->redirect ?? 302);
                }
                $path = $this->prefix($set, $new);
            } // `-` with [R] redirects nowhere: Apache ignores the flag (no substitution, nothing to send).
            if ($rule->end) {
                return new RewriteResult($path, $query, end: true, type: $type);
            }
            if ($rule->last) {
                break;
            }
            $skip = $rule->skip;
        }
        return new RewriteResult($path, $query, type: $type);
    }

    /**
     * @param array<int|string, string> $groups
     * @param array<int|string, string> $condGroups set to the groups of the last condition that matched
     */
    private function conditions(RewriteRule $rule, Variables $vars, array $groups, array &$condGroups): bool
    {
        $conditions = $rule->conditions;
        $count = \count($conditions);
        for ($i = 0; $i < $count; $i++) {
            $condition = $conditions[$i];
            $ok = $this->condition($condition, $this->expand($condition->testString, $vars, $groups, $condGroups, false), $condGroups);
            if ($condition->orNext) {
                if ($ok) {
                    while ($i < $count - 1 && $conditions[$i]->orNext) {
                        $i++;
                    }
                }
                continue;
            }
            if (!$ok) {
                return false;
            }
        }
        return true;
    }

    /** @param array<int|string, string> $condGroups */
    private function condition(RewriteCondition $c, string $test, array &$condGroups): bool
    {
        $operand = $c->operand === '""' ? '' : $c->operand;
        $compare = $c->noCase ? strcasecmp($test, $operand) : strcmp($test, $operand);
        if ($c->operator === 'regex') {
            $matched = preg_match($c->operand, $test, $groups) === 1;
            if ($matched && !$c->negate) {
                $condGroups = $groups;
            }
            return $matched !== $c->negate;
        }
        $result = match ($c->operator) {
            '-f', '-F', '-e' => $this->files->isFile($test) || ($c->operator === '-e' && $this->files->isDirectory($test)),
            '-d' => $this->files->isDirectory($test),
            '-s' => ($this->files->size($test) ?? 0) > 0,
            '-l', '-L', '-h' => $this->files->isLink($test),
            '-x' => $this->files->isExecutable($test),
            '=' => $compare === 0,
            '<' => $compare < 0,
            '>' => $compare > 0,
            '<=' => $compare <= 0,
            '>=' => $compare >= 0,
            '-eq' => (int) $test === (int) $operand,
            '-ne' => (int) $test !== (int) $operand,
            '-lt' => (int) $test < (int) $operand,
            '-le' => (int) $test <= (int) $operand,
            '-gt' => (int) $test > (int) $operand,
            '-ge' => (int) $test >= (int) $operand,
            '-ipmatch' => IpRange::parse($operand)?->contains($test) ?? false,
            '-strmatch' => fnmatch($operand, $test),
            default => false,
        };
        return $result !== $c->negate;
    }

    /**
     * `$N`, `%N`, `%{VAR}`; `\$` and `\%` stay literal.
     *
     * @param array<int|string, string> $groups
     * @param array<int|string, string> $condGroups
     */
    private function expand(string $text, Variables $vars, array $groups, array $condGroups, bool $escape): string
    {
        if (!str_contains($text, '$') && !str_contains($text, '%')) {
            return $text;
        }
        $last = \strlen($text) - 1;
        if ($last > 2 && $text[0] === '%' && $text[1] === '{' && strpos($text, '}') === $last
            && strpos($text, '%', 1) === false && !str_contains($text, '$') && !str_contains($text, '\\')) {
            return $vars->get(substr($text, 2, -1)); // One `%{VAR}`, the usual test string: no regex, no closure.
        }
        return (string) preg_replace_callback('/\\\\([$%])|\$(\d)|%(\d)|%\{([^}]+)\}/', static function (array $m) use ($vars, $groups, $condGroups, $escape): string {
            if ($m[1] !== '') {
                return $m[1];
            }
            if (($m[2] ?? '') !== '') {
                $value = $groups[(int) $m[2]] ?? '';
                return $escape ? rawurlencode($value) : $value;
            }
            if (($m[3] ?? '') !== '') {
                return $condGroups[(int) $m[3]] ?? '';
            }
            return $vars->get($m[4] ?? '');
        }, $text);
    }

    private function prefix(RewriteSet $set, string $path): string
    {
        if ($path !== '' && $path[0] === '/') {
            return $path;
        }
        $base = $set->base ?? $set->directory;
        return rtrim($base, '/') . '/' . $path;
    }

    private function location(string $path, string $query, Variables $vars, bool $noEscape): string
    {
        $escape = static fn(string $p): string => $noEscape ? $p
            : (string) preg_replace_callback('/[^A-Za-z0-9\-._~!$&\'()*+,;=:@\/]/', static fn(array $m): string => rawurlencode($m[0]), $p);
        if (preg_match('~^([a-z][a-z0-9+.\-]*://[^/?#]*)(.*)$~i', $path, $m) === 1) {
            $url = $m[1] . $escape($m[2]);
        } else {
            $url = $vars->get('REQUEST_SCHEME') . '://' . ($vars->get('HTTP_HOST') ?: $vars->get('SERVER_NAME')) . $escape($path);
        }
        return $query === '' ? $url : "$url?$query";
    }
}

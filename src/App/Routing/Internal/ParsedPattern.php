<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

/**
 * A route pattern split into levels: $parts[0] is required, $parts[1] is optional, $parts[2] is optional
 * inside $parts[1], and so on (optional parts only ever nest at the end). Literal text is kept in its
 * wire form (percent-encoded).
 *
 * @internal
 */
final readonly class ParsedPattern
{
    /** @var list<string> every parameter name, in pattern order (= capture group order) */
    public array $paramNames;

    /** The path when the pattern is plain literal text (no parameter, no optional part). */
    public ?string $staticPath;

    /**
     * @param non-empty-list<list<string|Param>> $parts
     * @param string $prefix the literal leading whole segments every match starts with ('/api/v1' for
     *                       `/api/v1/users/{id}`; '' when the first segment already varies)
     */
    public function __construct(
        public array $parts,
        public string $prefix,
    ) {
        $names = [];
        foreach ($parts as $part) {
            foreach ($part as $piece) {
                if ($piece instanceof Param) {
                    $names[] = $piece->name;
                }
            }
        }
        $this->paramNames = $names;
        $only = $parts[0][0] ?? null;
        $this->staticPath = count($parts) === 1 && count($parts[0]) === 1 && is_string($only) ? $only : null;
    }
}

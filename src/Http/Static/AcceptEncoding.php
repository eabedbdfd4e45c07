<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * Accept-Encoding (RFC 9110 §12.5.3), sans-I/O: which content codings a client takes, and how much.
 *
 * - No header: identity only. The RFC allows any coding then, but clients that omit the header are
 *   often tools that would not decode it, so no server compresses for them.
 * - An empty header: identity only.
 * - `q=0` refuses a coding; `*` stands for every coding not named; `x-gzip` is `gzip`; a member
 *   with a malformed weight is dropped.
 * - identity is acceptable unless refused (`identity;q=0`, or `*;q=0` without an identity member);
 *   `*` gives it its weight; when only implied, it ranks below every coding the client named.
 */
final class AcceptEncoding
{
    private const IMPLIED_IDENTITY = 0.0001;

    /** @param array<string, float> $weights coding => q, as named by the client */
    private function __construct(
        private readonly array $weights,
        private readonly ?float $any,
    ) {}

    /** @param list<string> $values the field's lines; [] when the header is absent */
    public static function parse(array $values): self
    {
        $weights = [];
        $any = null;
        foreach ($values as $value) {
            foreach (explode(',', $value) as $member) {
                $params = explode(';', $member);
                $coding = strtolower(trim($params[0], " \t"));
                if ($coding === '') {
                    continue;
                }
                $q = 1.0;
                foreach (\array_slice($params, 1) as $param) {
                    $param = trim($param, " \t");
                    if (preg_match('/^q\s*=/i', $param) !== 1) {
                        continue; // another parameter: no meaning for us
                    }
                    if (preg_match('/^q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/Di', $param, $m) !== 1) {
                        continue 2; // malformed weight: the member is dropped
                    }
                    $q = (float) $m[1];
                }
                $coding = $coding === 'x-gzip' ? 'gzip' : $coding;
                if ($coding === '*') {
                    $any = max($any ?? 0.0, $q);
                } else {
                    $weights[$coding] = max($weights[$coding] ?? 0.0, $q);
                }
            }
        }
        return new self($weights, $any);
    }

    /** How much the client wants $coding: 0 for refused, up to 1. */
    public function quality(string $coding): float
    {
        $coding = strtolower($coding);
        if (isset($this->weights[$coding])) {
            return $this->weights[$coding];
        }
        if ($coding === 'identity') {
            return $this->any ?? self::IMPLIED_IDENTITY;
        }
        return $this->any ?? 0.0;
    }

    public function accepts(string $coding): bool
    {
        return $this->quality($coding) > 0.0;
    }

    /**
     * The most wanted of $available (the server's preference order breaks ties), or null when the
     * client refuses them all.
     *
     * @param list<string> $available
     */
    public function choose(array $available): ?string
    {
        $best = null;
        $bestQ = 0.0;
        foreach ($available as $coding) {
            $q = $this->quality($coding);
            if ($q > $bestQ) {
                $best = $coding;
                $bestQ = $q;
            }
        }
        return $best;
    }
}

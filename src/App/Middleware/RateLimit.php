<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Store\NodeState;
use Kiln\Store\SharedState;

/**
 * A token bucket per client, shared by every worker of the node: `$rate` requests per `$per` seconds,
 * refilled continuously, with room for `$burst` at once (default: `$rate`). Each request takes a token;
 * without one it gets 429 with Retry-After (seconds until a token is back, rounded up, at least 1).
 * Allowed responses carry RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (IETF
 * draft-ietf-httpapi-ratelimit-headers, -07 field names) unless an inner limiter already set them.
 *
 * The key is the client address (Request::clientIp(): the client trusted proxies named, else the
 * peer), or what `$key` returns for the request (null: this request is not limited). Keys are hashed,
 * so any length is fine. Limiters with the same rate, period and burst share buckets unless given
 * different `$scope`s. A failing store throws (a 500): the limiter does not silently let traffic through.
 */
final class RateLimit implements Middleware
{
    private readonly int $capacity;

    private readonly float $refill;

    private readonly string $scope;

    private readonly \Closure $clock;

    /**
     * @param ?\Closure(Request): ?string $key
     * @param ?\Closure(): float $clock seconds, for tests; default microtime(true)
     */
    public function __construct(
        private readonly int $rate = 100,
        private readonly float $per = 60.0,
        ?int $burst = null,
        private readonly ?\Closure $key = null,
        private ?SharedState $state = null,
        ?string $scope = null,
        ?\Closure $clock = null,
    ) {
        if ($rate < 1 || !($per > 0.0) || !is_finite($per) || ($burst !== null && $burst < 1)) {
            throw new \ValueError('RateLimit needs rate ≥ 1, a finite period > 0 seconds and burst ≥ 1 (or null)');
        }
        $this->capacity = $burst ?? $rate;
        $this->refill = $rate / $per;
        $this->scope = $scope ?? "$rate/$per/{$this->capacity}";
        $this->clock = $clock ?? static fn(): float => microtime(true);
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $client = $this->key === null ? self::clientAddress($request) : ($this->key)($request);
        if ($client === null) {
            return $next->handle($request);
        }
        [$allowed, $tokens] = $this->take($client);
        if (!$allowed) {
            throw HttpErrorException::tooManyRequests((int) ceil((1.0 - $tokens) / $this->refill));
        }
        $response = $next->handle($request);
        if ($response->header('RateLimit-Limit') === null) {
            $response->setHeader('RateLimit-Limit', (string) $this->capacity);
            $response->setHeader('RateLimit-Remaining', (string) (int) floor($tokens));
            $response->setHeader('RateLimit-Reset', (string) (int) ceil(($this->capacity - $tokens) / $this->refill));
        }
        return $response;
    }

    /** @return array{bool, float} whether a token was taken, and the tokens left */
    private function take(string $client): array
    {
        $allowed = false;
        $tokens = 0.0;
        $now = ($this->clock)();
        $capacity = $this->capacity;
        $refill = $this->refill;
        // After this long untouched a bucket is full again: expiring it then loses nothing.
        $ttl = (int) ceil($capacity / $refill) + 1;
        $this->state ??= NodeState::get();
        $this->state->update(
            'ratelimit:' . hash('xxh128', $this->scope . "\0" . $client),
            static function (?array $bucket) use ($now, $capacity, $refill, &$allowed, &$tokens): array {
                $left = $bucket['tokens'] ?? null;
                $at = $bucket['at'] ?? null;
                $fresh = !\is_float($left) || !\is_float($at);
                $tokens = $fresh ? (float) $capacity : min((float) $capacity, $left + max(0.0, $now - $at) * $refill);
                $allowed = $tokens >= 1.0;
                if ($allowed) {
                    $tokens -= 1.0;
                }
                // Workers read their clocks before taking the lock: never move the bucket's time back.
                return ['tokens' => $tokens, 'at' => $fresh ? $now : max($now, $at)];
            },
            $ttl,
        );
        return [$allowed, $tokens];
    }

    private static function clientAddress(Request $request): string
    {
        return $request->clientIp();
    }
}

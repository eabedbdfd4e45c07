<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\RateLimit;
use Kiln\Http\ForwardedClient;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Store\MemoryTable;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RateLimitTest extends TestCase
{
    private string $path;

    private MemoryTable $state;

    private float $now = 1_000_000.0;

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-ratelimit-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        $this->state = MemoryTable::file($this->path, buckets: 64, slots: 4);
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    /** @param array<string, mixed> $options */
    private function limit(array $options = []): RateLimit
    {
        return new RateLimit(...['state' => $this->state, 'clock' => fn(): float => $this->now, ...$options]);
    }

    /** @return int|HttpErrorException the status, or the error thrown */
    private function send(RateLimit $limit, string $ip = '192.0.2.1', ?Response &$response = null): int|HttpErrorException
    {
        try {
            $response = $limit->process(Requests::make(remoteAddress: $ip), Requests::next());
            return $response->status();
        } catch (HttpErrorException $e) {
            return $e;
        }
    }

    public function testTheBurstIsServedThenA429SaysWhenToComeBack(): void
    {
        $limit = $this->limit(['rate' => 10, 'per' => 60.0]);
        for ($i = 0; $i < 10; $i++) {
            self::assertSame(200, $this->send($limit), "request $i");
        }
        $error = $this->send($limit);
        self::assertInstanceOf(HttpErrorException::class, $error);
        self::assertSame(429, $error->status);
        self::assertSame('6', $error->headers['Retry-After'], 'one token takes 60 / 10 = 6 s');
    }

    public function testTokensRefillContinuouslyAndRetryAfterIsRoundedUp(): void
    {
        $limit = $this->limit(['rate' => 2, 'per' => 1.0, 'burst' => 1]);
        self::assertSame(200, $this->send($limit));
        $this->now += 0.2;
        $error = $this->send($limit);
        self::assertInstanceOf(HttpErrorException::class, $error);
        self::assertSame('1', $error->headers['Retry-After'], '0.3 s left rounds up to 1');
        $this->now += 0.3;
        self::assertSame(200, $this->send($limit), 'half a second refills one token at 2/s');
        $this->now += 100.0;
        self::assertSame(200, $this->send($limit));
        self::assertInstanceOf(HttpErrorException::class, $this->send($limit), 'the bucket never holds more than the burst');
    }

    public function testEachClientHasItsOwnBucketAndClientIpWins(): void
    {
        $limit = $this->limit(['rate' => 1, 'per' => 60.0]);
        self::assertSame(200, $this->send($limit, '192.0.2.1'));
        self::assertInstanceOf(HttpErrorException::class, $this->send($limit, '192.0.2.1'));
        self::assertSame(200, $this->send($limit, '192.0.2.2'));
        $behindProxy = Requests::make(remoteAddress: '192.0.2.1');
        $behindProxy->setForwardedClient(new ForwardedClient('198.51.100.7'));
        self::assertSame(200, $limit->process($behindProxy, Requests::next())->status());
    }

    public function testACustomKeyLimitsByItAndNullExemptsTheRequest(): void
    {
        $limit = $this->limit(['rate' => 1, 'key' => static fn(Request $r): ?string => $r->header('x-api-key')]);
        $send = function (?string $key) use ($limit): int {
            try {
                return $limit->process(Requests::make(headers: $key === null ? [] : ['X-Api-Key' => $key]), Requests::next())->status();
            } catch (HttpErrorException $e) {
                return $e->status;
            }
        };
        $long = str_repeat('k', 5000);
        self::assertSame([200, 429, 200], [$send($long), $send($long), $send(substr($long, 1))]);
        self::assertSame([200, 200, 200], [$send(null), $send(null), $send(null)], 'no key: not limited');
    }

    public function testAllowedResponsesCarryRateLimitHeaders(): void
    {
        $limit = $this->limit(['rate' => 5, 'per' => 10.0]);
        $this->send($limit, response: $response);
        $this->send($limit, response: $response);
        self::assertNotNull($response);
        self::assertSame('5', $response->header('RateLimit-Limit'));
        self::assertSame('3', $response->header('RateLimit-Remaining'));
        self::assertSame('4', $response->header('RateLimit-Reset'), 'two tokens at 0.5/s');
    }

    public function testLimitersWithOtherSettingsOrScopesDoNotShareBuckets(): void
    {
        $one = $this->limit(['rate' => 1]);
        $two = $this->limit(['rate' => 2]);
        $scoped = $this->limit(['rate' => 1, 'scope' => 'login']);
        self::assertSame(200, $this->send($one));
        self::assertSame(200, $this->send($two));
        self::assertSame(200, $this->send($scoped));
        self::assertInstanceOf(HttpErrorException::class, $this->send($this->limit(['rate' => 1])), 'same settings: same bucket');
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function badSettings(): iterable
    {
        yield 'zero rate' => [['rate' => 0]];
        yield 'zero period' => [['per' => 0.0]];
        yield 'infinite period' => [['per' => INF]];
        yield 'zero burst' => [['burst' => 0]];
    }

    /** @param array<string, mixed> $settings */
    #[DataProvider('badSettings')]
    public function testNonsenseSettingsAreRefusedAtOnce(array $settings): void
    {
        $this->expectException(\ValueError::class);
        new RateLimit(...$settings);
    }
}

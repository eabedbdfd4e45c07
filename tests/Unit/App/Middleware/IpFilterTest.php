<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\IpFilter;
use Kiln\Http\ForwardedClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class IpFilterTest extends TestCase
{
    /** @return iterable<string, array{list<string>, string, bool}> */
    public static function allowLists(): iterable
    {
        yield 'v4 /24 first' => [['192.168.1.0/24'], '192.168.1.0', true];
        yield 'v4 /24 last' => [['192.168.1.0/24'], '192.168.1.255', true];
        yield 'v4 /24 just below' => [['192.168.1.0/24'], '192.168.0.255', false];
        yield 'v4 /24 just above' => [['192.168.1.0/24'], '192.168.2.0', false];
        yield 'v4 /23 odd boundary' => [['10.0.2.0/23'], '10.0.3.255', true];
        yield 'v4 /23 outside' => [['10.0.2.0/23'], '10.0.4.0', false];
        yield 'v4 /0 allows every v4' => [['0.0.0.0/0'], '203.0.113.9', true];
        yield 'v4 /32' => [['10.0.0.1/32'], '10.0.0.1', true];
        yield 'single v4' => [['10.0.0.1'], '10.0.0.2', false];
        yield 'host bits ignored' => [['10.1.2.3/8'], '10.200.0.1', true];
        yield 'v6 /32' => [['2001:db8::/32'], '2001:db8:ffff::1', true];
        yield 'v6 /32 outside' => [['2001:db8::/32'], '2001:db9::1', false];
        yield 'v6 /127 boundary' => [['2001:db8::/127'], '2001:db8::1', true];
        yield 'v6 /127 outside' => [['2001:db8::/127'], '2001:db8::2', false];
        yield 'single v6 in other notation' => [['2001:0db8:0000::0001'], '2001:db8::1', true];
        yield 'v6 list does not match v4' => [['::/0'], '10.0.0.1', false];
        yield 'v4 list does not match v6' => [['0.0.0.0/0'], '2001:db8::1', false];
        yield 'mapped client matches v4 entry' => [['192.0.2.0/24'], '::ffff:192.0.2.7', true];
        yield 'mapped entry matches v4 client' => [['::ffff:192.0.2.0/120'], '192.0.2.7', true];
        yield 'mapped entry edge' => [['::ffff:192.0.2.0/120'], '192.0.3.0', false];
        yield 'bracketed client' => [['::1'], '[::1]', true];
        yield 'zoned client' => [['fe80::/10'], 'fe80::1%eth0', true];
        yield 'unparseable client' => [['10.0.0.0/8'], 'unix', false];
    }

    /** @param list<string> $allow */
    #[DataProvider('allowLists')]
    public function testAllowListMatching(array $allow, string $client, bool $allowed): void
    {
        self::assertSame($allowed, (new IpFilter(allow: $allow))->allows($client));
    }

    public function testDenyWinsOverAllow(): void
    {
        $filter = new IpFilter(allow: ['10.0.0.0/8'], deny: ['10.0.0.66']);
        self::assertTrue($filter->allows('10.0.0.65'));
        self::assertFalse($filter->allows('10.0.0.66'));
        self::assertFalse($filter->allows('::ffff:10.0.0.66'));
    }

    public function testTheDefaultPolicyFollowsTheAllowListUnlessGiven(): void
    {
        self::assertTrue((new IpFilter(deny: ['10.0.0.0/8']))->allows('192.0.2.1'));
        self::assertFalse((new IpFilter(deny: ['10.0.0.0/8']))->allows('10.1.1.1'));
        self::assertFalse((new IpFilter(allow: ['10.0.0.0/8']))->allows('192.0.2.1'));
        self::assertFalse((new IpFilter(allowByDefault: false))->allows('192.0.2.1'));
        self::assertTrue((new IpFilter(allow: ['10.0.0.0/8'], allowByDefault: true))->allows('192.0.2.1'));
    }

    public function testARefusedClientGets403AndTheHandlerDoesNotRun(): void
    {
        $next = Requests::next();
        try {
            (new IpFilter(deny: ['127.0.0.0/8']))->process(Requests::make(), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(403, $e->status);
        }
        self::assertSame(0, $next->calls);
    }

    public function testTheClientIpAttributeIsPreferredOverThePeerAddress(): void
    {
        $filter = new IpFilter(allow: ['203.0.113.0/24']);
        $request = Requests::make(remoteAddress: '10.0.0.1');
        $request->setForwardedClient(new ForwardedClient('203.0.113.5'));
        $next = Requests::next();
        $filter->process($request, $next);
        self::assertSame(1, $next->calls);
    }

    /** @return iterable<string, array{string}> */
    public static function badEntries(): iterable
    {
        yield 'v4 prefix too long' => ['10.0.0.0/33'];
        yield 'v6 prefix too long' => ['::/129'];
        yield 'mapped prefix below 96' => ['::ffff:0.0.0.0/95'];
        yield 'empty prefix' => ['10.0.0.0/'];
        yield 'negative prefix' => ['10.0.0.0/-1'];
        yield 'hostname' => ['localhost'];
        yield 'garbage' => ['10.0.0'];
    }

    #[DataProvider('badEntries')]
    public function testABadEntryIsRefusedAtConstruction(string $entry): void
    {
        $this->expectException(\ValueError::class);
        new IpFilter(allow: [$entry]);
    }
}

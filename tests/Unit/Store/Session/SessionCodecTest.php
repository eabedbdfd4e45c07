<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Session;

use Kiln\Store\Session\SessionCodec;
use Kiln\Store\StoreException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The `php` session format against PHP's own encoder (session_encode()). Session data is always read whole
 * from a store, so the codec is not resumable: the byte-by-byte half of the parser rule does not apply; the
 * truncation cases below stand for it (every cut of a valid string is refused, never misread).
 */
final class SessionCodecTest extends TestCase
{
    /** @return iterable<string, array{array<string, mixed>}> */
    public static function sessions(): iterable
    {
        yield 'empty' => [[]];
        yield 'scalars' => [['int' => -5, 'float' => 1.5, 'big' => -1.0E+25, 'true' => true, 'false' => false, 'null' => null, 'zero' => 0]];
        yield 'strings with the separators inside' => [['s' => 'a|b;c"d}', 'empty' => '', 'utf8' => 'é🔑']];
        yield 'nested arrays' => [['a' => ['x' => [1.5, null, true, 'q"|;'], 7 => []], 'b' => [[[[1]]]]]];
        yield 'objects of any class' => [['o' => new \ArrayObject([1, 2]), 's' => (object) ['a' => 1]]];
    }

    /** @param array<string, mixed> $values */
    #[DataProvider('sessions')]
    public function testItEncodesAsPhpDoesAndSplitsAndJoinsByteForByte(array $values): void
    {
        $expected = self::phpEncode($values);
        self::assertSame($expected, SessionCodec::encode($values));
        self::assertEquals($values, SessionCodec::decode($expected));
        self::assertSame($expected, SessionCodec::join(SessionCodec::split($expected)));
        self::assertSame(array_keys($values), array_keys(SessionCodec::split($expected)));
    }

    public function testEveryCutOfAValidSessionIsRefused(): void
    {
        $data = self::phpEncode(['a' => ['x' => 's|;"', 'o' => new \ArrayObject([1])], 'b' => 2.5]);
        $parts = SessionCodec::split($data);
        $ends = [];
        $at = 0;
        foreach ($parts as $name => $value) {
            $ends[] = $at += \strlen($name) + 1 + \strlen($value);
        }
        for ($length = 1; $length < \strlen($data); $length++) {
            if (\in_array($length, $ends, true)) {
                continue; // a cut between two keys is a shorter valid session
            }
            try {
                SessionCodec::split(substr($data, 0, $length));
                self::fail("a cut at byte $length was accepted");
            } catch (StoreException $e) {
                self::assertMatchesRegularExpression('~^(Session data |A session value )~', $e->getMessage(), "a cut at byte $length");
            }
        }
    }

    /** @return iterable<string, array{string}> */
    public static function rejected(): iterable
    {
        yield 'no bar' => ['name'];
        yield 'unknown type' => ['a|x:1;'];
        yield 'string longer than its data' => ['a|s:10:"short";'];
        yield 'string without its closing quote' => ['a|s:2:"abc";'];
        yield 'array without a brace' => ['a|a:1:i:0;i:1;}'];
        yield 'array with too few elements' => ['a|a:2:{i:0;i:1;}'];
        yield 'a huge length' => ['a|s:99999999999:"x";'];
        yield 'null without a semicolon' => ['a|N'];
    }

    #[DataProvider('rejected')]
    public function testMalformedDataIsRefused(string $data): void
    {
        $this->expectException(StoreException::class);
        SessionCodec::split($data);
    }

    public function testAKeyThePhpFormatCannotHoldIsAValueError(): void
    {
        foreach (['with|bar', '', '12'] as $key) {
            try {
                SessionCodec::encode([$key => 1]);
                self::fail("'$key' was accepted");
            } catch (\ValueError $e) {
                self::assertStringContainsString('session key', $e->getMessage());
            }
        }
    }

    /** @param array<string, mixed> $values */
    private static function phpEncode(array $values): string
    {
        // session_encode() needs an active session: one in memory, without cookies or files.
        session_id('codectest' . bin2hex(random_bytes(8)));
        session_set_save_handler(new InMemoryHandler(), false);
        session_start(['use_cookies' => 0, 'use_strict_mode' => 0, 'cache_limiter' => '']);
        $_SESSION = $values;
        $encoded = session_encode();
        session_abort();
        if ($values === []) {
            self::assertFalse($encoded, 'PHP encodes an empty session as false');
            return '';
        }
        self::assertIsString($encoded);
        return $encoded;
    }
}

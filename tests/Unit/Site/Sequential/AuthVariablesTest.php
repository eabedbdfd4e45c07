<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\AuthVariables;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Each case as PHP 8.2's php-cgi and mod_php fill $_SERVER for the same Authorization header. */
final class AuthVariablesTest extends TestCase
{
    /** @return array<string, array{string|null, array<string, string>}> */
    public static function headers(): array
    {
        return [
            'none' => [null, []],
            'Basic' => ['Basic ' . base64_encode('user:pass'), ['PHP_AUTH_USER' => 'user', 'PHP_AUTH_PW' => 'pass']],
            'scheme in lower case' => ['basic ' . base64_encode('u:p'), ['PHP_AUTH_USER' => 'u', 'PHP_AUTH_PW' => 'p']],
            'the password keeps later colons' => ['Basic ' . base64_encode('a:b:c'), ['PHP_AUTH_USER' => 'a', 'PHP_AUTH_PW' => 'b:c']],
            'an empty password sets none' => ['Basic ' . base64_encode('user:'), ['PHP_AUTH_USER' => 'user']],
            'an empty user' => ['Basic ' . base64_encode(':pass'), ['PHP_AUTH_USER' => '', 'PHP_AUTH_PW' => 'pass']],
            'bytes outside base64 are skipped' => ['Basic !!!dXNlcjpw!YXNz', ['PHP_AUTH_USER' => 'user', 'PHP_AUTH_PW' => 'pass']],
            'a second space is skipped too' => ['Basic  ' . base64_encode('user:pass'), ['PHP_AUTH_USER' => 'user', 'PHP_AUTH_PW' => 'pass']],
            'no colon' => ['Basic ' . base64_encode('userpass'), []],
            'a NUL before the colon' => ['Basic ' . base64_encode("u\0x:p"), []],
            'a NUL in the password ends it' => ['Basic ' . base64_encode("u:p\0q"), ['PHP_AUTH_USER' => 'u', 'PHP_AUTH_PW' => 'p']],
            'Basic without credentials' => ['Basic ', []],
            'a leading space' => [' Basic ' . base64_encode('user:pass'), []],
            'Digest' => ['Digest username="a", realm="b"', ['PHP_AUTH_DIGEST' => 'username="a", realm="b"']],
            'Digest in lower case, empty' => ['digest ', ['PHP_AUTH_DIGEST' => '']],
            'Bearer' => ['Bearer abc', []],
        ];
    }

    /** @param array<string, string> $expected */
    #[DataProvider('headers')]
    public function testTheVariablesPhpDerivesFromTheHeader(?string $authorization, array $expected): void
    {
        self::assertSame($expected, AuthVariables::of($authorization));
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

/**
 * The password proofs of the two usual authentication plugins. Neither sends the password itself.
 *
 * @internal
 */
final class Scramble
{
    private function __construct() {}

    /** mysql_native_password: SHA1(password) XOR SHA1(nonce . SHA1(SHA1(password))). */
    public static function native(#[\SensitiveParameter] string $password, string $nonce): string
    {
        if ($password === '') {
            return '';
        }
        $hash = sha1($password, true);

        return $hash ^ sha1(substr($nonce, 0, 20) . sha1($hash, true), true);
    }

    /** caching_sha2_password's fast path: SHA256(password) XOR SHA256(SHA256(SHA256(password)) . nonce). */
    public static function sha256(#[\SensitiveParameter] string $password, string $nonce): string
    {
        if ($password === '') {
            return '';
        }
        $hash = hash('sha256', $password, true);

        return $hash ^ hash('sha256', hash('sha256', $hash, true) . substr($nonce, 0, 20), true);
    }
}

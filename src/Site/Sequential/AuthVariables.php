<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * The `$_SERVER` entries PHP's web SAPIs (mod_php, php-fpm, php-cgi) derive from the Authorization header, for
 * the tiers that build `$_SERVER` themselves. The rules are PHP 8.2's (php_handle_auth_data(), checked against
 * mod_php and php-cgi):
 *
 * - `Basic ` (any case) + base64 of `user:password`: PHP_AUTH_USER and PHP_AUTH_PW. The base64 is read leniently
 *   (bytes outside its alphabet are skipped), the decoded text ends at a NUL byte and the user at its first colon;
 *   without a colon neither is set. An empty password sets no PHP_AUTH_PW, as PHP registers none.
 * - `Digest ` (any case): PHP_AUTH_DIGEST, the rest of the header as sent.
 *
 * No AUTH_TYPE: PHP sets none; a web server sets it for authentication it did itself, and Kiln does none.
 *
 * @api reused by the fork tier
 */
final class AuthVariables
{
    /** @return array<string, string> none for a missing, malformed or other (Bearer …) Authorization */
    public static function of(?string $authorization): array
    {
        if ($authorization === null || \strlen($authorization) < 6) {
            return [];
        }
        if (strncasecmp($authorization, 'Basic ', 6) === 0) {
            $decoded = (string) base64_decode(substr($authorization, 6));
            $nul = strpos($decoded, "\0");
            $text = $nul === false ? $decoded : substr($decoded, 0, $nul);
            $colon = strpos($text, ':');
            if ($colon !== false) {
                $password = substr($text, $colon + 1);
                return $password === ''
                    ? ['PHP_AUTH_USER' => substr($text, 0, $colon)]
                    : ['PHP_AUTH_USER' => substr($text, 0, $colon), 'PHP_AUTH_PW' => $password];
            }
        }
        if (strncasecmp($authorization, 'Digest ', 7) === 0) {
            return ['PHP_AUTH_DIGEST' => substr($authorization, 7)];
        }
        return [];
    }
}

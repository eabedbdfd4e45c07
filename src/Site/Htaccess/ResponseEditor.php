<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

use Kiln\Http\Response;
use Kiln\Http\Static\HttpDate;

/**
 * Applies the response side of .htaccess Settings to a Kiln Response, in Apache's order: the type
 * (`AddType`, a rule's `[T=]`) and charset (`AddDefaultCharset`, which on a static file replaces the `utf-8`
 * Kiln gives text types), then expiry (mod_expires), then the `Header` actions last, so they can override both.
 */
final class ResponseEditor
{
    /**
     * @param bool $kilnError the response is an error page Kiln made itself (403, 404 …): only `Header always` applies, no expiry
     * @param array<string, string> $env variables of the outcome, for `env=` conditions and `%{VAR}e`
     * @param ?string $fileName the static file served (its extension picks an `AddType`); null for a script's response
     * @param ?string $type a RewriteRule's `[T=]` (Outcome::$type), applied to static files
     * @param ?int $modified the file's modification time, for `modification plus …` expiry
     */
    public static function apply(
        Settings $settings,
        Response $response,
        bool $kilnError = false,
        array $env = [],
        ?string $fileName = null,
        ?string $type = null,
        ?int $modified = null,
        ?int $now = null,
    ): void {
        if ($fileName === null && $settings->headers === [] && ($settings->defaultCharset ?? '') === '' && $settings->expiresActive !== true) {
            return; // Nothing to do for a script's response (most requests of an .htaccess site).
        }
        if ($fileName !== null) {
            $forced = $type ?? $settings->contentTypeFor(basename($fileName));
            if ($forced !== null) {
                $response->setHeader('Content-Type', $forced);
            } elseif (!$kilnError && ($bare = $settings->staticTypeFor($response->header('Content-Type') ?? '')) !== null) {
                $response->setHeader('Content-Type', $bare);
            }
        }
        $contentType = $response->header('Content-Type') ?? '';
        $charset = $settings->charsetFor($contentType);
        if ($charset !== null && !$kilnError) {
            $response->setHeader('Content-Type', "$contentType; charset=$charset");
        }
        if (!$kilnError && $response->status() < 400 && !$response->hasHeader('Expires')) {
            self::expire($settings, $response, $contentType, $now ?? time(), $modified);
        }
        foreach ($settings->headerActions($kilnError, $env) as $action) {
            $values = $action->apply(self::values($response, $action->name), $env);
            try {
                $values === [] ? $response->removeHeader($action->name) : $response->setHeader($action->name, $values);
            } catch (\ValueError) {
                continue; // A value with CR/LF (from %{VAR}e) is not sent, as Apache drops it.
            }
        }
    }

    private static function expire(Settings $settings, Response $response, string $contentType, int $now, ?int $modified): void
    {
        $at = $settings->expiresAt($contentType, $now, $modified);
        if ($at === null) {
            return;
        }
        $response->setHeader('Expires', HttpDate::format($at));
        $maxAge = 'max-age=' . max(0, $at - $now);
        $cacheControl = self::values($response, 'Cache-Control');
        if ($cacheControl === []) {
            $response->setHeader('Cache-Control', $maxAge);
        } elseif (!str_contains(implode(',', $cacheControl), 'max-age')) {
            $response->setHeader('Cache-Control', implode(', ', $cacheControl) . ", $maxAge");
        }
    }

    /** @return list<string> */
    private static function values(Response $response, string $name): array
    {
        foreach ($response->headers() as $written => $values) {
            if (strcasecmp($written, $name) === 0) {
                return $values;
            }
        }
        return [];
    }
}

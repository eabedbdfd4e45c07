<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\App\Middleware\Internal\ErrorHeaders;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * A preset of response security headers, each added only when the app did not set that header itself
 * (also to an HttpErrorException thrown further down, so error pages carry them).
 * Pass null to leave one out. Strict-Transport-Security is sent only when $hstsMaxAge is given: browsers
 * remember it for that long, so turning it on is a decision, not a default. Content-Security-Policy is
 * likewise opt-in (a policy is specific to the site); a CSP with frame-ancestors supersedes
 * X-Frame-Options in current browsers, which is kept for older ones unless you pass null.
 */
final class SecurityHeaders implements Middleware
{
    private const FRAME_OPTIONS = ['DENY', 'SAMEORIGIN'];

    private const REFERRER_POLICIES = [
        'no-referrer', 'no-referrer-when-downgrade', 'origin', 'origin-when-cross-origin', 'same-origin',
        'strict-origin', 'strict-origin-when-cross-origin', 'unsafe-url',
    ];

    private const OPENER_POLICIES = ['unsafe-none', 'same-origin-allow-popups', 'same-origin', 'noopener-allow-popups'];

    /** @var array<string, string> */
    private readonly array $headers;

    public function __construct(
        ?string $contentTypeOptions = 'nosniff',
        ?string $frameOptions = 'SAMEORIGIN',
        ?string $referrerPolicy = 'strict-origin-when-cross-origin',
        ?string $crossOriginOpenerPolicy = 'same-origin',
        ?int $hstsMaxAge = null,
        bool $hstsIncludeSubDomains = false,
        bool $hstsPreload = false,
        ?string $contentSecurityPolicy = null,
    ) {
        if ($contentTypeOptions !== null && $contentTypeOptions !== 'nosniff') {
            throw new \ValueError("SecurityHeaders contentTypeOptions is 'nosniff' or null, got '$contentTypeOptions'");
        }
        self::oneOf('frameOptions', $frameOptions, self::FRAME_OPTIONS);
        self::oneOf('referrerPolicy', $referrerPolicy, self::REFERRER_POLICIES);
        self::oneOf('crossOriginOpenerPolicy', $crossOriginOpenerPolicy, self::OPENER_POLICIES);
        if ($contentSecurityPolicy !== null && ($contentSecurityPolicy === '' || preg_match('/[\x00-\x1f\x7f]/', $contentSecurityPolicy) === 1)) {
            throw new \ValueError('SecurityHeaders contentSecurityPolicy must be a non-empty policy on one line, or null');
        }
        $this->headers = array_filter([
            'X-Content-Type-Options' => $contentTypeOptions,
            'X-Frame-Options' => $frameOptions,
            'Referrer-Policy' => $referrerPolicy,
            'Cross-Origin-Opener-Policy' => $crossOriginOpenerPolicy,
            'Strict-Transport-Security' => self::hsts($hstsMaxAge, $hstsIncludeSubDomains, $hstsPreload),
            'Content-Security-Policy' => $contentSecurityPolicy,
        ], static fn(?string $value): bool => $value !== null);
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        try {
            $response = $next->handle($request);
        } catch (HttpErrorException $e) {
            throw ErrorHeaders::with($e, $this->headers);
        }
        foreach ($this->headers as $name => $value) {
            if (!$response->hasHeader($name)) {
                $response->setHeader($name, $value);
            }
        }
        return $response;
    }

    /** @param list<string> $allowed */
    private static function oneOf(string $option, ?string $value, array $allowed): void
    {
        if ($value !== null && !\in_array($value, $allowed, true)) {
            throw new \ValueError("SecurityHeaders $option must be one of '" . implode("', '", $allowed) . "' or null, got '$value'");
        }
    }

    private static function hsts(?int $maxAge, bool $includeSubDomains, bool $preload): ?string
    {
        if ($maxAge === null) {
            if ($includeSubDomains || $preload) {
                throw new \ValueError('SecurityHeaders hstsIncludeSubDomains and hstsPreload need hstsMaxAge (e.g. 31536000)');
            }
            return null;
        }
        if ($maxAge < 0) {
            throw new \ValueError("SecurityHeaders hstsMaxAge is seconds >= 0 (0 tells browsers to forget), got $maxAge");
        }
        if ($preload && (!$includeSubDomains || $maxAge < 31536000)) {
            throw new \ValueError('SecurityHeaders hstsPreload requires hstsIncludeSubDomains: true and hstsMaxAge >= 31536000 (the preload list rules)');
        }
        return 'max-age=' . $maxAge . ($includeSubDomains ? '; includeSubDomains' : '') . ($preload ? '; preload' : '');
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Tells PHP the request's method and protocol (SG(request_info).request_method and .proto_num, NULL and
 * 1000 under the CLI), which PHP itself reads in a few places, the visible one being header('Location: …'):
 * after an HTTP/1.1 POST (any method but GET and HEAD) it answers 303 See Other, not 302, as under php-fpm.
 *
 * The method strings live in persistent C memory, one per method seen, never freed (PHP never frees this
 * field either under the CLI). find() checks the effect itself: with "POST" set, a Location header makes 303.
 *
 * @internal
 */
final class RequestMethod
{
    /** Methods kept at most; an unusual one past this is not passed on (PHP then acts as for GET). */
    private const MAX = 32;

    /** @var array<string, array{\FFI\CData, int}> method => its C string and that string's address */
    private array $strings = [];

    /** What the last set() wrote (null after clear()). */
    private ?string $method = null;

    private ?string $version = null;

    private function __construct(
        private readonly Native $native,
        private \FFI\CData $slot,
        private \FFI\CData $protocol,
        private readonly int $cliProtocol,
    ) {}

    /** Needs the header hook installed (HeaderHook::install()), and no header set yet. */
    public static function find(?SapiGlobals $sapi): ?self
    {
        if ($sapi === null || headers_list() !== [] || headers_sent()) {
            return null;
        }
        $slot = $sapi->native->words($sapi->requestMethod());
        $protocol = $sapi->native->ffi->cast('int*', $sapi->protocolNumber());
        if (Native::int($slot[0]) !== 0 || !$protocol instanceof \FFI\CData) {
            return null; // not the CLI's NULL: someone else owns it
        }
        $method = new self($sapi->native, $slot, $protocol, Native::int($protocol[0]));
        $code = http_response_code();
        try {
            $method->set('POST', '1.1');
            header('Location: /kiln-probe');
            $seeOther = http_response_code() === 303;
            $method->clear();
            return $seeOther ? $method : null;
        } catch (\Throwable) {
            return null;
        } finally {
            header_remove('Location');
            $method->clear();
            http_response_code(\is_int($code) && $code > 0 ? $code : 200);
        }
    }

    /** @param string $version "1.0" or "1.1" */
    public function set(string $method, string $version): void
    {
        if ($method === $this->method && $version === $this->version) {
            return; // as the last request left them (nothing else writes them)
        }
        [$this->method, $this->version] = [$method, $version];
        $this->protocol[0] = $version === '1.0' ? 1000 : 1001;
        $string = $this->strings[$method] ?? null;
        if ($string === null) {
            if (\count($this->strings) >= self::MAX || str_contains($method, "\0")) {
                $this->clear();
                return;
            }
            $chars = $this->native->ffi->new('char[' . (\strlen($method) + 1) . ']', false, true);
            \assert($chars instanceof \FFI\CData);
            \FFI::memcpy($chars, $method . "\0", \strlen($method) + 1);
            $string = $this->strings[$method] = [$chars, $this->native->addressOf(\FFI::addr($chars))];
        }
        $this->slot[0] = $string[1];
    }

    public function clear(): void
    {
        [$this->method, $this->version] = [null, null];
        $this->slot[0] = 0;
        $this->protocol[0] = $this->cliProtocol;
    }
}

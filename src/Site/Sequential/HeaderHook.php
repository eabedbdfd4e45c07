<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * Makes header(), header_remove(), headers_list(), http_response_code(), setcookie(), setrawcookie() and
 * the session cookie work under the CLI, as under a web SAPI. The CLI SAPI installs a header handler that
 * accepts each header and throws it away; with that handler set to NULL (through FFI, in the process's
 * own `sapi_module`) PHP keeps every header in its list, where headers_list() and ResponseCapture find it.
 * Nothing is ever sent by PHP itself: the CLI's send_headers does nothing.
 *
 * Without FFI there is no way to keep headers, so the sequential tier refuses to start rather than drop
 * them silently.
 */
final class HeaderHook
{
    /** Index of header_handler among the function pointers of sapi_module_struct (after name, pretty_name). */
    private const HEADER_HANDLER = 11;

    private static bool $installed = false;

    /** Why the hook cannot be installed in this process, or null when it can. */
    public static function unsupportedReason(): ?string
    {
        if (\PHP_SAPI !== 'cli') {
            return null; // A web SAPI keeps headers itself.
        }
        if (!\extension_loaded('ffi')) {
            return 'the sequential tier needs the FFI extension to keep header() and setcookie() under the CLI: '
                . 'install php' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . '-ffi (or build PHP --with-ffi), '
                . 'or use --tier=isolated';
        }
        $enable = (string) ini_get('ffi.enable');
        if (!\in_array(strtolower($enable), ['1', 'on', 'true', 'yes', 'preload'], true)) {
            return "the sequential tier needs FFI, which is off (ffi.enable=$enable): set ffi.enable=preload "
                . '(the default) or on in php.ini, or use --tier=isolated';
        }
        return null;
    }

    /**
     * Installs the hook once per process; a no-op under a web SAPI.
     *
     * @throws \Error naming what is missing (the FFI extension, ffi.enable) when headers cannot be kept
     */
    public static function install(): void
    {
        if (self::$installed || \PHP_SAPI !== 'cli') {
            return;
        }
        $reason = self::unsupportedReason();
        if ($reason !== null) {
            throw new \Error($reason);
        }
        try {
            $ffi = \FFI::cdef('typedef struct { void *fn[24]; } sapi_module_struct; extern sapi_module_struct sapi_module;');
            $module = $ffi->sapi_module; // @phpstan-ignore property.notFound (FFI global)
            \assert($module instanceof \FFI\CData);
            $functions = $module->fn; // @phpstan-ignore property.notFound (FFI struct)
            \assert($functions instanceof \FFI\CData);
            $name = $functions[0];
            $chars = $name instanceof \FFI\CData ? $ffi->cast('char*', $name) : null;
            // The first field is the SAPI's name: checks that this really is the CLI's sapi_module_struct.
            if (!$chars instanceof \FFI\CData || \FFI::string($chars) !== 'cli') {
                throw new \Error('sapi_module does not have the expected layout');
            }
            $functions[self::HEADER_HANDLER] = null;
        } catch (\FFI\Exception $e) {
            throw new \Error('the sequential tier cannot install its header hook through FFI: ' . $e->getMessage()
                . '; use --tier=isolated', 0, $e);
        }
        self::$installed = true;
    }
}

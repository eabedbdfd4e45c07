<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\SiteConfig;
use Kiln\Site\Tier;

/**
 * The `--php-ini` settings the sequential tier cannot apply per request (PHP takes them only at start-up) but that
 * only shape how a script's request is read or compiled: `kiln serve` starts the workers' PHP with them on its
 * command line (JitLauncher), as the fork tier's fork server and php-cgi get every `--php-ini` setting. The other
 * start-up settings would change Kiln's own process too (`disable_functions`, `register_argc_argv`,
 * `auto_prepend_file`, `output_buffering`, `ffi.enable`…): those are still refused with a warning, which says to
 * start PHP with them.
 */
final class StartupIni
{
    /** Start-up settings a script's request is read or compiled by, and nothing of Kiln's own process. */
    public const NAMES = [
        'upload_max_filesize', 'post_max_size', 'max_file_uploads', 'max_input_vars', 'max_input_nesting_level',
        'max_multipart_body_parts', 'file_uploads', 'upload_tmp_dir', 'variables_order', 'request_order',
        'short_open_tag', 'realpath_cache_size', 'realpath_cache_ttl', 'opcache.memory_consumption',
        'opcache.interned_strings_buffer', 'opcache.max_accelerated_files', 'opcache.max_file_size',
    ];

    /**
     * The JIT mode of workers that run a site's scripts on the sequential tier: `function`, not `tracing`, unless
     * `--php-ini` names one (given at start-up too, since the mode is fixed there). A worker there is replaced after a script that calls exit() or declares what it cannot
     * declare twice, so different workers run the same scripts on different paths, and they share one JIT buffer.
     * With the tracing JIT, a trace compiled in one worker crashed others (SIGSEGV inside the compiled code) in 4 of
     * 12 starts of DAViCal's CalDAV flow, again on every worker that ran it until a restart; with the function JIT,
     * in none of 12; `hello.php` costs some 15-20 % more with it (docs/tiers.md).
     *
     * @param string $jit `--jit`: on, off, or opcache (no JIT buffer)
     * @return array<string, string>
     */
    public static function jit(SiteConfig $site, string $jit): array
    {
        if ($site->tier !== Tier::Sequential || $jit !== 'on') {
            return [];
        }
        return ['opcache.jit' => $site->phpIni['opcache.jit'] ?? 'function'];
    }

    /**
     * The settings of $site's `--php-ini` to start PHP with: none unless its scripts run on the sequential tier.
     *
     * @return array<string, string>
     */
    public static function of(SiteConfig $site): array
    {
        if ($site->tier !== Tier::Sequential) {
            return [];
        }
        return array_intersect_key($site->phpIni, array_flip(self::NAMES));
    }
}

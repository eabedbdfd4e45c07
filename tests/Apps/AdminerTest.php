<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Adminer;
use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Support\MariaDbServer;

final class AdminerTest extends AppTestCase
{
    protected static function app(): string
    {
        return 'Adminer';
    }

    protected static function isAppInstalled(): bool
    {
        return Adminer::isInstalled();
    }

    protected static function knownFailures(): array
    {
        return [];
    }

    /**
     * Adminer keeps its login throttle and key in get_temp_dir() (upload_tmp_dir, else sys_get_temp_dir()): one per
     * copy, not /tmp, so that runs never lock each other out. TMPDIR too, for the tiers that cannot set
     * upload_tmp_dir (the sequential tier runs in the worker; the fork tier ignores --php-ini).
     */
    protected function phpIni(SiteCopy $copy): array
    {
        return ['upload_tmp_dir' => $copy->dir . '/tmp'];
    }

    protected function environment(SiteCopy $copy): array
    {
        return ['TMPDIR' => $copy->dir . '/tmp'];
    }

    protected function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        return Adminer::prepare($db, $stack);
    }

    protected function walk(Run $run, Browser $user, Browser $visitor, MariaDbServer $db, string $stack): void
    {
        Adminer::flow($run, $user, $db, $stack);
    }
}

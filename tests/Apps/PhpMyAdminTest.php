<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\PhpMyAdmin;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Support\MariaDbServer;

final class PhpMyAdminTest extends AppTestCase
{
    protected static function app(): string
    {
        return 'phpMyAdmin';
    }

    protected static function isAppInstalled(): bool
    {
        return PhpMyAdmin::isInstalled();
    }

    protected static function knownFailures(): array
    {
        return [];
    }

    protected function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        return PhpMyAdmin::prepare($db, $stack);
    }

    protected function walk(Run $run, Browser $user, Browser $visitor, MariaDbServer $db, string $stack): void
    {
        PhpMyAdmin::flow($run, $user, $db, $stack);
    }
}

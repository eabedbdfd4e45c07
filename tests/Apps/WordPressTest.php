<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Apps\Support\WordPress;
use Kiln\Tests\Support\MariaDbServer;

final class WordPressTest extends AppTestCase
{
    protected static function app(): string
    {
        return 'WordPress';
    }

    protected static function isAppInstalled(): bool
    {
        return WordPress::isInstalled();
    }

    protected static function knownFailures(): array
    {
        return [];
    }

    protected function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        return WordPress::prepare($db, $stack);
    }

    protected function walk(Run $run, Browser $user, Browser $visitor, MariaDbServer $db, string $stack): void
    {
        WordPress::flow($run, $user, $visitor, $db, $stack);
    }
}

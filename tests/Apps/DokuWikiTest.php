<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\DokuWiki;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Support\MariaDbServer;

final class DokuWikiTest extends AppTestCase
{
    protected static function app(): string
    {
        return 'DokuWiki';
    }

    protected static function isAppInstalled(): bool
    {
        return DokuWiki::isInstalled();
    }

    protected static function knownFailures(): array
    {
        return [];
    }

    protected function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        return DokuWiki::prepare();
    }

    protected function walk(Run $run, Browser $user, Browser $visitor, MariaDbServer $db, string $stack): void
    {
        DokuWiki::flow($run, $user, $visitor);
    }
}

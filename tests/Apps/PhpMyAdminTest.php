<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\MariaDb;
use Kiln\Tests\Apps\Support\PhpMyAdmin;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;

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
        return [
            // phpMyAdmin's ResponseRenderer::response() is a shutdown function that ends with exit; an exit() in a
            // shutdown function skips the ones registered after it, among them the one that sends the response.
            'kiln-sequential' => 'a shutdown function that calls exit() (phpMyAdmin\'s ResponseRenderer::response()) leaves the client with an empty reply: Kiln sends the script\'s response from a shutdown function registered after it, which PHP then skips',
            // phpMyAdmin's OutputBuffering::start() ends the buffer it finds (ob_end_clean() at level 1) before its own.
            'kiln-fork' => 'ending the base output buffer (ob_end_clean() at level 1, as phpMyAdmin\'s OutputBuffering::start() does) makes the fork child send the response head then: the later header(\'Location: ...\') and its 302 are lost',
        ];
    }

    protected function prepare(MariaDb $db, string $stack): SiteCopy
    {
        return PhpMyAdmin::prepare($db, $stack);
    }

    protected function walk(Run $run, Browser $user, Browser $visitor, MariaDb $db, string $stack): void
    {
        PhpMyAdmin::flow($run, $user, $db, $stack);
    }
}

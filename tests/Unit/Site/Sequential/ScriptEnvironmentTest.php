<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\ScriptEnvironment;
use PHPUnit\Framework\TestCase;

final class ScriptEnvironmentTest extends TestCase
{
    protected function tearDown(): void
    {
        putenv('KILN_TEST_OWN');
        putenv('KILN_TEST_NEW');
    }

    public function testTheRequestsVariablesAreSeenByGetenvUntilRestored(): void
    {
        putenv('KILN_TEST_OWN=worker');
        $environment = new ScriptEnvironment();
        $environment->apply(['KILN_TEST_OWN' => 'request', 'KILN_TEST_NEW' => 'GET']);
        self::assertSame('request', getenv('KILN_TEST_OWN'));
        self::assertSame('GET', getenv('KILN_TEST_NEW'));
        if (ScriptEnvironment::hooked()) {
            self::assertSame('worker', getenv('KILN_TEST_OWN', true), 'local_only reads the process environment, as PHP documents');
        }
        self::assertSame(getenv('PATH', true), getenv('PATH'), 'names the request does not have come from the process');
        $environment->restore();
        self::assertSame('worker', getenv('KILN_TEST_OWN'), 'the worker\'s own value is back');
        self::assertFalse(getenv('KILN_TEST_NEW'), 'a name the worker did not have is gone');
    }

    public function testApplyingTwiceBeforeRestoringKeepsTheWorkersFirstValue(): void
    {
        putenv('KILN_TEST_OWN=worker');
        $environment = new ScriptEnvironment();
        $environment->apply(['KILN_TEST_OWN' => 'one']);
        $environment->apply(['KILN_TEST_OWN' => 'two']);
        $environment->restore();
        self::assertSame('worker', getenv('KILN_TEST_OWN'));
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** What one script changes in the worker is set back before the next one runs. */
final class ResetTest extends SequentialTestCase
{
    public function testIniSettingsErrorReportingTimezoneAndIncludePathAreRestored(): void
    {
        $first = self::json($this->get('/ini.php'));
        $second = self::json($this->get('/ini.php'));
        self::assertSame($first, $second, 'ini.php changed them all; the next request sees the originals');
        self::assertSame('14', $second['precision']);
    }

    public function testRequireOnceRunsAFileThatDeclaresNothingOnEveryRequestAndAFileThatDeclaresOnce(): void
    {
        $first = self::json($this->get('/once.php'));
        self::assertSame(['config' => 'kiln', 'helper' => 'helper', 'helpers_variable' => 'set'], $first);
        $second = self::json($this->get('/once.php'));
        self::assertSame('kiln', $second['config'], 'config.php sets $config again, as under php-fpm');
        self::assertSame('helper', $second['helper'], 'helpers.php is not run twice (it would redeclare)');
        self::assertNull($second['helpers_variable'], 'the documented limit: its top-level variables are not set again');
    }

    /**
     * A bootstrap that declares (so require_once runs it once per worker) and also calls header() outside any
     * function: only the worker's first request gets the header. The log says so once, naming the file and the call.
     */
    public function testABootstrapThatDeclaresAndSetsUpTheRequestIsReportedOnce(): void
    {
        $first = $this->get('/setup/page.php');
        self::assertSame([200, 'helper', ['yes']], [$first['status'], $first['body'], $first['headers']['x-booted'] ?? null]);
        $second = $this->get('/setup/page.php');
        self::assertSame([200, 'helper', null], [$second['status'], $second['body'], $second['headers']['x-booted'] ?? null]);
        $this->get('/once.php'); // lib/helpers.php declares a function and sets a variable: no request setup, no warning
        $log = $this->server()->log();
        self::assertSame(1, substr_count($log, 'outside any function'), $log);
        self::assertMatchesRegularExpression('~/setup/boot\.php declares functions, classes or constants, .* but it also calls header\(\) outside any function: .*--tier=isolated~', $log);
    }

    public function testAScriptRequestedBeforeIsRunAgainByRequireOnceAndNotListedAsIncluded(): void
    {
        $direct = self::json($this->get('/once-direct.php'));
        self::assertContains('once-direct.php', $direct['included']);
        $caller = self::json($this->get('/once-caller.php'));
        self::assertSame(1, $caller['ran'], 'require_once ran it: the earlier request did not leave it marked as included');
        self::assertNotContains('once-direct.php', array_slice($caller['included'], 0, -2), 'only this request\'s files, in order');
        self::assertSame(['once-caller.php', 'once-direct.php'], array_slice($caller['included'], -2));
        $again = self::json($this->get('/once-direct.php'));
        self::assertNotContains('once-caller.php', $again['included'], 'the previous request\'s script is gone from get_included_files()');
    }

    public function testErrorAndExceptionHandlersDoNotOutliveTheirRequest(): void
    {
        self::assertSame(['error' => true, 'exception' => true], self::json($this->get('/handlers.php')));
        self::assertSame(['error' => true, 'exception' => true], self::json($this->get('/handlers.php')), 'the stacks were emptied');
    }

    public function testOutputBuffersLeftOpenAreFlushedIntoTheResponseAndUnwound(): void
    {
        self::assertSame('level 1;one;two;three;', $this->get('/buffers.php')['body']);
        self::assertSame('level 1;one;two;three;', $this->get('/buffers.php')['body'], 'the next script starts at level 1 again');
        self::assertSame(1, self::json($this->get('/dump.php'))['ob_level']);
    }

    public function testABufferTheScriptMayNotRemoveIsFlushedIntoTheResponseAndUnwound(): void
    {
        $response = $this->get('/fixed-buffer.php');
        self::assertSame(200, $response['status']);
        self::assertSame('kept in a fixed buffer;and one above it;', $response['body'], 'as php-cgi and php-fpm send it');
        self::assertSame('level 1;one;two;three;', $this->get('/buffers.php')['body'], 'no buffer level is left behind');
        self::assertSame('kept in a fixed buffer;and one above it;', $this->get('/fixed-buffer.php')['body']);
    }

    public function testEndingAFixedBufferRaisesNoNoticeForTheScriptsErrorHandler(): void
    {
        $response = $this->get('/fixed-buffer-strict.php');
        self::assertSame(200, $response['status']);
        self::assertSame('fixed page under a strict error handler;', $response['body']);
    }

    public function testAHandlerThrowingAfterTheScriptEndedKilnsBufferDropsTheOnesBelowAndLeavesNothingBehind(): void
    {
        $response = $this->get('/clean-all-throwing.php');
        self::assertSame(500, $response['status']);
        self::assertStringNotContainsString('page;', $response['body']);
        // PHP's message comes through the worker's standard error, which the supervisor files: wait for it.
        $this->server()->waitForLog('~PHP Fatal error:  Uncaught RuntimeException: the upper handler failed~');
        $log = $this->server()->log();
        self::assertStringNotContainsString('the lower handler was called', $log, 'as in PHP, the request stops at the failure');
        self::assertSame('level 1;one;two;three;', $this->get('/buffers.php')['body'], 'no buffer level is left behind');
        self::assertSame('Hello, World!', $this->get('/hello.php')['body'], 'and no failure carried over');
    }

    public function testAnOutputHandlerThrowingAtTheEndIsAFatalErrorAndLeavesNothingBehind(): void
    {
        $response = $this->get('/throwing-buffer.php');
        self::assertSame(500, $response['status']);
        self::assertStringNotContainsString('page;', $response['body'], 'as under php-fpm, the page is not sent');
        $this->server()->waitForLog('~PHP Fatal error:  Uncaught RuntimeException: the output handler failed~');
        self::assertSame('level 1;one;two;three;', $this->get('/buffers.php')['body'], 'no buffer level is left behind');
        $next = $this->get('/hello.php');
        self::assertSame('Hello, World!', $next['body']);
        self::assertArrayNotHasKey('x-leaked', $next['headers'], 'the request state was reset');
        self::assertSame('14', self::json($this->get('/ini.php'))['precision'], 'the settings were reset');
    }

    public function testAScriptThatEndsEveryBufferKeepsItsLaterOutputAndTheNextRequestItsHeaders(): void
    {
        $response = $this->get('/clean-all.php');
        self::assertSame(200, $response['status']);
        self::assertSame('printed after ending every buffer;{"headers_sent":true,"level":0}', $response['body']);
        self::assertSame(['kept'], $response['headers']['x-before-output']);
        self::assertArrayNotHasKey('x-after-output', $response['headers'], 'as under php-fpm: headers are sent by then');
        $next = $this->get('/headers.php');
        self::assertSame(201, $next['status'], 'the next script can send headers');
        self::assertFalse(self::json($next)['sent']);
        self::assertArrayNotHasKey('x-before-output', $next['headers']);
    }
}

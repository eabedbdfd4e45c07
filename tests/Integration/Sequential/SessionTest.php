<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/**
 * Native sessions: the cookie resumes a visitor's session, a new visitor gets a new one. Regression: the
 * session id of one request must never leak into the next visitor's (the worker is one process).
 */
final class SessionTest extends SequentialTestCase
{
    public function testTwoClientsOnOneWorkerNeverShareASession(): void
    {
        $alice = $this->get('/session.php?owner=alice');
        $aliceCookie = $this->sessionCookie($alice);
        self::assertSame(['id' => substr($aliceCookie, 10), 'visits' => 1, 'owner' => 'alice'], self::json($alice));

        // A second visitor without a cookie, right after, on the same worker: a session of their own.
        $bob = $this->get('/session.php');
        $bobCookie = $this->sessionCookie($bob);
        self::assertNotSame($aliceCookie, $bobCookie, 'the next visitor inherited the previous visitor\'s session id');
        self::assertSame(['id' => substr($bobCookie, 10), 'visits' => 1, 'owner' => null], self::json($bob));

        // Each cookie resumes its own session, whoever came in between.
        $aliceAgain = self::json($this->get('/session.php', ['Cookie' => $aliceCookie]));
        self::assertSame(['id' => substr($aliceCookie, 10), 'visits' => 2, 'owner' => 'alice'], $aliceAgain);
        $bobAgain = $this->get('/session.php', ['Cookie' => $bobCookie]);
        self::assertSame(['id' => substr($bobCookie, 10), 'visits' => 2, 'owner' => null], self::json($bobAgain));
        self::assertArrayNotHasKey('set-cookie', $bobAgain['headers'], 'a resumed session sends no new cookie');

        $carol = $this->get('/session.php');
        self::assertNotContains($this->sessionCookie($carol), [$aliceCookie, $bobCookie]);
    }

    public function testAScriptThatDoesNotUseSessionsSeesNone(): void
    {
        $this->get('/session.php?owner=alice');
        $dump = self::json($this->get('/dump.php'));
        self::assertNotContains('_SESSION', $dump['globals']);
    }

    /** @param array{headers: array<string, list<string>>} $response */
    private function sessionCookie(array $response): string
    {
        $cookie = $response['headers']['set-cookie'][0] ?? '';
        self::assertMatchesRegularExpression('/^PHPSESSID=[a-z0-9]+; path=\//', $cookie);
        return explode(';', $cookie)[0];
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Session;

use Kiln\Store\Session\SessionCodec;
use Kiln\Store\Session\SessionStore;
use Kiln\Store\Session\StoreSessionHandler;
use Kiln\Store\Store;
use Kiln\Tests\Support\ForkedChildren;
use PHPUnit\Framework\TestCase;

/** Sessions in a Store, for App routes and for PHP's native session_start(), on every Store backend. */
abstract class SessionStoreTestCase extends TestCase
{
    use ForkedChildren;

    abstract protected function createStore(): Store;

    public function testASessionIsKeptAsPhpRedisKeepsItUnderItsKeyAndFormat(): void
    {
        $store = $this->createStore();
        $sessions = new SessionStore($store);
        $id = SessionStore::newId();
        self::assertTrue(SessionStore::wellFormed($id));
        self::assertFalse($sessions->exists($id));
        $sessions->commit($id, ['user' => serialize(['id' => 7]), 'n' => serialize(1)], []);
        self::assertSame('user|a:1:{s:2:"id";i:7;}n|i:1;', $store->get('PHPREDIS_SESSION:' . $id));
        self::assertSame(['user' => ['id' => 7], 'n' => 1], SessionCodec::decode((string) $sessions->read($id)));
    }

    public function testACommitMergesItsKeysOverWhatOthersWroteMeanwhile(): void
    {
        $sessions = new SessionStore($this->createStore());
        $id = SessionStore::newId();
        $sessions->commit($id, ['a' => serialize(1), 'b' => serialize(2)], []);
        // Another request wrote c after this one read the session: both changes stay.
        $sessions->commit($id, ['c' => serialize(3)], []);
        $sessions->commit($id, ['a' => serialize(10)], ['b']);
        self::assertSame(['a' => 10, 'c' => 3], SessionCodec::decode((string) $sessions->read($id)));
        $sessions->destroy($id);
        self::assertNull($sessions->read($id));
    }

    public function testTwoProcessesWritingDifferentKeysOfOneSessionLoseNothing(): void
    {
        $store = $this->createStore();
        $id = SessionStore::newId();
        $this->inChildren(2, static function (int $c) use ($store, $id): void {
            $sessions = new SessionStore($store);
            for ($i = 0; $i < 40; $i++) { // 80 keys in all: within the /dev/shm table's ~1,000-byte values
                $sessions->commit($id, ["p{$c}_$i" => serialize($i)], []);
            }
        });
        $values = SessionCodec::decode((string) (new SessionStore($store))->read($id));
        self::assertCount(80, $values);
        self::assertSame(39, $values['p0_39']);
        self::assertSame(39, $values['p1_39']);
    }

    public function testNativeSessionStartReadsAndMergesTheSameSessions(): void
    {
        $sessions = new SessionStore($this->createStore());
        $id = SessionStore::newId();
        $sessions->commit($id, ['from' => serialize('an App route'), 'keep' => serialize([1, 2])], []);

        $this->nativeSession($sessions, $id, static function (): void {
            self::assertSame('an App route', $_SESSION['from']);
            $_SESSION['classic'] = 'a script';
            unset($_SESSION['from']);
            // Meanwhile an App route of the same session writes another key: the script's write merges.
        }, static fn() => $sessions->commit($id, ['route' => serialize(true)], []));

        self::assertSame(['keep' => [1, 2], 'route' => true, 'classic' => 'a script'], SessionCodec::decode((string) $sessions->read($id)));
    }

    public function testNativeSessionsReplaceAnUnknownIdInStrictMode(): void
    {
        $sessions = new SessionStore($this->createStore());
        $unknown = SessionStore::newId();
        $started = $this->nativeSession($sessions, $unknown, static function (): void {
            $_SESSION['x'] = 1;
        });
        self::assertNotSame($unknown, $started);
        self::assertNull($sessions->read($unknown));
        self::assertSame('x|i:1;', $sessions->read($started));
    }

    /** Runs $body inside session_start() … session_write_close() with the store's handler; returns the id used. */
    private function nativeSession(SessionStore $sessions, string $id, \Closure $body, ?\Closure $beforeWrite = null): string
    {
        session_set_save_handler(new StoreSessionHandler($sessions), false);
        session_id($id);
        self::assertTrue(session_start(['use_cookies' => 0, 'use_strict_mode' => 1, 'cache_limiter' => '']));
        try {
            $body();
            $beforeWrite?->__invoke();
            $started = session_id();
            session_write_close();
        } finally {
            if (session_status() === \PHP_SESSION_ACTIVE) {
                session_abort();
            }
            $_SESSION = [];
        }
        return (string) $started;
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\App;
use Kiln\App\Handler\OutputCapture;
use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\TrustedProxies;
use Kiln\App\Session;
use Kiln\Http\Response;
use Kiln\Store\MemoryTable;
use Kiln\Store\Session\SessionCodec;
use Kiln\Store\Store;
use Kiln\Store\TableStore;
use Kiln\Tests\Unit\App\Middleware\Requests;
use PHPUnit\Framework\TestCase;

/** App::sessions(): the Sessions middleware and the Session a handler takes. */
final class SessionTest extends TestCase
{
    private string $path;

    private Store $store;

    private App $app;

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-session-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        $this->store = new TableStore(MemoryTable::file($this->path, buckets: 64, slots: 4, slotSize: 1024));
        $this->app = new App();
        $this->app->middleware(new TrustedProxies(['10.0.0.0/8']));
        $this->app->sessions($this->store);
        $this->app->get('/visits', static function (Session $session): array {
            $session->set('visits', $visits = (int) $session->get('visits', 0) + 1);
            return ['visits' => $visits];
        });
        $this->app->get('/untouched', static fn(): string => 'no session here');
        $this->app->get('/login', static function (Session $session): string {
            $session->regenerate();
            $session->set('user', 'ada');
            return 'in';
        });
        $this->app->get('/logout', static function (Session $session): string {
            $session->destroy();
            return 'out';
        });
        $this->app->get('/flash', static function (Session $session): string {
            $session->flash('notice', 'Saved');
            return 'flashed';
        });
        $this->app->get('/show', static fn(Session $session): string => (string) $session->flashed('notice', '(none)'));
        $this->app->get('/fail', static function (Session $session): never {
            $session->set('visits', 1000);
            throw new HttpErrorException(409, 'no');
        });
    }

    protected function tearDown(): void
    {
        OutputCapture::instance()->uninstall();
        @unlink($this->path);
    }

    public function testARouteThatNeverTouchesTheSessionCostsNoCookieAndNoWrite(): void
    {
        $response = $this->get('/untouched');
        self::assertNull($response->header('Set-Cookie'));
        self::assertSame(0, $this->store->count());
    }

    public function testTheFirstWriteSetsASecureByDefaultCookieAndLaterRequestsReadTheSession(): void
    {
        $first = $this->get('/visits');
        $cookie = (string) $first->header('Set-Cookie');
        self::assertMatchesRegularExpression('/^PHPSESSID=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax$/', $cookie);
        $id = self::id($first);
        self::assertSame('visits|i:1;', $this->store->get('PHPREDIS_SESSION:' . $id));

        $second = $this->get('/visits', $id);
        self::assertSame(['visits' => 2], json_decode((string) $second->body(), true));
        self::assertNull($second->header('Set-Cookie'), 'the cookie stays as it is');
    }

    public function testTheCookieIsSecureWhenATrustedProxySaysTheRequestCameOverHttps(): void
    {
        $response = $this->app->handle(Requests::make('GET', '/visits', ['X-Forwarded-Proto' => 'https'], remoteAddress: '10.0.0.1'));
        self::assertStringContainsString('; Secure', (string) $response->header('Set-Cookie'));
        $spoofed = $this->app->handle(Requests::make('GET', '/visits', ['X-Forwarded-Proto' => 'https'], remoteAddress: '192.0.2.1'));
        self::assertStringNotContainsString('Secure', (string) $spoofed->header('Set-Cookie'));
    }

    public function testAnIdTheStoreDoesNotKnowIsReplacedNeverAdopted(): void
    {
        $chosen = str_repeat('a', 32);
        $response = $this->get('/visits', $chosen);
        $id = self::id($response);
        self::assertNotSame($chosen, $id);
        self::assertNull($this->store->get('PHPREDIS_SESSION:' . $chosen));
        self::assertNotNull($this->store->get('PHPREDIS_SESSION:' . $id));
        self::assertNotSame($chosen, self::id($this->get('/visits', 'not a valid id')));
    }

    public function testRegenerateCarriesTheDataToANewIdAndTheOldOneStopsWorking(): void
    {
        $old = self::id($this->get('/visits'));
        $new = self::id($this->get('/login', $old));
        self::assertNotSame($old, $new);
        self::assertNull($this->store->get('PHPREDIS_SESSION:' . $old));
        self::assertSame(['visits' => 1, 'user' => 'ada'], SessionCodec::decode((string) $this->store->get('PHPREDIS_SESSION:' . $new)));
    }

    public function testDestroyRemovesTheSessionAndDropsTheCookie(): void
    {
        $id = self::id($this->get('/visits'));
        $response = $this->get('/logout', $id);
        self::assertStringStartsWith('PHPSESSID=; ', (string) $response->header('Set-Cookie'));
        self::assertStringContainsString('Max-Age=0', (string) $response->header('Set-Cookie'));
        self::assertNull($this->store->get('PHPREDIS_SESSION:' . $id));
    }

    public function testAFlashedValueIsSeenByTheNextRequestOnly(): void
    {
        $id = self::id($this->get('/flash'));
        self::assertSame('Saved', $this->get('/show', $id)->body());
        self::assertSame('(none)', $this->get('/show', $id)->body());
    }

    public function testAHandlerThatThrowsLeavesTheSessionAsItWas(): void
    {
        $id = self::id($this->get('/visits'));
        self::assertSame(409, $this->get('/fail', $id)->status());
        self::assertSame('visits|i:1;', $this->store->get('PHPREDIS_SESSION:' . $id));
    }

    private function get(string $path, ?string $session = null): Response
    {
        return $this->app->handle(Requests::make('GET', $path, $session === null ? [] : ['Cookie' => "PHPSESSID=$session"]));
    }

    private static function id(Response $response): string
    {
        self::assertSame(1, preg_match('/^PHPSESSID=([0-9a-f]{32});/', (string) $response->header('Set-Cookie'), $m), 'a session cookie was set');
        return $m[1];
    }
}

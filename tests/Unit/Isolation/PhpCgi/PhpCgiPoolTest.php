<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\PhpCgi\PhpCgiLease;
use Kiln\Isolation\PhpCgi\PhpCgiOptions;
use Kiln\Isolation\PhpCgi\PhpCgiPool;
use Kiln\Isolation\PhpCgi\PoolBusyException;
use Kiln\Isolation\PhpCgi\PoolUnavailableException;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\SidecarHost;
use Kiln\Server\SidecarListener;
use Kiln\Server\SidecarSpec;
use PHPUnit\Framework\TestCase;

/** The worker's side of the pool against a scripted supervisor (no processes). */
final class PhpCgiPoolTest extends TestCase
{
    /** @var list<array{string, int, bool, string}> */
    private array $replaced = [];

    private ?SidecarSpec $opened = null;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $this->replaced = [];
        $this->opened = null;
    }

    public function testTheSpecRunsPhpCgiWithOpcacheIniOverridesAndOnlyAllowlistedEnvironment(): void
    {
        $pool = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3, phpIni: ['memory_limit' => '64M', 'error_log' => '/tmp/a b.log'], passEnv: ['APP_ENV', 'MISSING']));
        $spec = $pool->spec();
        self::assertSame(['/usr/bin/php-cgi', '-d', 'opcache.enable=1', '-d', 'memory_limit=64M', '-d', 'error_log="/tmp/a b.log"',
            '-d', 'max_execution_time=31', '-b', '{socket}'], $spec->command);
        self::assertSame(['APP_ENV' => 'prod', 'PHP_FCGI_CHILDREN' => '3', 'PHP_FCGI_MAX_REQUESTS' => '10000'], $spec->env);
        self::assertSame(1, $spec->count, 'one parent, in php-cgi\'s manager mode');
        self::assertTrue($spec->shared, 'one for the server, not one per worker');
        self::assertFalse($spec->batch, 'the children keep the server\'s scheduling policy unless told otherwise');
        self::assertTrue($this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3, batch: true))->spec()->batch);
    }

    public function testPoolsWithTheSameSettingsShareANameAndOtherSettingsGetAnother(): void
    {
        $a = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3))->spec()->name;
        self::assertSame($a, $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3))->spec()->name);
        self::assertNotSame($a, $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 4))->spec()->name);
        self::assertNotSame($a, $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3, phpIni: ['memory_limit' => '64M']))->spec()->name);
        self::assertNotSame($a, $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', 3, batch: true))->spec()->name, 'a parent runs under one policy');
    }

    public function testScriptsEndASecondPastTheTimeLimitRoundedUpUnlessPhpIniSetsTheirOwn(): void
    {
        // Never at the limit itself: the worker's 504 must come before PHP's own fatal error (a 500).
        $limit = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', timeLimit: 1.5))->spec();
        self::assertContains('max_execution_time=3', $limit->command);
        $own = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', timeLimit: 1.5, phpIni: ['max_execution_time' => '7']))->spec();
        self::assertSame(['/usr/bin/php-cgi', '-d', 'opcache.enable=1', '-d', 'max_execution_time=7', '-b', '{socket}'], $own->command);
    }

    public function testTheChildrenRunTheJitOnlyWhenAskedAndPhpIniSettingsOfItWin(): void
    {
        $on = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', timeLimit: 0, jit: true))->spec();
        self::assertSame(['/usr/bin/php-cgi', '-d', 'opcache.enable=1', '-d', 'opcache.jit_buffer_size=64M', '-d', 'opcache.jit=tracing', '-b', '{socket}'], $on->command);
        $own = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', timeLimit: 0, phpIni: ['opcache.jit' => 'function'], jit: true))->spec();
        self::assertSame(['/usr/bin/php-cgi', '-d', 'opcache.enable=1', '-d', 'opcache.jit=function', '-d', 'opcache.jit_buffer_size=64M', '-b', '{socket}'], $own->command);
        $off = $this->pool(new PhpCgiOptions('/usr/bin/php-cgi', timeLimit: 0, phpIni: ['memory_limit' => '64M']))->spec();
        self::assertSame(['/usr/bin/php-cgi', '-d', 'opcache.enable=1', '-d', 'memory_limit=64M', '-b', '{socket}'], $off->command);
    }

    public function testARequestWaitsUntilAChildIsUpAndTheFirstAskOpensTheSet(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1));
        $lease = async(fn() => $pool->acquire());
        self::assertNotNull($this->opened, 'the first acquire() asks the supervisor');
        self::assertSame(['waiting' => 1, 'starting' => 1, 'idle' => 0, 'busy' => 0, 'retiring' => 0, 'failed' => 0], $pool->stats());
        Loop::delay(0.01, static fn() => $pool->sidecarUp(0, 101, '/tmp/s0'));
        $got = $lease->await();
        self::assertSame([0, 101, '/tmp/s0'], [$got->index, $got->pid, $got->socket]);
    }

    public function testWaitingRequestsGetFreedChildrenInArrivalOrder(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1));
        $pool->sidecarUp(0, 101, '/s');
        $first = $pool->acquire();
        $order = [];
        $a = async(function () use ($pool, &$order): PhpCgiLease {
            $lease = $pool->acquire();
            $order[] = 'a';
            return $lease;
        });
        $b = async(function () use ($pool, &$order): PhpCgiLease {
            $lease = $pool->acquire();
            $order[] = 'b';
            return $lease;
        });
        $pool->release($first);
        $pool->release($a->await());
        $b->await();
        self::assertSame(['a', 'b'], $order);
    }

    public function testAfterWaitersThatGaveUpTheNextOnesAreStillServedInArrivalOrder(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1, timeLimit: 0.2));
        $pool->sidecarUp(0, 101, '/s');
        $held = $pool->acquire();
        $gaveUp = [async(fn() => $pool->acquire()), async(fn() => $pool->acquire())];
        foreach ($gaveUp as $waiter) {
            $thrown = null;
            try {
                $waiter->await();
            } catch (\Throwable $e) {
                $thrown = $e;
            }
            self::assertInstanceOf(PoolBusyException::class, $thrown);
        }
        $order = [];
        $waiters = [];
        foreach (range(1, 300) as $n) {
            $waiters[] = async(function () use ($pool, &$order, $n): PhpCgiLease {
                $lease = $pool->acquire();
                $order[] = $n;
                return $lease;
            });
        }
        $pool->release($held);
        foreach ($waiters as $waiter) {
            $pool->release($waiter->await());
        }
        self::assertSame(range(1, 300), $order);
        self::assertSame(0, $pool->stats()['waiting']);
    }

    public function testUpToPoolSizeRequestsGoToTheParentAtOnceAndTheNextWaitsForARelease(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 2, maxRequests: 2));
        $pool->sidecarUp(0, 101, '/s');
        $a = $pool->acquire();
        $b = $pool->acquire();
        self::assertSame([101, '/s', 101, '/s'], [$a->pid, $a->socket, $b->pid, $b->socket]);
        self::assertSame(['waiting' => 0, 'starting' => 0, 'idle' => 0, 'busy' => 2, 'retiring' => 0, 'failed' => 0], $pool->stats());
        $next = async(fn() => $pool->acquire());
        delay(0.01);
        self::assertFalse($next->isComplete(), 'a third waits');
        $pool->release($a);
        self::assertSame(101, $next->await()->pid);
        $pool->release($b);
        self::assertSame([], $this->replaced, 'recycling is php-cgi\'s own (PHP_FCGI_MAX_REQUESTS)');
    }

    public function testANewParentTakesTheNextRequestsAndTheOldOnesConnectionsAreLetGo(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 2));
        $events = [];
        $pool->onRetire(static function (FastCgiAddress $address) use (&$events): void {
            $events[] = "let go {$address->path}";
        });
        $pool->sidecarUp(0, 101, '/s0');
        $old = $pool->acquire();
        $pool->sidecarUp(0, 102, '/s1');
        self::assertSame(['let go /s0'], $events);
        self::assertSame(102, $pool->acquire()->pid);
        $pool->release($old);
        $pool->sidecarDown(0, 0.0, 'killed by signal 9');
        self::assertSame(['let go /s0', 'let go /s1'], $events);
    }

    public function testARequestThatGaveUpFreesItsPlaceAndAsksForNoReplacement(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1));
        $pool->sidecarUp(0, 101, '/s0');
        $lease = $pool->acquire();
        $pool->release($lease, false, 'timed out');
        $pool->release($lease, false, 'timed out');
        self::assertSame([], $this->replaced, 'php-cgi replaces its own children');
        self::assertSame(101, $pool->acquire()->pid);
        self::assertSame(1, $pool->stats()['busy'], 'a second release of one lease frees nothing more');
    }

    public function testAFullQueueRefusesAtOnce(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1, queue: 1));
        $pool->sidecarUp(0, 101, '/s');
        $pool->acquire();
        $waiting = async(fn() => $pool->acquire());
        $this->expectException(PoolBusyException::class);
        $this->expectExceptionMessage('--pool-queue');
        try {
            $pool->acquire();
        } finally {
            $waiting->ignore();
        }
    }

    public function testARequestThatWaitsLongerThanTheTimeLimitIsRefused(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1, timeLimit: 0.05));
        $pool->sidecarUp(0, 101, '/s');
        $pool->acquire();
        $started = microtime(true);
        try {
            async(fn() => $pool->acquire())->await();
            self::fail('expected PoolBusyException');
        } catch (PoolBusyException $e) {
            self::assertStringContainsString('within 0.05 s', $e->getMessage());
        }
        self::assertGreaterThanOrEqual(0.04, microtime(true) - $started);
        self::assertSame(0, $pool->stats()['waiting']);
    }

    public function testWhenTheParentFailedToStartRequestsFailAtOnceAndComeBackWhenItIsUp(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 2));
        $waiting = async(fn() => $pool->acquire());
        $pool->sidecarDown(0, 0.1, 'cannot execute /nope');
        $thrown = null;
        try {
            $waiting->await();
        } catch (\Throwable $thrown) {
        }
        self::assertInstanceOf(PoolUnavailableException::class, $thrown, 'the waiting request fails at once');
        self::assertStringContainsString('cannot execute /nope', $thrown->getMessage());
        $this->expectExceptionObject(new PoolUnavailableException('php-cgi cannot run: cannot execute /nope'));
        try {
            $pool->acquire();
        } finally {
            $pool->sidecarUp(0, 103, '/s');
            self::assertSame(103, $pool->acquire()->pid);
        }
    }

    public function testWhileADeadParentsReplacementStartsRequestsWaitForIt(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1));
        $pool->sidecarUp(0, 101, '/s');
        $lease = $pool->acquire();
        $pool->sidecarDown(0, 0.0, 'killed by signal 9');
        $next = async(fn() => $pool->acquire());
        $pool->release($lease, false, 'connection lost');
        self::assertSame([], $this->replaced, 'a release for a process that is gone changes nothing');
        $pool->sidecarUp(0, 104, '/s2');
        self::assertSame(104, $next->await()->pid);
    }

    public function testAReleaseThatNoWaitingRequestTakesLetsTheKeptConnectionsGoAndOneThatIsTakenDoesNot(): void
    {
        $pool = $this->pool(new PhpCgiOptions(size: 1));
        $idle = 0;
        $pool->onIdle(static function () use (&$idle): void {
            $idle++;
        });
        $pool->sidecarUp(0, 101, '/s');
        $first = $pool->acquire();
        $next = async(fn() => $pool->acquire());
        delay(0.01);
        $pool->release($first);
        self::assertSame(0, $idle, 'a waiting request took the place: the connection is kept for it');
        $pool->release($next->await());
        self::assertSame(1, $idle, 'nobody waits: the kept connections go');
        $pool->release($first);
        self::assertSame(1, $idle, 'a second release of one lease changes nothing');
    }

    public function testReuseMustBeAtLeastOne(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('--pool-reuse must be at least 1, got 0');
        new PhpCgiOptions(reuse: 0);
    }

    private function pool(PhpCgiOptions $options): PhpCgiPool
    {
        $host = new class ($this) implements SidecarHost {
            public function __construct(private readonly PhpCgiPoolTest $test) {}

            public function open(SidecarSpec $spec, SidecarListener $listener): void
            {
                $this->test->opened($spec);
            }

            public function replace(string $name, int $index, int $pid, bool $kill, string $reason): void
            {
                $this->test->replaced($name, $index, $kill, "$reason (pid $pid)");
            }
        };
        return new PhpCgiPool($options, $host, ['APP_ENV' => 'prod', 'SECRET' => 'x']);
    }

    /** @internal called by the fake host */
    public function opened(SidecarSpec $spec): void
    {
        $this->opened = $spec;
    }

    /** @internal called by the fake host */
    public function replaced(string $name, int $index, bool $kill, string $reason): void
    {
        $this->replaced[] = [$name, $index, $kill, $reason];
    }
}

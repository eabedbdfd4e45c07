<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\IsolatedPool;

use Kiln\Tests\Integration\Isolated\IsolatedTestCase;
use Kiln\Tests\Support\RawClient;

/** The server's one php-cgi parent: a child that dies costs only its own request, and php-cgi recycles children without losing one. */
final class SharedPoolTest extends IsolatedTestCase
{
    public function testAChildKilledDuringItsRequestCostsThatRequestA502AndTheNextOnesAre200(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        [$child] = $this->waitForChildren(1);
        $client = RawClient::to($server);
        $client->send("GET /legacy/sleep.php?ms=3000 HTTP/1.1\r\nHost: test\r\n\r\n");
        self::waitUntil(fn(): bool => $this->busy() === 1, 5.0, 'the request to reach the child');
        posix_kill($child, SIGKILL);
        self::assertSame(502, $client->readResponse(10.0)['status'] ?? 0);
        $client->close();
        for ($i = 1; $i <= 5; $i++) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame(200, $response['status'], "request $i after the crash: {$response['body']}");
            self::assertNotSame((string) $child, $response['body']);
        }
    }

    public function testAHundredRequestsWithChildrenRecycledEveryFiveAreEveryOneAnswered(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '2', 'KILN_TEST_POOL_MAX_REQUESTS' => '5'], ['--workers=2']);
        $this->waitForChildren(2);
        $pids = [];
        for ($i = 1; $i <= 100; $i++) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame(200, $response['status'], "request $i: {$response['body']}");
            $pids[(int) $response['body']] = ($pids[(int) $response['body']] ?? 0) + 1;
        }
        self::assertGreaterThan(2, \count($pids), 'more children than --pool-size took turns');
        self::assertLessThanOrEqual(5, max($pids), 'none served more than --pool-max-requests');
    }

    /** What php-cgi writes to its standard error outside a request (a start-up warning) is an entry of the error log. */
    public function testAPhpCgiStartUpWarningIsAnEntryOfTheJsonLogUnderItsName(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_INI' => 'extension=kiln_no_such_extension'], ['--error-log-format=json']);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        $server->waitForLog("/Unable to load dynamic library 'kiln_no_such_extension'/", 5.0);
        [$parent] = $this->phpCgiParents();
        $found = [];
        foreach (explode("\n", trim($server->log())) as $line) {
            $entry = json_decode($line, true);
            self::assertIsArray($entry, "every line of the log is a JSON object, not: $line");
            if (str_contains((string) ($entry['message'] ?? ''), 'kiln_no_such_extension')) {
                $found[] = $entry;
            }
        }
        self::assertCount(1, $found);
        self::assertSame(['warning', 'php-cgi', $parent], [$found[0]['level'] ?? null, $found[0]['source'] ?? null, $found[0]['pid'] ?? null]);
        self::assertStringStartsWith('PHP Warning:  PHP Startup: Unable to load dynamic library', (string) ($found[0]['message'] ?? ''));
    }

    public function testADrainEndsTheServersPhpCgiParentAndItsChildrenOnceTheWorkersAreGone(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $children = $this->waitForChildren(2);
        $parents = $this->phpCgiParents();
        self::assertCount(1, $parents);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        $server->signal(SIGQUIT);
        self::assertSame(0, $server->waitForExit(10.0), 'the server exits after its drain');
        foreach ([...$parents, ...$children] as $pid) {
            self::waitUntil(static fn(): bool => !self::isAlive($pid), 5.0, "php-cgi $pid to end with the server");
        }
    }

    private function busy(): int
    {
        $stats = json_decode($this->get('/pool')['body'], true, 2, JSON_THROW_ON_ERROR);
        self::assertIsArray($stats);
        $busy = $stats['busy'] ?? null;
        self::assertIsInt($busy);
        return $busy;
    }
}

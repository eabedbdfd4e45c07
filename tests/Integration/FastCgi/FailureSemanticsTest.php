<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\FastCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiOptions;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\FastCgi\FastCgiUnavailableException;
use Kiln\Isolation\FastCgi\ProtocolException;
use Kiln\Loop\CancelledException;
use Kiln\Loop\DeferredCancellation;
use Kiln\Loop\Loop;
use Kiln\Tests\Support\PeerProcess;

/** Unreachable, silent, broken and abandoned responders: what the caller sees, and what is (never) resent. */
final class FailureSemanticsTest extends FakeServerTestCase
{
    public function testRefusedConnectionIsUnavailableAndNothingRan(): void
    {
        $address = FastCgiAddress::tcp('127.0.0.1', PeerProcess::freePort());
        $missing = FastCgiAddress::unix(\sys_get_temp_dir() . '/kiln-no-such-' . \bin2hex(\random_bytes(4)) . '.sock');
        $this->inLoop(function () use ($address, $missing): void {
            $client = new FastCgiClient();
            foreach ([$address, $missing] as $to) {
                try {
                    $client->request($to, self::params());
                    self::fail("{$to} must be unavailable");
                } catch (FastCgiUnavailableException $e) {
                    self::assertStringContainsString("Cannot connect to FastCGI responder {$to}", $e->getMessage());
                    self::assertFalse($e->mayHaveRun);
                    self::assertSame(0, $client->openConnections($to));
                }
            }
        });
    }

    public function testSilentResponderTimesOutAndItsConnectionIsClosed(): void
    {
        $address = FastCgiAddress::parse($this->startFake('hang'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(readTimeout: 0.3));
            try {
                $client->request($address, self::params());
                self::fail('A silent responder must time out');
            } catch (FastCgiTimeoutException $e) {
                self::assertStringContainsString('was silent for 0.3 s', $e->getMessage());
            }
            self::assertSame(0, $client->openConnections($address));
            $this->awaitEvent('/^eof 1$/');
        });
    }

    public function testTotalLimitEndsAResponseThatKeepsTrickling(): void
    {
        $address = FastCgiAddress::parse($this->startFake('stream'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(readTimeout: 5.0, requestTimeout: 0.4));
            $response = $client->request($address, self::params());
            $chunks = 0;
            try {
                foreach ($response as $chunk) {
                    $chunks++;
                }
                self::fail('The total limit must end the response');
            } catch (FastCgiTimeoutException $e) {
                self::assertStringContainsString('longer than its limit of 0.4 s', $e->getMessage());
            }
            self::assertGreaterThan(2, $chunks);
            self::assertSame(0, $client->openConnections($address));
        });
    }

    public function testResponderClosingBeforeAnsweringIsUnavailableAndMayHaveRun(): void
    {
        $address = FastCgiAddress::parse($this->startFake('close-before'));
        $this->inLoop(function () use ($address): void {
            try {
                (new FastCgiClient())->request($address, self::params());
                self::fail('A responder closing without a byte of answer is unavailable');
            } catch (FastCgiUnavailableException $e) {
                self::assertTrue($e->mayHaveRun);
                self::assertStringContainsString('closed the connection without answering', $e->getMessage());
            }
        });
        self::assertCount(1, \preg_grep('/^request /', $this->events()) ?: [], 'A fresh connection is never retried');
    }

    public function testResponderClosingMidResponseIsAnErrorAfterTheBytesItSent(): void
    {
        $address = FastCgiAddress::parse($this->startFake('close-mid'));
        $this->inLoop(function () use ($address): void {
            $response = (new FastCgiClient())->request($address, self::params());
            $received = '';
            try {
                foreach ($response as $chunk) {
                    $received .= $chunk;
                }
                self::fail('A response cut short must fail');
            } catch (FastCgiException $e) {
                self::assertNotInstanceOf(FastCgiUnavailableException::class, $e);
                self::assertStringContainsString('before the end of the response', $e->getMessage());
            }
            self::assertSame("Content-Type: text/plain\r\n\r\npartial body", $received);
        });
    }

    public function testOverloadedResponderIsUnavailableWithTheOverloadedFlag(): void
    {
        $address = FastCgiAddress::parse($this->startFake('overloaded'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            try {
                $client->request($address, self::params())->read();
                self::fail('FCGI_OVERLOADED must fail the request');
            } catch (FastCgiUnavailableException $e) {
                self::assertTrue($e->overloaded);
            }
            self::assertSame(1, $client->idleConnections($address), 'The connection itself is fine and kept');
        });
    }

    public function testBytesThatAreNotFastCgiAreAProtocolError(): void
    {
        $address = FastCgiAddress::parse($this->startFake('garbage'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $response = $client->request($address, self::params());
            $this->expectException(ProtocolException::class);
            $this->expectExceptionMessage('version 72');
            try {
                $response->read();
            } finally {
                self::assertSame(0, $client->openConnections($address));
            }
        });
    }

    public function testKeptConnectionClosedWhileIdleIsReplacedBeforeAnythingIsSent(): void
    {
        $address = FastCgiAddress::parse($this->startFake('close-after'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $client->request($address, self::params('POST'), 'one')->body();
            $this->awaitEvent('/^closed 1$/');
            self::assertSame(1, $client->idleConnections($address), 'It looked reusable when it came back');
            $echo = $client->request($address, self::params('POST'), 'two')->body();
            self::assertStringContainsString('X-Connection: 2', $echo);
        });
        self::assertSame(['request 1 1 keep=1 stdin=3 method=POST', 'request 2 1 keep=1 stdin=3 method=POST'], \array_values(\preg_grep('/^request /', $this->events()) ?: []));
    }

    public function testIdempotentRequestIsSentAgainWhenAKeptConnectionDiesUnanswered(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $client->request($address, self::params())->body();
            $echo = $client->request($address, self::params('GET', ['FAKE_SCENARIO' => 'close-if-reused']))->body();
            self::assertStringContainsString('X-Connection: 2', $echo);
        });
        self::assertSame(
            ['request 1 1 keep=1 stdin=0 method=GET', 'request 1 2 keep=1 stdin=0 method=GET', 'request 2 1 keep=1 stdin=0 method=GET'],
            \array_values(\preg_grep('/^request /', $this->events()) ?: []),
        );
    }

    public function testNonIdempotentRequestIsNotSentAgainOnceItWasWritten(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $client->request($address, self::params('POST'), 'a')->body();
            try {
                $client->request($address, self::params('POST', ['FAKE_SCENARIO' => 'close-if-reused']), 'b');
                self::fail('A POST that may have run is not resent');
            } catch (FastCgiUnavailableException $e) {
                self::assertTrue($e->mayHaveRun);
            }
        });
        self::assertCount(2, \preg_grep('/^request /', $this->events()) ?: []);
    }

    public function testKeptConnectionDyingUnansweredIsRetriedOnlyForAnIdempotentRequest(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            foreach (['GET' => 2, 'POST' => 1] as $method => $attempts) {
                $client->request($address, self::params($method))->body();
                $before = \count(\preg_grep('/^request /', $this->events()) ?: []);
                try {
                    $client->request($address, self::params($method, ['FAKE_SCENARIO' => 'close-before']));
                    self::fail('close-before answers nothing, also on the retry');
                } catch (FastCgiUnavailableException $e) {
                    self::assertTrue($e->mayHaveRun);
                }
                $after = \count(\preg_grep('/^request /', $this->events()) ?: []);
                self::assertSame($attempts, $after - $before, "{$method} is sent {$attempts} time(s)");
            }
        });
    }

    public function testCancellingWhileWaitingSendsAbortRequestAndTheConnectionIsKept(): void
    {
        $address = FastCgiAddress::parse($this->startFake('hang'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $this->cancelWhileWaiting($client, $address);
            $this->awaitIdle($client, $address);
            $echo = $client->request($address, self::params('GET', ['FAKE_SCENARIO' => 'echo']))->body();
            self::assertStringContainsString('X-Connection: 1', $echo, 'END_REQUEST came after ABORT_REQUEST: the connection is reused');
        });
    }

    public function testWithoutReuseAfterAbortTheConnectionOfAGivenUpRequestIsClosedOnceItsEndRequestCame(): void
    {
        $address = FastCgiAddress::parse($this->startFake('hang'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(reuseAfterAbort: false));
            $this->cancelWhileWaiting($client, $address);
            $this->awaitEvent('/^eof 1$/');
            self::assertSame(0, $client->openConnections($address));
            $echo = $client->request($address, self::params('GET', ['FAKE_SCENARIO' => 'echo']))->body();
            self::assertStringContainsString('X-Connection: 2', $echo, 'the next request went on a new connection');
        });
    }

    /** Sends a request the fake never answers, cancels it after 0.1 s, and waits for its ABORT_REQUEST. */
    private function cancelWhileWaiting(FastCgiClient $client, FastCgiAddress $address): void
    {
        $cancel = new DeferredCancellation();
        Loop::delay(0.1, static fn() => $cancel->cancel());
        try {
            $client->request($address, self::params(), '', null, $cancel->getCancellation());
            self::fail('The request must be cancelled');
        } catch (CancelledException) {
        }
        $this->awaitEvent('/^abort 1 1$/');
    }

    public function testLeavingTheChunkLoopEarlyAbortsTheRequest(): void
    {
        $address = FastCgiAddress::parse($this->startFake('stream'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            foreach ($client->request($address, self::params()) as $i => $chunk) {
                if ($i === 2) {
                    break;
                }
            }
            $this->awaitEvent('/^abort 1 1$/');
            $this->awaitIdle($client, $address);
        });
    }

    public function testDroppingAnUnfinishedResponseAbortsTheRequest(): void
    {
        $address = FastCgiAddress::parse($this->startFake('stream'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $response = $client->request($address, self::params());
            $response->read();
            unset($response);
            $this->awaitEvent('/^abort 1 1$/');
        });
    }

    public function testResponderIgnoringAbortRequestHasItsConnectionClosedAfterTheGrace(): void
    {
        $address = FastCgiAddress::parse($this->startFake('chunks'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(abortGrace: 0.2));
            $response = $client->request($address, self::params('GET', ['FAKE_CHUNKS' => '100000', 'FAKE_CHUNK_SIZE' => '65535']));
            $response->read();
            $response->abort();
            self::assertSame(1, $client->openConnections($address), 'Draining after the abort');
            $this->awaitEvent('/^closed 1$/');
            self::assertSame(0, $client->openConnections($address));
        });
    }

    private function awaitIdle(FastCgiClient $client, FastCgiAddress $address): void
    {
        $until = \microtime(true) + 5;
        while ($client->idleConnections($address) !== 1) {
            self::assertLessThan($until, \microtime(true), 'The aborted connection did not come back to the pool');
            \Kiln\Loop\delay(0.01);
        }
    }
}

<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\CoreState;
use Kiln\Http\Internal\FatalGuard;
use Kiln\Http\Internal\HttpCore;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\StreamPoll;

/**
 * The exit path: the worker process ends (exit(), a fatal error) while its core serves. end() is called as
 * PHP's shutdown would; what it leaves for later in the shutdown is collected and run by the test.
 */
final class FatalGuardTest extends CoreTestCase
{
    private const BIG = 1 << 20;

    /** @var list<\Closure(): void> */
    private array $atExit = [];

    private int $retired = 0;

    private HttpCore $core;

    private FatalGuard $guard;

    /** @var list<resource> descriptors held to push the connections' own past 1023 */
    private array $filler = [];

    protected function setUp(): void
    {
        parent::setUp();
        $this->core = $this->core(function (Request $request): Response {
            switch ($request->path()) {
                case '/ends': // the process ends in this handler while requests read in the same turn wait for theirs
                    $this->guard->end(null);
                    Loop::getSuspension()->suspend();
                    return Response::text('never');
                case '/big':
                    return Response::text(str_repeat('x', self::BIG));
                case '/stuck': // a handler the process ends in (its script called exit())
                    Loop::getSuspension()->suspend();
                    return Response::text('never');
                case '/exits-with-response':
                    $request->setLastResponse(Response::text('said before exit()', 202));
                    Loop::getSuspension()->suspend();
                    return Response::text('never');
                case '/times-out': // the sequential tier past --time-limit: its 504, then a fatal error ends the script
                    $request->setLastResponse(Response::text('past the time limit', 504), 'ran past the time limit', true);
                    Loop::getSuspension()->suspend();
                    return Response::text('never');
                case '/exits-with-builder':
                    $request->setLastResponse(static fn(): Response => Response::text('built after the shutdown functions'));
                    Loop::getSuspension()->suspend();
                    return Response::text('never');
                default:
                    return Response::text('ok');
            }
        });
        $this->guard = new FatalGuard($this->core, function (): void {
            $this->retired++;
        }, function (\Closure $function): void {
            $this->atExit[] = $function;
        }, sharedListener: true);
    }

    protected function tearDown(): void
    {
        parent::tearDown();
        array_map(fclose(...), $this->filler);
        $this->filler = [];
    }

    public function testAResponseUnderWayIsFinishedLastAndCounted(): void
    {
        $idle = $this->connect($this->core);
        fwrite($idle, self::request('/'));
        $this->receive($idle, static fn(string $bytes): bool => str_ends_with($bytes, 'ok'));
        $big = $this->connect($this->core);
        fwrite($big, self::request('/big'));
        $this->servedAll(2);
        self::assertGreaterThan(0, $this->core->connections()[2]->output->pending(), 'the kernel took only part of it');

        $this->guard->end(null); // a script called exit()

        self::assertTrue(self::closedByServer($idle), 'the idle connection is closed at once');
        self::assertCount(1, $this->atExit, 'the finishing waits for the shutdown functions');
        self::assertSame(['info: worker exited; finishing 1 response(s) already under way'], $this->context->logs);
        self::assertSame(0, $this->retired);

        $received = '';
        $reader = Loop::onReadable($big, static function () use ($big, &$received): void {
            $received .= (string) fread($big, 1 << 20);
        });
        ($this->atExit[0])();
        Loop::cancel($reader);
        $received .= self::readToEnd($big);

        self::assertSame(1, $this->retired, 'it stopped accepting');
        self::assertSame(['a script ended it with exit()', 'a script exited; finishing 1 response(s) under way'], $this->context->retiring);
        self::assertSame([str_repeat('x', self::BIG)], self::bodies($received), 'the whole response arrived');
        self::assertSame(1, $this->core->lastResponsesWritten());
        self::assertSame(CoreState::Stopped, $this->core->state());
        self::assertStringStartsWith('info: finished 1 of 1 response(s) under way in ', $this->context->logs[1]);
    }

    public function testWhenAnotherHandlerIsStillRunningItGetsA500AndTheResponseUnderWayIsCut(): void
    {
        $big = $this->connect($this->core);
        fwrite($big, self::request('/big'));
        $stuck = $this->connect($this->core);
        fwrite($stuck, self::request('/stuck'));
        $this->servedAll(1);
        self::assertCount(1, $this->core->running());

        $this->guard->end(null);

        $answer = self::readToEnd($stuck);
        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", $answer);
        self::assertTrue(feof($stuck));
        $cut = self::readToEnd($big);
        self::assertTrue(feof($big), 'nothing of this process may run again: the response is cut');
        self::assertLessThan(self::BIG, \strlen($cut));
        self::assertSame([], $this->atExit, 'nothing is left to finish');
        self::assertSame(['error: worker exited; answered 1 in-flight request(s) with 500, cut 1 response(s) already under way'], $this->context->logs);
        self::assertSame(0, $this->retired);
    }

    public function testAHandlersLastResponseIsSentAtOnceButNotAfterAFatalError(): void
    {
        $said = $this->connect($this->core);
        fwrite($said, self::request('/exits-with-response'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);

        $this->guard->end(null);

        $answer = self::readToEnd($said);
        self::assertStringStartsWith("HTTP/1.1 202 Accepted\r\n", $answer);
        self::assertSame(['said before exit()'], self::bodies($answer));
        self::assertSame(1, $this->context->served, 'counted as served');
        self::assertSame(['info: worker exited; sent 1 request(s) the response made for them before the exit'], $this->context->logs);
        self::assertSame(['a script ended it with exit()'], $this->context->retiring, 'the supervisor is told before the exit');
    }

    public function testAnExitInAWorkerAlreadyDrainingIsNotAnnouncedAgain(): void
    {
        $said = $this->connect($this->core);
        fwrite($said, self::request('/exits-with-response'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);
        $this->core->startDraining(static function (): void {});

        $this->guard->end(null);

        self::assertStringStartsWith("HTTP/1.1 202 Accepted\r\n", self::readToEnd($said));
        self::assertSame([], $this->context->retiring, 'its replacement is under way already');
    }

    public function testAFatalErrorAnswersEvenARequestWithALastResponseWith500(): void
    {
        $said = $this->connect($this->core);
        fwrite($said, self::request('/exits-with-response'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);

        $this->guard->end(['type' => E_ERROR, 'message' => 'Allowed memory size exhausted', 'file' => '/app/a.php', 'line' => 7]);

        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", self::readToEnd($said));
        self::assertSame(['error: fatal error: Allowed memory size exhausted in /app/a.php:7; answered 1 in-flight request(s) with 500'], $this->context->logs);
        self::assertSame([], $this->context->retiring, 'a fatal error is not announced: the supervisor reports the exit');
    }

    public function testAFatalErrorStillSendsAnErrorTheServerMadeForItsRequest(): void
    {
        $said = $this->connect($this->core);
        fwrite($said, self::request('/times-out'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);

        $this->guard->end(['type' => E_ERROR, 'message' => 'Maximum execution time of 1 seconds exceeded', 'file' => '/k/Native.php', 'line' => 9]);

        $answer = self::readToEnd($said);
        self::assertStringStartsWith("HTTP/1.1 504 Gateway Timeout\r\n", $answer);
        self::assertSame(['past the time limit'], self::bodies($answer));
        self::assertSame(['ran past the time limit'], $this->context->retiring, 'announced: the supervisor replaces the worker, no crash backoff');
    }

    public function testALastResponseBuilderRunsAfterTheShutdownFunctions(): void
    {
        $built = $this->connect($this->core);
        fwrite($built, self::request('/exits-with-builder'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);

        $this->guard->end(null);

        self::assertSame('', self::readToEnd($built), 'not yet: the shutdown functions come first');
        self::assertCount(1, $this->atExit);
        ($this->atExit[0])();
        $answer = self::readToEnd($built);
        self::assertSame(['built after the shutdown functions'], self::bodies($answer));
        ($this->atExit[0])();
        self::assertSame('', self::readToEnd($built), 'sent once');
    }

    public function testARequestNotYetStartedIsAnswered503SoTheClientMaySendItAgain(): void
    {
        $partial = $this->connect($this->core);
        fwrite($partial, "GET /half HTTP/1.1\r\nHost: te");
        $this->runFor(5.0, fn(): bool => $this->core->connections()[1]->isWaitingForHead());

        $this->guard->end(null);

        $answer = self::readToEnd($partial);
        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", $answer);
        self::assertStringContainsString("Retry-After: 1\r\n", $answer);
        self::assertSame(['info: worker exited; answered 1 request(s) not yet started with 503'], $this->context->logs);
    }

    /**
     * A worker of many connections has descriptors past 1023, which stream_select() cannot watch: one such made it
     * fail for every connection, and a request already in a socket went unseen (and a new connection's was closed
     * unanswered instead of told to retry).
     */
    public function testARequestInTheSocketIsSeenThoughTheDescriptorsArePastStreamSelectsLimit(): void
    {
        self::assertTrue(StreamPoll::isUnbounded(), 'watching descriptors past 1023 needs ext-ffi: scripts/install-deps.sh installs it');
        Loop::set(new EpollDriver());
        for ($i = 0; $i < 1100; $i++) {
            $this->filler[] = fopen('/dev/null', 'r') ?: self::fail('cannot open /dev/null');
        }
        $idle = $this->connect($this->core);
        $served = $this->connect($this->core);
        fwrite($served, self::request('/first'));
        $this->servedAll(1);
        self::pending($served);

        // Both requests are in their sockets, neither read by the loop yet, when the process ends.
        fwrite($idle, self::request('/late'));
        fwrite($served, self::request('/second'));
        $this->guard->end(null);

        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", self::readToEnd($idle));
        self::assertSame('', self::readToEnd($served), 'kept alive: closed unanswered, for its client to send it again');
        self::assertTrue(feof($served));
        self::assertSame(['info: worker exited; answered 1 request(s) not yet started with 503, '
            . 'closed 1 kept-alive connection(s) with a request not yet started, for the client to send again'], $this->context->logs);
    }

    /**
     * A client that sends a request on a reused connection and sees it close before any byte of the answer sends
     * it again on a new connection (RFC 9112 §9.3.1): browsers do, and show a 503 as the page.
     */
    public function testAKeptAliveConnectionsRequestNotYetStartedIsClosedUnansweredForItsClientToSendAgain(): void
    {
        $kept = $this->servedOnce();
        fwrite($kept, "GET /second HTTP/1.1\r\nHost: te");
        $this->runFor(5.0, fn(): bool => $this->core->connections()[1]->isWaitingForHead());

        $this->guard->end(null);

        self::assertSame('', self::readToEnd($kept), 'its request never started: no answer');
        self::assertTrue(feof($kept), 'and closed');
        self::assertSame(['info: worker exited; closed 1 kept-alive connection(s) with a request not yet started, for the client to send again'], $this->context->logs);
        self::assertSame(1, $this->context->served);
    }

    /** A client resends on its own only a request whose method may be sent twice (RFC 9110 §9.2.2): a POST gets the 503. */
    public function testAKeptAliveConnectionsPostNotYetStartedIsStillAnswered503(): void
    {
        $kept = $this->servedOnce();
        fwrite($kept, "POST /second HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nhalf");
        $this->runFor(5.0, fn(): bool => $this->core->connections()[1]->isReadingBody());

        $this->guard->end(null);

        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", self::readToEnd($kept));
        self::assertSame(['info: worker exited; answered 1 request(s) not yet started with 503'], $this->context->logs);
    }

    public function testAKeptAliveConnectionsPostStillInTheSocketIsAnswered503(): void
    {
        $kept = $this->servedOnce();
        fwrite($kept, "POST /second HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi"); // not read by the loop

        $this->guard->end(null);

        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", self::readToEnd($kept), 'the method, peeked in the socket, is a POST');
    }

    public function testAKeptAliveConnectionsQueuedGetIsClosedUnanswered(): void
    {
        $ends = $this->connect($this->core); // the older connection: its request is taken first in a turn
        $kept = $this->servedOnce();
        fwrite($ends, self::request('/ends'));
        fwrite($kept, self::request('/second'));
        $this->runFor(5.0, fn(): bool => \count($this->context->logs) > 0);

        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", self::readToEnd($ends));
        self::assertSame('', self::readToEnd($kept), 'read whole and queued, never started: no answer');
        self::assertTrue(feof($kept));
        self::assertSame(['error: worker exited; answered 1 in-flight request(s) with 500, '
            . 'closed 1 kept-alive connection(s) with a request not yet started, for the client to send again'], $this->context->logs);
    }

    public function testAKeptAliveConnectionsQueuedRequestThatWasSent100ContinueIsAnswered503(): void
    {
        $ends = $this->connect($this->core);
        $kept = $this->servedOnce();
        fwrite($kept, "PUT /second HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        $continue = '';
        $this->runFor(5.0, static function () use ($kept, &$continue): bool {
            $continue .= self::pending($kept);
            return $continue !== '';
        });
        self::assertSame("HTTP/1.1 100 Continue\r\n\r\n", $continue);
        fwrite($ends, self::request('/ends'));
        fwrite($kept, 'body'); // the body is whole: the request is queued behind /ends
        $this->runFor(5.0, fn(): bool => \count($this->context->logs) > 0);

        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", self::readToEnd($ends));
        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", self::readToEnd($kept));
    }

    /** Its client has read a `100 Continue` already: a close would be part of an answer, which it does not resend. */
    public function testAKeptAliveConnectionsRequestThatWasSent100ContinueIsAnswered503(): void
    {
        $kept = $this->servedOnce();
        fwrite($kept, "PUT /second HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        $this->runFor(5.0, fn(): bool => $this->core->connections()[1]->isReadingBody());

        $this->guard->end(null);

        $answer = self::readToEnd($kept);
        self::assertStringStartsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\n", $answer);
    }

    /**
     * With SO_REUSEPORT the connection a client opens again may be hashed to this worker's own listening socket, which
     * nobody accepts from any more: there a request is answered 503, for the client to send again a second later.
     */
    public function testWithAListenerOfItsOwnAKeptAliveConnectionsRequestIsAnswered503(): void
    {
        $guard = new FatalGuard($this->core, static function (): void {}, function (\Closure $function): void {
            $this->atExit[] = $function;
        }, sharedListener: false);
        $kept = $this->servedOnce();
        fwrite($kept, self::request('/second'));

        $guard->end(null);

        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", self::readToEnd($kept));
    }

    public function testARequestQueuedBehindTheOneThatEndedTheProcessIsAnswered503(): void
    {
        $ends = $this->connect($this->core);
        $queued = $this->connect($this->core);
        fwrite($ends, self::request('/ends'));
        fwrite($queued, self::request('/queued'));
        $this->runFor(5.0, fn(): bool => \count($this->context->logs) > 0);

        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", self::readToEnd($ends));
        $answer = self::readToEnd($queued);
        self::assertStringStartsWith("HTTP/1.1 503 Service Unavailable\r\n", $answer, 'read whole, but its handler never started');
        self::assertTrue(feof($queued));
        self::assertSame(['error: worker exited; answered 1 in-flight request(s) with 500, answered 1 request(s) not yet started with 503'], $this->context->logs);
        self::assertSame(0, $this->context->served, 'the queued handler does not run once its connection was answered');
    }

    public function testTheGuardRunsOnce(): void
    {
        $stuck = $this->connect($this->core);
        fwrite($stuck, self::request('/stuck'));
        $this->runFor(5.0, fn(): bool => \count($this->core->running()) === 1);
        $this->guard->end(null);
        $this->guard->end(null);
        self::assertCount(1, $this->context->logs);
    }

    /**
     * A connection that has served one request and is kept alive (the core's connection 1 when it is the first made).
     *
     * @return resource
     */
    private function servedOnce(): mixed
    {
        $kept = $this->connect($this->core);
        fwrite($kept, self::request('/first'));
        $this->servedAll(1);
        self::assertSame(['ok'], self::bodies(self::pending($kept)));
        return $kept;
    }

    private function servedAll(int $count): void
    {
        $this->runFor(5.0, fn(): bool => $this->context->served >= $count);
        self::assertSame($count, $this->context->served);
    }

    /**
     * What the socket holds now, up to the end of the stream if the server closed it.
     *
     * @param resource $client
     */
    private static function readToEnd(mixed $client): string
    {
        $received = '';
        while (\is_string($data = fread($client, 1 << 20)) && $data !== '') {
            $received .= $data;
        }
        return $received;
    }
}

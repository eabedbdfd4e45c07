<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis\Internal;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Redis\ClusterSlot;
use Kiln\Redis\Endpoint;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\Internal\SubscriptionLink;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\SubscriptionKind;
use PHPUnit\Framework\TestCase;

/**
 * A subscribe link against a scripted server on a real socket: the test accepts the link's connections,
 * reads what it writes and answers, as a Cluster node in the middle of a failover or with another slot map would.
 */
final class SubscriptionLinkTest extends TestCase
{
    /** @var resource */
    private mixed $listener;
    private RedisConfig $config;
    /** @var list<array{SubscriptionKind, string}> */
    private array $handedBack = [];
    private int $resubscribed = 0;
    /** @var list<string> */
    private array $messages = [];
    /** @var list<string> what the loop's error handler got (recordLoopErrors()) */
    private array $errors = [];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        self::assertIsResource($listener, $error);
        $this->listener = $listener;
        $this->config = RedisConfig::fromUri('redis://' . stream_socket_get_name($listener, false) . '?timeout=2&connect_timeout=1&health_check=0');
    }

    protected function tearDown(): void
    {
        fclose($this->listener);
    }

    public function testAResubscribeRefusedDuringAFailoverIsHandedBackToBeSubscribedElsewhere(): void
    {
        $this->inLoop(function (): void {
            $link = $this->link();
            $subscribed = async(fn() => $link->add(SubscriptionKind::Shard, 'foo', $this->handler(...)));
            $first = $this->accept();
            self::assertSame("*2\r\n\$10\r\nSSUBSCRIBE\r\n\$3\r\nfoo\r\n", $this->read($first));
            fwrite($first, "*3\r\n\$10\r\nssubscribe\r\n\$3\r\nfoo\r\n:1\r\n");
            $subscribed->await();
            fwrite($first, "*3\r\n\$8\r\nsmessage\r\n\$3\r\nfoo\r\n\$6\r\nbefore\r\n");
            $this->waitFor(fn(): bool => $this->messages !== []);
            fclose($first); // the master goes away
            $second = $this->accept(); // the link reconnects by itself
            self::assertSame("*2\r\n\$10\r\nSSUBSCRIBE\r\n\$3\r\nfoo\r\n", $this->read($second));
            self::assertSame([], $this->handedBack);
            fwrite($second, "-CLUSTERDOWN The cluster is down\r\n");
            $this->waitFor(fn(): bool => $this->handedBack !== []);
            self::assertEquals([[SubscriptionKind::Shard, 'foo']], $this->handedBack, 'not counted as subscribed: its owner must be found again');
            self::assertTrue($link->isEmpty(), 'handed back, the link no longer holds it');
            delay(0.05);
            self::assertSame(0, $this->resubscribed, 'nothing was subscribed again here');
            $link->close();
        });
        self::assertSame(['before'], $this->messages);
    }

    public function testAMovedAnswerNamesTheSlotItConcerns(): void
    {
        $this->inLoop(function (): void {
            $link = $this->link();
            $first = async(fn() => $link->add(SubscriptionKind::Shard, 'foo', $this->handler(...)));
            $connection = $this->accept();
            $this->read($connection);
            fwrite($connection, "*3\r\n\$10\r\nssubscribe\r\n\$3\r\nfoo\r\n:1\r\n");
            $first->await();
            $second = async(fn() => $link->add(SubscriptionKind::Shard, 'bar', $this->handler(...)));
            $this->read($connection);
            $third = async(fn() => $link->add(SubscriptionKind::Shard, '{foo}x', $this->handler(...)));
            $this->read($connection);
            $started = microtime(true);
            // bar's slot moved; {foo}x shares foo's slot, which is still here
            fwrite($connection, '-MOVED ' . ClusterSlot::of('bar') . " 127.0.0.1:1\r\n*3\r\n\$10\r\nssubscribe\r\n\$6\r\n{foo}x\r\n:2\r\n");
            try {
                $second->await();
                self::fail('the refused subscribe returned');
            } catch (ErrorReplyException $e) {
                self::assertSame('MOVED', $e->code());
                self::assertLessThan(1.0, microtime(true) - $started, 'answered at once, not after the command timeout');
            }
            $third->await();
            self::assertSame([], $this->handedBack, 'a subscribe someone awaits fails to its caller instead');
            $link->close();
        });
    }

    public function testAnErrorAnswersTheCommandWrittenFirstAndFailsItAtOnce(): void
    {
        $this->inLoop(function (): void {
            $link = $this->link();
            $first = async(fn() => $link->add(SubscriptionKind::Shard, 'a', $this->handler(...)));
            $connection = $this->accept();
            $this->read($connection);
            fwrite($connection, "*3\r\n\$10\r\nssubscribe\r\n\$1\r\na\r\n:1\r\n");
            $first->await();
            $channel = async(fn() => $link->add(SubscriptionKind::Channel, 'b', $this->handler(...)));
            $this->read($connection);
            $shard = async(fn() => $link->add(SubscriptionKind::Shard, 'c', $this->handler(...)));
            $this->read($connection);
            // The NOPERM answers SUBSCRIBE b, which was written first; c is confirmed after it.
            $started = microtime(true);
            fwrite($connection, "-NOPERM this user has no permissions to access the 'b' channel\r\n*3\r\n\$10\r\nssubscribe\r\n\$1\r\nc\r\n:2\r\n");
            $shard->await();
            self::assertSame([], $this->handedBack);
            try {
                $channel->await();
                self::fail('the refused subscribe returned');
            } catch (ErrorReplyException $e) {
                self::assertSame('NOPERM', $e->code());
                self::assertLessThan(1.0, microtime(true) - $started, 'answered at once, not after the command timeout');
            }
            $link->close();
        });
    }

    public function testAResubscriptionIsAnnouncedOnceTheServerConfirmedIt(): void
    {
        $this->recordLoopErrors();
        $this->inLoop(function (): void {
            $link = $this->link();
            $first = $this->subscribeToNews($link);
            $subscribed = async(fn() => $link->add(SubscriptionKind::Pattern, 'room.*', $this->handler(...)));
            $this->read($first);
            fwrite($first, "*3\r\n\$10\r\npsubscribe\r\n\$6\r\nroom.*\r\n:2\r\n");
            $subscribed->await();
            fclose($first);
            $second = $this->accept();
            self::assertSame("*2\r\n\$9\r\nSUBSCRIBE\r\n\$4\r\nnews\r\n*2\r\n\$10\r\nPSUBSCRIBE\r\n\$6\r\nroom.*\r\n", $this->read($second, 2));
            delay(0.1);
            self::assertSame(0, $this->resubscribed, 'not before the server confirmed: a message published now would not arrive');
            fwrite($second, "*3\r\n\$9\r\nsubscribe\r\n\$4\r\nnews\r\n:1\r\n");
            delay(0.05);
            self::assertSame(0, $this->resubscribed, 'the pattern is not confirmed yet');
            // Meanwhile the user lost the right to the pattern (an ACL change): refused, reported, forgotten.
            fwrite($second, "-NOPERM this user has no permissions to access the 'room.*' channel\r\n");
            $this->waitFor(fn(): bool => $this->resubscribed === 1);
            fwrite($second, "*3\r\n\$7\r\nmessage\r\n\$4\r\nnews\r\n\$5\r\nafter\r\n");
            $this->waitFor(fn(): bool => $this->messages !== []);
            $link->close();
        });
        self::assertSame(['after'], $this->messages);
        self::assertCount(1, $this->errors);
        self::assertStringContainsString('refused to psubscribe to room.* again', $this->errors[0]);
        self::assertStringContainsString('NOPERM', $this->errors[0]);
    }

    public function testAnErrorThatRefusesNoChannelKeepsTheSubscriptionsForTheNextConnection(): void
    {
        $this->recordLoopErrors();
        $this->inLoop(function (): void {
            $link = $this->link();
            fclose($this->subscribeToNews($link));
            $second = $this->accept();
            $this->read($second);
            fwrite($second, "-ERR max number of clients reached\r\n"); // Redis then closes the connection
            fclose($second);
            $third = $this->accept();
            self::assertSame("*2\r\n\$9\r\nSUBSCRIBE\r\n\$4\r\nnews\r\n", $this->read($third), 'still subscribed, and asked again');
            self::assertSame(0, $this->resubscribed);
            fwrite($third, "*3\r\n\$9\r\nsubscribe\r\n\$4\r\nnews\r\n:1\r\n");
            $this->waitFor(fn(): bool => $this->resubscribed === 1);
            $link->close();
        });
        self::assertSame([], $this->errors, 'nothing was refused');
    }

    /** What the loop's error handler is given from now on goes to $errors. */
    private function recordLoopErrors(): void
    {
        Loop::setErrorHandler(function (\Throwable $e): void {
            $this->errors[] = $e->getMessage();
        });
    }

    /**
     * Subscribes the link to the channel `news` and confirms it on the first connection it makes.
     *
     * @return resource that connection
     */
    private function subscribeToNews(SubscriptionLink $link): mixed
    {
        $subscribed = async(fn() => $link->add(SubscriptionKind::Channel, 'news', $this->handler(...)));
        $connection = $this->accept();
        $this->read($connection);
        fwrite($connection, "*3\r\n\$9\r\nsubscribe\r\n\$4\r\nnews\r\n:1\r\n");
        $subscribed->await();

        return $connection;
    }

    private function link(): SubscriptionLink
    {
        $endpoint = Endpoint::parse((string) stream_socket_get_name($this->listener, false));

        return new SubscriptionLink(
            $this->config,
            static fn(): Endpoint => $endpoint,
            function (): void {
                $this->resubscribed++;
            },
            function (SubscriptionKind $kind, string $name): void {
                $this->handedBack[] = [$kind, $name];
            },
        );
    }

    private function handler(string $message): void
    {
        $this->messages[] = $message;
    }

    /** @return resource */
    private function accept(): mixed
    {
        $deadline = microtime(true) + 5.0;
        stream_set_blocking($this->listener, false);
        while (($connection = @stream_socket_accept($this->listener, 0)) === false) {
            self::assertLessThan($deadline, microtime(true), 'the link did not connect');
            delay(0.005);
        }
        stream_set_blocking($connection, false);

        return $connection;
    }

    /**
     * Reads $commands commands of two words each.
     *
     * @param resource $connection
     */
    private function read(mixed $connection, int $commands = 1): string
    {
        $deadline = microtime(true) + 5.0;
        $data = '';
        while (!str_ends_with($data, "\r\n") || substr_count($data, "\r\n") < 5 * $commands) {
            self::assertLessThan($deadline, microtime(true), "the link wrote only: $data");
            delay(0.005);
            $data .= (string) fread($connection, 65536);
        }

        return $data;
    }

    private function waitFor(\Closure $condition): void
    {
        $deadline = microtime(true) + 5.0;
        while (!$condition()) {
            self::assertLessThan($deadline, microtime(true), 'timed out');
            delay(0.005);
        }
    }

    private function inLoop(\Closure $body): void
    {
        async($body)->await(new TimeoutCancellation(20.0));
    }
}

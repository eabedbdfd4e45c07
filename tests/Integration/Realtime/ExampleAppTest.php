<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Realtime;

use Kiln\Tests\Support\ClientScript;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/**
 * examples/realtime/app.php, the endpoints the README and docs/realtime.md name, with 2 workers: driven by
 * Debian's python3-websockets, raw sockets, and the example page in headless Chromium.
 */
final class ExampleAppTest extends TestCase
{
    private const APP = __DIR__ . '/../../../examples/realtime/app.php';

    private const DRIVER = __DIR__ . '/../../Fixtures/browser/drive_page.py';

    private static ?KilnProcess $kiln = null;

    public static function setUpBeforeClass(): void
    {
        self::$kiln = KilnProcess::start(self::APP, ['--workers=2']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$kiln?->stop();
        self::$kiln = null;
    }

    private static function kiln(): KilnProcess
    {
        \assert(self::$kiln !== null);
        return self::$kiln;
    }

    public function testTheEchoAnswersTextAsTextAndBinaryAsBinary(): void
    {
        $url = 'ws://' . self::kiln()->host() . ':' . self::kiln()->port() . '/ws/echo';
        $result = ClientScript::python('echo', $url)->next();
        self::assertSame('héllo wörld', $result['text']);
        self::assertTrue($result['text_is_str']);
        self::assertSame(bin2hex(implode('', array_map('chr', range(0, 255)))), $result['binary']);
        self::assertTrue($result['binary_is_bytes']);
        self::assertSame('fragmented ✓', $result['fragmented']);
        self::assertTrue($result['pong']);
    }

    public function testAPublishReachesTheTopicsStreamsAndTheRoomOfTheSameNameAndMissedEventsReplay(): void
    {
        $kiln = self::kiln();
        $topic = 'news-' . bin2hex(random_bytes(3));
        $streams = [];
        for ($i = 0; $i < 4; $i++) { // with 2 workers, four streams land on both of them in practice
            $streams[] = new SseClient($kiln->host(), $kiln->port(), "/events/$topic");
        }
        $member = new RawWebSocket($kiln, "/ws/rooms/$topic");
        foreach ($streams as $stream) {
            self::assertSame(200, $stream->status);
            self::assertStringStartsWith('text/event-stream', $stream->headers['content-type'] ?? '');
            self::assertSame('no-cache', $stream->headers['cache-control'] ?? '');
        }

        [$status, $body] = SseClient::post($kiln->host(), $kiln->port(), "/publish/$topic", "first line\nsecond line");
        self::assertSame(200, $status, $body);
        $first = json_decode($body, true, flags: JSON_THROW_ON_ERROR);
        self::assertIsArray($first);
        foreach ($streams as $stream) {
            self::assertTrue($stream->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 1));
            self::assertSame([['event' => 'message', 'data' => "first line\nsecond line", 'id' => $first['id']]], $stream->parser->events());
        }
        $frame = $member->readFrame();
        self::assertSame(['opcode' => 1, 'fin' => true, 'payload' => "first line\nsecond line"], $frame);

        // A client that was away reconnects with the last id it saw and gets only what it missed.
        [, $secondBody] = SseClient::post($kiln->host(), $kiln->port(), "/publish/$topic", 'second');
        $second = json_decode($secondBody, true, flags: JSON_THROW_ON_ERROR);
        self::assertIsArray($second);
        self::assertIsString($first['id']);
        $back = new SseClient($kiln->host(), $kiln->port(), "/events/$topic", ['Last-Event-ID' => $first['id']]);
        self::assertTrue($back->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 1));
        self::assertSame([['event' => 'message', 'data' => 'second', 'id' => $second['id']]], $back->parser->events());
    }

    public function testAPublishedBodyThatIsNotUtf8IsRefusedWith400(): void
    {
        [$status] = SseClient::post(self::kiln()->host(), self::kiln()->port(), '/publish/lobby', "\xff\xfe");
        self::assertSame(400, $status);
    }

    public function testTheExamplePageChatsThroughARoomAndShowsPublishedEventsInChromium(): void
    {
        $kiln = self::kiln();
        $room = 'browser-' . bin2hex(random_bytes(3));
        $member = new RawWebSocket($kiln, "/ws/rooms/$room");
        $join = "document.getElementById('room').value = '$room'; document.getElementById('join').click(); true";
        $has = static fn(string $list, string $text): string
            => "[...document.querySelectorAll('#$list li')].some(li => li.textContent === '$text')";
        $steps = [
            ['wait' => "document.getElementById('ws-state').textContent === 'open'", 'timeout' => 20],
            ['eval' => $join],
            ['wait' => "document.getElementById('ws-state').textContent === 'open' && document.getElementById('sse-state').textContent === 'open' && document.getElementById('topic-name').textContent === '$room'", 'timeout' => 20],
            ['eval' => "document.getElementById('chat-input').value = 'hello from chromium'; document.getElementById('chat-form').requestSubmit(); true"],
            ['wait' => $has('chat-log', 'hello from chromium'), 'timeout' => 10],
            ['eval' => "document.getElementById('publish-input').value = 'news for the room'; document.getElementById('publish-form').requestSubmit(); true"],
            ['wait' => $has('events-log', 'news for the room') . ' && ' . $has('chat-log', 'news for the room')
                . " && document.getElementById('sse-last-id').textContent !== 'none'", 'timeout' => 10],
        ];
        $stepsFile = (string) tempnam(sys_get_temp_dir(), 'kiln-steps-');
        $shot = sys_get_temp_dir() . '/kiln-realtime-page.png';
        file_put_contents($stepsFile, json_encode($steps, JSON_THROW_ON_ERROR));
        $driver = new ClientScript([ClientScript::PYTHON, self::DRIVER, $kiln->baseUrl() . '/', $shot, $stepsFile]);
        try {
            $result = $driver->next(120.0);
        } finally {
            @unlink($stepsFile);
        }
        self::assertTrue($result['ok'], 'the page flow failed at ' . json_encode($result['failed']) . ': ' . json_encode($result['detail']) . "\n" . $driver->errors());
        // An independent member of the same room saw the browser's message and the published one.
        self::assertSame('hello from chromium', $member->readFrame()['payload'] ?? null);
        self::assertSame('news for the room', $member->readFrame()['payload'] ?? null);
        self::assertFileExists($shot);
    }
}

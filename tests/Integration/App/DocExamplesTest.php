<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * The app examples of the docs, served as written: each is the first PHP block of its section, with only the
 * app's own classes and functions it says it stands for defined after it.
 */
final class DocExamplesTest extends TestCase
{
    private const DOCS = __DIR__ . '/../../../docs/';

    private ?KilnProcess $server = null;

    private string $file = '';

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        if ($this->file !== '') {
            @unlink($this->file);
        }
    }

    public function testTheFirstExampleOfBackgroundWorkServes(): void
    {
        $this->serve('background.md', null, <<<'PHP'
            class Metrics { public static function flush(): void {} }
            class Sessions { public static function gc(): void {} }
            class Images { public static function thumbnail(string $path, int $width): string { return "$path@$width"; } }
            class Mailer { public static function sendPending(): void {} }
            PHP, ['--task-workers=1']);

        $response = HttpClient::get($this->url('/thumb'), [], 10.0);
        self::assertSame(200, $response['status'], $response['body']);
        self::assertSame('{"file":"/srv/a.jpg@300"}', $response['body']);
    }

    public function testTheAppCodeExampleOfTheNodeBusServes(): void
    {
        $this->serve('node-bus.md', '## In app code', '');
        \assert($this->server !== null);

        $client = RawClient::to($this->server);
        $client->send("POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\no-1");
        $response = $client->readResponse();
        $client->close();
        self::assertSame(200, $response['status'] ?? null);
        self::assertSame('{"queued":true}', $response['body'] ?? null);
    }

    public function testTheFirstExampleOfSharedStateServes(): void
    {
        $this->serve('state.md', null, <<<'PHP'
            function build_report(): array { return ['built' => true]; }
            function save_report(mixed $report): void {}
            PHP);

        $response = HttpClient::get($this->url('/dashboard'));
        self::assertSame(200, $response['status'], $response['body']);
        self::assertSame('{"user":null,"hits":1,"report":{"built":true}}', $response['body']);
    }

    /** @param list<string> $args */
    private function serve(string $doc, ?string $section, string $appOwn, array $args = []): void
    {
        $text = (string) file_get_contents(self::DOCS . $doc);
        if ($section !== null) {
            $at = strpos($text, $section);
            self::assertNotFalse($at, "$doc has a section $section");
            $text = substr($text, $at);
        }
        self::assertSame(1, preg_match('/```php\n(.*?)```/s', $text, $m), "$doc has a PHP example");
        $this->file = sys_get_temp_dir() . '/kiln-doc-example-' . bin2hex(random_bytes(4)) . '.php';
        // Functions and classes declared at the top level exist before the file's first line runs.
        file_put_contents($this->file, "<?php\n" . $m[1] . "\n" . $appOwn . "\n");
        try {
            $this->server = KilnProcess::start($this->file, ['--workers=1', ...$args], [], 20.0);
        } catch (\RuntimeException $e) {
            self::fail("the example of $doc does not serve as written: " . $e->getMessage());
        }
    }

    private function url(string $path): string
    {
        \assert($this->server !== null);
        return $this->server->baseUrl() . $path;
    }
}

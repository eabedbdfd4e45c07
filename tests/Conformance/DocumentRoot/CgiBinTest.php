<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\DocumentRoot;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Unit\Site\SiteTree;
use PHPUnit\Framework\TestCase;

/** `kiln serve ROOT --cgi-bin=DIR`: /cgi-bin/ runs DIR's executables as CGI, whatever their extension. */
final class CgiBinTest extends TestCase
{
    private static string $base = '';

    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$base = SiteTree::create();
        $env = "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\nStatus: 201 Made\\r\\n\\r\\n'\n"
            . "echo \"\$SCRIPT_NAME|\$PATH_INFO|\$QUERY_STRING|\$DOCUMENT_ROOT|\$GATEWAY_INTERFACE\"\n";
        file_put_contents(self::$base . '/cgi/env.py', $env);
        chmod(self::$base . '/cgi/env.py', 0o755);
        self::$server = KilnProcess::start(self::$base . '/root', ['--workers=1', '--cgi-bin=' . self::$base . '/cgi', '--fastcgi-map=.py=127.0.0.1:1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        SiteTree::remove(self::$base);
    }

    public function testACgiScriptRunsWithItsMetaVariables(): void
    {
        $response = $this->get('/cgi-bin/env.py/a/b?x=1');
        self::assertSame(201, $response['status'], $response['body']);
        self::assertSame('/cgi-bin/env.py|/a/b|x=1|' . self::$base . "/root|CGI/1.1\n", $response['body']);
    }

    public function testWhatIsNotARunnableScriptIsRefused(): void
    {
        self::assertSame(403, $this->get('/cgi-bin/noexec.py')['status']);
        self::assertSame(404, $this->get('/cgi-bin/missing')['status']);
        self::assertSame(404, $this->get('/cgi-bin/link-out')['status']);
        self::assertSame(403, $this->get('/cgi-bin/')['status']);
        self::assertStringNotContainsString(SiteTree::SECRET, $this->get('/cgi-bin/link-out')['body']);
    }

    public function testAMappedExtensionOutsideCgiBinGoesToItsUpstream(): void
    {
        self::assertSame(502, $this->get('/tool.py')['status'], 'nothing listens on 127.0.0.1:1');
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string} */
    private function get(string $target): array
    {
        self::assertNotNull(self::$server);
        $client = RawClient::to(self::$server);
        $client->send("GET $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        return $response;
    }
}

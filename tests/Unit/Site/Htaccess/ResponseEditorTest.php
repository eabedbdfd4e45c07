<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Http\Response;
use Kiln\Site\Htaccess\ResponseEditor;
use Kiln\Site\Htaccess\Settings;
use PHPUnit\Framework\TestCase;

final class ResponseEditorTest extends TestCase
{
    private static function settings(string $htaccess): Settings
    {
        $site = Fixtures::rules(['f.txt' => 'x', '.htaccess' => $htaccess]);
        $settings = $site->forRequest(Fixtures::request('/f.txt'))->settings;
        self::assertSame([], array_map('strval', $site->takeWarnings()));
        return $settings;
    }

    public function testHeadersAreEditedOnAServedFile(): void
    {
        $response = Response::text('x');
        $response->setHeader('X-Powered-By', 'PHP');
        $response->setHeader('Vary', 'Cookie');
        ResponseEditor::apply(self::settings("Header set X-Frame-Options DENY\nHeader unset x-powered-by\nHeader append vary Accept-Encoding"), $response);
        self::assertSame('DENY', $response->header('X-Frame-Options'));
        self::assertFalse($response->hasHeader('X-Powered-By'));
        self::assertSame('Cookie, Accept-Encoding', $response->header('Vary'));
    }

    public function testOnlyAlwaysHeadersGoOnKilnErrors(): void
    {
        $response = Response::text('403 Forbidden', 403);
        ResponseEditor::apply(self::settings("Header set A 1\nHeader always set B 2\nExpiresActive On\nExpiresDefault A60"), $response, kilnError: true);
        self::assertFalse($response->hasHeader('A'));
        self::assertSame('2', $response->header('B'));
        self::assertFalse($response->hasHeader('Expires'));
    }

    public function testAddTypeAndTypeFlagSetTheTypeOfStaticFiles(): void
    {
        $settings = self::settings("AddType application/manifest+json .webmanifest\nAddDefaultCharset utf-8");
        $response = Response::text('{}');
        ResponseEditor::apply($settings, $response, fileName: '/srv/www/site.webmanifest');
        self::assertSame('application/manifest+json', $response->header('Content-Type'));
        $text = new Response(200, ['Content-Type' => 'text/plain'], 'x');
        ResponseEditor::apply($settings, $text, fileName: '/srv/www/a.txt');
        self::assertSame('text/plain; charset=utf-8', $text->header('Content-Type'));
        $typed = Response::text('x');
        ResponseEditor::apply($settings, $typed, fileName: '/srv/www/a.dat', type: 'application/json');
        self::assertSame('application/json', $typed->header('Content-Type'));
    }

    public function testAddDefaultCharsetReplacesKilnsUtf8OnStaticTextFilesAsApacheHasNone(): void
    {
        $cases = [
            ['AddDefaultCharset ISO-8859-1', 'a.html', 'text/html; charset=utf-8', 'text/html; charset=ISO-8859-1'],
            ['AddDefaultCharset On', 'a.txt', 'text/plain; charset=utf-8', 'text/plain; charset=iso-8859-1'],
            ['AddDefaultCharset Off', 'a.html', 'text/html; charset=utf-8', 'text/html'],
            ['AddDefaultCharset ISO-8859-1', 'a.css', 'text/css; charset=utf-8', 'text/css; charset=utf-8'],
            ['Header set X 1', 'a.html', 'text/html; charset=utf-8', 'text/html; charset=utf-8'],
        ];
        foreach ($cases as [$htaccess, $file, $given, $expected]) {
            $response = new Response(200, ['Content-Type' => $given], 'x');
            ResponseEditor::apply(self::settings($htaccess), $response, fileName: "/srv/www/$file");
            self::assertSame($expected, $response->header('Content-Type'), "$htaccess, $file");
        }
        $script = new Response(200, ['Content-Type' => 'text/html; charset=UTF-8'], 'x');
        ResponseEditor::apply(self::settings('AddDefaultCharset Off'), $script);
        self::assertSame('text/html; charset=UTF-8', $script->header('Content-Type'), 'a script\'s own charset stays');
        $error = new Response(404, ['Content-Type' => 'text/html; charset=utf-8'], 'x');
        ResponseEditor::apply(self::settings('AddDefaultCharset Off'), $error, kilnError: true, fileName: '/srv/www/a.html');
        self::assertSame('text/html; charset=utf-8', $error->header('Content-Type'), 'an error Kiln made keeps its own');
    }

    public function testExpiresAddsExpiresAndMaxAgeUnlessTheScriptSetExpires(): void
    {
        $settings = self::settings("ExpiresActive On\nExpiresByType image/png \"access plus 1 hour\"");
        $response = new Response(200, ['Content-Type' => 'image/png', 'Cache-Control' => 'public'], 'png');
        ResponseEditor::apply($settings, $response, now: 1_700_000_000);
        self::assertSame('Tue, 14 Nov 2023 23:13:20 GMT', $response->header('Expires'));
        self::assertSame('public, max-age=3600', $response->header('Cache-Control'));
        $own = new Response(200, ['Content-Type' => 'image/png', 'Expires' => '0'], 'png');
        ResponseEditor::apply($settings, $own, now: 1_700_000_000);
        self::assertSame('0', $own->header('Expires'));
        self::assertFalse($own->hasHeader('Cache-Control'));
        $notFound = new Response(404, ['Content-Type' => 'image/png'], '');
        ResponseEditor::apply($settings, $notFound, now: 1_700_000_000);
        self::assertFalse($notFound->hasHeader('Expires'), 'no expiry on errors');
    }

    public function testAHeaderValueWithALineBreakIsDropped(): void
    {
        $response = Response::text('x');
        ResponseEditor::apply(self::settings('Header set X-Echo "%{V}e"'), $response, env: ['V' => "a\r\nSet-Cookie: x=1"]);
        self::assertFalse($response->hasHeader('X-Echo'));
        self::assertFalse($response->hasHeader('Set-Cookie'));
    }
}

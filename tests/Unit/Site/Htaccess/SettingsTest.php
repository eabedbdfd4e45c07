<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\Expiry;
use Kiln\Site\Htaccess\HeaderAction;
use Kiln\Site\Htaccess\Settings;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Directives that change the response or the script: their settings as the document root reads them. */
final class SettingsTest extends TestCase
{
    /** @param array<string, string> $files */
    private static function settings(string $htaccess, string $target = '/f.txt', array $files = []): Settings
    {
        $site = Fixtures::rules($files + ['f.txt' => 'x', '.htaccess' => $htaccess]);
        $settings = $site->forRequest(Fixtures::request($target))->settings;
        self::assertSame([], array_map('strval', $site->takeWarnings()));
        return $settings;
    }

    /**
     * @param list<HeaderAction> $actions
     * @param array<string, list<string>> $headers lower-case name => values
     * @return array<string, list<string>>
     */
    private static function applyHeaders(array $actions, array $headers): array
    {
        foreach ($actions as $action) {
            $name = strtolower($action->name);
            $values = $action->apply($headers[$name] ?? [], ['V' => 'v1']);
            if ($values === []) {
                unset($headers[$name]);
            } else {
                $headers[$name] = $values;
            }
        }
        return $headers;
    }

    public function testHeaderActions(): void
    {
        $settings = self::settings(implode("\n", [
            'Header set X-Frame-Options SAMEORIGIN',
            'Header always set X-Content-Type-Options "nosniff"',
            'Header unset X-Powered-By',
            'Header append Vary Accept-Encoding',
            'Header merge Cache-Control public',
            'Header merge Cache-Control public',
            'Header add Link "</a.css>; rel=preload"',
            'Header setifempty X-Empty yes',
            'Header set X-Env "%{V}e and 100%%"',
            'Header set X-Cond on env=V',
            'Header set X-Not on env=!V',
        ]));
        $before = ['x-powered-by' => ['PHP'], 'vary' => ['Cookie'], 'cache-control' => ['max-age=60'], 'link' => ['</b.js>']];
        self::assertSame([
            'vary' => ['Cookie, Accept-Encoding'],
            'cache-control' => ['max-age=60, public'],
            'link' => ['</b.js>', '</a.css>; rel=preload'],
            'x-frame-options' => ['SAMEORIGIN'],
            'x-content-type-options' => ['nosniff'],
            'x-empty' => ['yes'],
            'x-env' => ['v1 and 100%'],
            'x-cond' => ['on'],
        ], self::applyHeaders($settings->headerActions(false, ['V' => '1']), $before));
        $always = $settings->headerActions(true);
        self::assertSame(['X-Content-Type-Options'], array_map(static fn(HeaderAction $a): string => $a->name, $always), 'only `always` on Kiln-made errors');
    }

    public function testHeadersFromParentAndChildBothApply(): void
    {
        $site = Fixtures::rules(['.htaccess' => 'Header set A 1', 'sub/.htaccess' => 'Header set B 2', 'sub/f.txt' => 'x']);
        $actions = $site->forRequest(Fixtures::request('/sub/f.txt'))->settings->headerActions(false);
        self::assertSame(['A', 'B'], array_map(static fn(HeaderAction $a): string => $a->name, $actions));
    }

    /** @return iterable<string, array{string, int, ?int, int}> */
    public static function expiries(): iterable
    {
        yield 'access plus 1 month' => ['access plus 1 month', 1000, null, 1000 + 30 * 86400];
        yield 'now plus several units' => ['now plus 1 day 2 hours 3 minutes 4 seconds', 0, null, 86400 + 7200 + 180 + 4];
        yield 'singular and plural' => ['access plus 1 years', 0, null, 365 * 86400];
        yield 'weeks' => ['access plus 2 weeks', 0, null, 14 * 86400];
        yield 'modification' => ['modification plus 1 hour', 5000, 100, 3700];
        yield 'short A' => ['A3600', 10, null, 3610];
        yield 'short M' => ['M60', 10, 5, 65];
    }

    #[DataProvider('expiries')]
    public function testExpirySyntax(string $text, int $now, ?int $modified, int $expected): void
    {
        self::assertSame($expected, Expiry::parse($text)->at($now, $modified));
    }

    public function testModificationExpiryWithoutAFileTimeGivesNone(): void
    {
        self::assertNull(Expiry::parse('modification plus 1 day')->at(100, null));
    }

    public function testExpiresByTypeAndDefault(): void
    {
        $settings = self::settings("ExpiresActive On\nExpiresByType image/png \"access plus 1 hour\"\nExpiresByType text/* A60\nExpiresDefault \"access plus 10 seconds\"");
        self::assertSame(3600, $settings->expiresAt('image/png', 0, null));
        self::assertSame(60, $settings->expiresAt('text/css; charset=utf-8', 0, null));
        self::assertSame(10, $settings->expiresAt('application/json', 0, null));
        self::assertNull(self::settings("ExpiresActive Off\nExpiresDefault A10")->expiresAt('text/html', 0, null));
        self::assertNull(self::settings('ExpiresDefault A10')->expiresAt('text/html', 0, null), 'off unless ExpiresActive On');
    }

    public function testAddTypeAndDefaultCharset(): void
    {
        $settings = self::settings("AddType application/x-font-woff2 .woff2 woff\nAddType text/plain .LOG\nAddDefaultCharset UTF-8");
        self::assertSame('application/x-font-woff2', $settings->contentTypeFor('a.woff2'));
        self::assertSame('application/x-font-woff2', $settings->contentTypeFor('a.WOFF'));
        self::assertSame('text/plain', $settings->contentTypeFor('debug.log'));
        self::assertNull($settings->contentTypeFor('a.css'));
        self::assertSame('UTF-8', $settings->charsetFor('text/html'));
        self::assertNull($settings->charsetFor('text/html; charset=iso-8859-1'));
        self::assertNull($settings->charsetFor('image/png'));
        self::assertSame('iso-8859-1', self::settings('AddDefaultCharset On')->charsetFor('text/plain'));
        self::assertNull(self::settings('AddDefaultCharset Off')->charsetFor('text/plain'));
    }

    public function testErrorDocuments(): void
    {
        $site = Fixtures::rules(['.htaccess' => "ErrorDocument 404 /errors/404.php\nErrorDocument 403 \"Go away\"\nErrorDocument 500 https://status.example.com/", 'sub/.htaccess' => "ErrorDocument 404 default\n", 'sub/f' => 'x', 'f' => 'x']);
        $settings = $site->forRequest(Fixtures::request('/f'))->settings;
        self::assertSame('/errors/404.php', $settings->errorDocument(404));
        self::assertSame('Go away', $settings->errorDocument(403));
        self::assertSame('https://status.example.com/', $settings->errorDocument(500));
        self::assertNull($settings->errorDocument(410));
        self::assertNull($site->forRequest(Fixtures::request('/sub/f'))->settings->errorDocument(404), '`default` restores Kiln\'s page');
    }

    public function testOptionsDirectoryIndexPhpIniAndEnv(): void
    {
        $site = Fixtures::rules([
            '.htaccess' => "Options -Indexes +FollowSymLinks -MultiViews\nDirectoryIndex index.html index.php\nphp_value upload_max_filesize 64M\nphp_flag display_errors Off\nphp_value auto_prepend_file none\nSetEnv APP_ENV production\nSetEnv EMPTY",
            'sub/.htaccess' => "DirectoryIndex disabled\nphp_flag display_errors on\nSetEnv APP_ENV staging\nUnsetEnv EMPTY",
            'sub/f' => 'x',
        ]);
        $root = $site->forRequest(Fixtures::request('/'));
        self::assertFalse($root->settings->indexes);
        self::assertSame(['index.html', 'index.php'], $root->settings->directoryIndex);
        self::assertSame(['upload_max_filesize' => '64M', 'display_errors' => '0', 'auto_prepend_file' => ''], $root->settings->phpIni);
        self::assertSame(['APP_ENV' => 'production', 'EMPTY' => ''], $root->env);
        $sub = $site->forRequest(Fixtures::request('/sub/f'));
        self::assertSame([], $sub->settings->directoryIndex);
        self::assertSame('1', $sub->settings->phpIni['display_errors']);
        self::assertSame(['APP_ENV' => 'staging'], $sub->env);
        self::assertSame([], array_map('strval', $site->takeWarnings()));
    }

    public function testFilesSectionsCarryResponseSettings(): void
    {
        $settings = self::settings("<FilesMatch \"\\.(txt)$\">\nHeader set X-Txt 1\nphp_value memory_limit 1G\n</FilesMatch>");
        self::assertCount(1, $settings->headerActions(false));
        self::assertSame(['memory_limit' => '1G'], $settings->phpIni);
        self::assertSame([], self::settings("<Files other>\nHeader set X 1\n</Files>")->headerActions(false));
    }
}

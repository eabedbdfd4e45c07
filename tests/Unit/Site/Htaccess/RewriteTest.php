<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** mod_rewrite in .htaccess, one directive or flag at a time. */
final class RewriteTest extends TestCase
{
    private const FILES = ['index.php' => '<?php', 'app.php' => '<?php', 'new/page.html' => 'x', 'sub/index.php' => '<?php', 'empty.txt' => ''];

    /**
     * Rules (in the root .htaccess, after RewriteEngine On), a request, and the outcome.
     *
     * @return iterable<string, array{string, string, string}>
     */
    public static function rules(): iterable
    {
        yield 'the per-dir prefix is stripped before matching' => ['RewriteRule ^old/(.*)$ new/$1', '/old/page.html', 'serve /new/page.html'];
        yield 'a leading slash in the pattern never matches' => ['RewriteRule ^/old/(.*)$ new/$1', '/old/page.html', 'serve /old/page.html'];
        yield 'relative substitution gets the directory' => ['RewriteRule ^a$ app.php', '/a', 'serve /app.php'];
        yield 'RewriteBase replaces the directory' => ["RewriteBase /base/\nRewriteRule ^a$ app.php", '/a', 'serve /base/app.php'];
        yield 'absolute substitution is taken as is' => ["RewriteBase /base/\nRewriteRule ^a$ /app.php", '/a', 'serve /app.php'];
        yield 'dash keeps the path' => ['RewriteRule ^app\.php$ - [E=SEEN:1]', '/app.php?x=1', 'serve /app.php?x=1'];
        yield 'query in substitution replaces the query' => ['RewriteRule ^a$ app.php?b=2', '/a?x=1', 'serve /app.php?b=2'];
        yield 'QSA appends the old query' => ['RewriteRule ^a$ app.php?b=2 [QSA]', '/a?x=1', 'serve /app.php?b=2&x=1'];
        yield 'no query in substitution keeps the query' => ['RewriteRule ^a$ app.php', '/a?x=1', 'serve /app.php?x=1'];
        yield 'a lone ? drops the query' => ['RewriteRule ^a$ app.php?', '/a?x=1', 'serve /app.php'];
        yield 'QSD drops the query' => ['RewriteRule ^a$ app.php [QSD]', '/a?x=1', 'serve /app.php'];
        yield 'QSD keeps the new query' => ['RewriteRule ^a$ app.php?b=2 [QSD]', '/a?x=1', 'serve /app.php?b=2'];
        yield 'NC matches any case' => ['RewriteRule ^APP$ app.php [NC]', '/aPp', 'serve /app.php'];
        yield 'without NC case matters' => ['RewriteRule ^APP$ app.php', '/app', 'serve /app'];
        yield 'negated pattern' => ['RewriteRule !\.(css|js)$ app.php [L]', '/x.html', 'serve /app.php'];
        yield 'negated pattern not taken' => ['RewriteRule !\.(css|js)$ app.php [L]', '/x.css', 'serve /x.css'];
        yield 'F refuses' => ['RewriteRule ^secret - [F]', '/secret/x', 'refuse 403'];
        yield 'G is gone' => ['RewriteRule ^old - [G]', '/old', 'refuse 410'];
        yield 'R=4xx refuses with that status' => ['RewriteRule ^x - [R=404]', '/x', 'refuse 404'];
        yield 'R defaults to 302 with a full URL' => ['RewriteRule ^a$ /app.php [R]', '/a', 'redirect 302 http://example.com/app.php'];
        yield 'R=301 with a relative substitution' => ['RewriteRule ^a$ app.php [R=301,L]', '/a?q=1', 'redirect 301 http://example.com/app.php?q=1'];
        yield 'R=permanent' => ['RewriteRule ^a$ /b [R=permanent]', '/a', 'redirect 301 http://example.com/b'];
        foreach ([303, 307, 308] as $code) {
            yield "R=$code" => ["RewriteRule ^a$ /b [R=$code]", '/a', "redirect $code http://example.com/b"];
        }
        yield 'redirect escapes the path' => ['RewriteRule ^a/(.*)$ /b/$1#top [R]', '/a/x%20y', 'redirect 302 http://example.com/b/x%20y%23top'];
        yield 'NE does not escape' => ['RewriteRule ^a/(.*)$ /b/$1#top [R,NE]', '/a/xy', 'redirect 302 http://example.com/b/xy#top'];
        yield 'redirect to another host' => ['RewriteRule ^(.*)$ https://www.example.org/$1 [R=301,L]', '/p?q', 'redirect 301 https://www.example.org/p?q'];
        yield 'absolute URL to another host redirects without R' => ['RewriteRule ^(.*)$ http://other.test/$1', '/p', 'redirect 302 http://other.test/p'];
        yield 'absolute URL to this host is internal' => ['RewriteRule ^a$ http://example.com/app.php', '/a', 'serve /app.php'];
        yield 'dash with R does not redirect, as Apache' => ["RewriteCond %{HTTPS} off\nRewriteRule ^ - [R=301]", '/x?y', 'serve /x?y'];
        yield 'back-references from the condition' => ["RewriteCond %{HTTP_HOST} ^(example)\.com$\nRewriteRule ^(.*)$ http://%1.org/$1 [R=301,L]", '/p', 'redirect 301 http://example.org/p'];
        yield 'regex condition not matching' => ["RewriteCond %{QUERY_STRING} ^id=(\d+)$\nRewriteRule ^item$ app.php?item=%1 [L]", '/item?id=x', 'serve /item?id=x'];
        yield 'regex condition matching' => ["RewriteCond %{QUERY_STRING} ^id=(\d+)$\nRewriteRule ^item$ app.php?item=%1 [L]", '/item?id=42', 'serve /app.php?item=42'];
        yield 'negated condition' => ["RewriteCond %{REQUEST_METHOD} !^GET$\nRewriteRule ^ - [F]", '/x', 'serve /x'];
        yield 'string equality' => ["RewriteCond %{REQUEST_URI} =/exact\nRewriteRule ^ app.php [L]", '/exact', 'serve /app.php'];
        yield 'string equality NC' => ["RewriteCond %{REQUEST_URI} =/EXACT [NC]\nRewriteRule ^ app.php [L]", '/exact', 'serve /app.php'];
        yield 'equality with empty' => ["RewriteCond %{QUERY_STRING} =\"\"\nRewriteRule ^a$ app.php [L]", '/a', 'serve /app.php'];
        yield 'OR takes either' => ["RewriteCond %{QUERY_STRING} a [OR]\nRewriteCond %{QUERY_STRING} b\nRewriteRule ^x$ app.php [L]", '/x?b', 'serve /app.php?b'];
        yield 'OR fails when neither' => ["RewriteCond %{QUERY_STRING} a [OR]\nRewriteCond %{QUERY_STRING} b\nRewriteRule ^x$ app.php [L]", '/x?c', 'serve /x?c'];
        yield 'OR then AND' => ["RewriteCond %{QUERY_STRING} a [OR]\nRewriteCond %{QUERY_STRING} b\nRewriteCond %{REQUEST_METHOD} POST\nRewriteRule ^x$ app.php [L]", '/x?a', 'serve /x?a'];
        yield '-f on an existing file' => ["RewriteCond %{REQUEST_FILENAME} -f\nRewriteRule ^ - [F]", '/app.php', 'refuse 403'];
        yield '-d on a directory' => ["RewriteCond %{REQUEST_FILENAME} -d\nRewriteRule ^ - [F]", '/sub/', 'refuse 403'];
        yield '-s on an empty file' => ["RewriteCond %{REQUEST_FILENAME} -s\nRewriteRule ^ - [F]", '/empty.txt', 'serve /empty.txt'];
        yield '-s on a file with bytes' => ["RewriteCond %{REQUEST_FILENAME} -s\nRewriteRule ^ - [F]", '/app.php', 'refuse 403'];
        yield '-l on a plain file' => ["RewriteCond %{REQUEST_FILENAME} -l\nRewriteRule ^ - [F]", '/app.php', 'serve /app.php'];
        yield 'REQUEST_FILENAME stops at the script (path info)' => ["RewriteCond %{REQUEST_FILENAME} !-f\nRewriteRule ^ app.php [L]", '/index.php/a/b', 'serve /index.php/a/b'];
        yield 'HTTP: header' => ["RewriteCond %{HTTP:X-Forwarded-Proto} ^https$\nRewriteRule ^ - [F]", '/x', 'serve /x'];
        yield 'THE_REQUEST' => ["RewriteCond %{THE_REQUEST} \\s/+index\\.php[?\\s]\nRewriteRule ^index\\.php$ / [R=301,L]", '/index.php', 'redirect 301 http://example.com/'];
        yield 'integer comparison' => ["RewriteCond %{SERVER_PORT} -eq80\nRewriteRule ^ - [F]", '/x', 'refuse 403'];
        yield '-ipmatch' => ["RewriteCond %{REMOTE_ADDR} \"-ipmatch 192.0.2.0/24\"\nRewriteRule ^ - [F]", '/x', 'refuse 403'];
        yield 'L stops the round' => ["RewriteRule ^a$ app.php [L]\nRewriteRule ^a$ - [F]", '/a', 'serve /app.php'];
        yield 'L ends the round, not the next one' => ["RewriteRule ^a$ app.php [L]\nRewriteRule ^app\.php$ - [F]", '/a', 'refuse 403'];
        yield 'a rewrite runs the rules again' => ["RewriteRule ^a$ b\nRewriteRule ^b$ app.php [L]", '/a', 'serve /app.php'];
        yield 'END stops the next round' => ["RewriteRule ^app\.php$ - [F]\nRewriteRule ^a$ app.php [END]", '/a', 'serve /app.php'];
        yield 'without END the next round applies' => ["RewriteRule ^app\.php$ - [F]\nRewriteRule ^a$ app.php [L]", '/a', 'refuse 403'];
        yield 'C skips the chain when it fails' => ["RewriteRule ^x$ app.php [C]\nRewriteRule ^app\.php$ - [F]\nRewriteRule ^y$ index.php [L]", '/y', 'serve /index.php'];
        yield 'C goes on when it matches' => ["RewriteRule ^x$ app.php [C]\nRewriteRule ^app\.php$ - [F]", '/x', 'refuse 403'];
        yield 'S skips rules' => ["RewriteRule ^x$ - [S=1]\nRewriteRule ^x$ - [F]\nRewriteRule ^x$ app.php [L]", '/x', 'serve /app.php'];
        yield 'B escapes back-references' => ['RewriteRule ^s/(.*)$ app.php?q=$1 [B,L]', '/s/a%26b', 'serve /app.php?q=a%26b'];
        yield 'without B back-references are decoded' => ['RewriteRule ^s/(.*)$ app.php?q=$1 [L]', '/s/a%26b', 'serve /app.php?q=a&b'];
        yield 'a loop ends in 500' => ['RewriteRule ^(.*)$ x$1', '/a', 'refuse 500'];
        yield 'escaped dollar is literal' => ['RewriteRule ^a$ app.php?p=\$1 [L]', '/a', 'serve /app.php?p=$1'];
        yield 'rewritten path is re-encoded' => ['RewriteRule ^a$ "new/page one.html" [L]', '/a', 'serve /new/page%20one.html'];
        yield 'rewrite above the root is refused' => ['RewriteRule ^a$ ../../etc/passwd [L]', '/a', 'refuse 400'];
        yield 'engine off does nothing' => ["RewriteEngine Off\nRewriteRule ^ - [F]", '/x', 'serve /x'];
    }

    #[DataProvider('rules')]
    public function testRule(string $rules, string $target, string $expected): void
    {
        $site = Fixtures::rules(self::FILES + ['.htaccess' => "RewriteEngine On\n$rules\n"]);
        self::assertSame($expected, Fixtures::describe($site->forRequest(Fixtures::request($target))));
        self::assertSame([], array_map('strval', $site->takeWarnings()));
    }

    public function testEnvFlagSetsAndUnsetsVariablesForTheScript(): void
    {
        $site = Fixtures::rules(self::FILES + ['.htaccess' => "RewriteEngine On\nRewriteRule ^ - [E=A:1,E=B:%{REQUEST_METHOD},E=C:x]\nRewriteRule ^ - [E=!C]\nRewriteCond %{ENV:A} =1\nRewriteRule ^a$ app.php [L]\n"]);
        $outcome = $site->forRequest(Fixtures::request('/a', 'PUT'));
        self::assertSame('serve /app.php', Fixtures::describe($outcome));
        self::assertSame('1', $outcome->env['A']);
        self::assertSame('PUT', $outcome->env['B']);
        self::assertArrayNotHasKey('C', $outcome->env);
        self::assertSame('1', $outcome->env['REDIRECT_A']);
    }

    public function testTypeFlagIsReported(): void
    {
        $site = Fixtures::rules(self::FILES + ['.htaccess' => "RewriteEngine On\nRewriteRule \\.dat$ - [T=application/json]\n"]);
        self::assertSame('application/json', $site->forRequest(Fixtures::request('/x.dat'))->type);
    }

    public function testTheClosestFileWithRewriteDirectivesWins(): void
    {
        $site = Fixtures::rules(self::FILES + [
            '.htaccess' => "RewriteEngine On\nRewriteRule ^sub/x$ app.php [L]\nRewriteRule ^y$ app.php [L]\n",
            'sub/.htaccess' => "RewriteEngine On\nRewriteRule ^z$ index.php [L]\n",
            'plain/.htaccess' => "SetEnv PLAIN 1\n",
            'plain/f.txt' => 'x',
        ]);
        self::assertSame('serve /sub/x', Fixtures::describe($site->forRequest(Fixtures::request('/sub/x'))), 'parent rules do not run in sub/');
        self::assertSame('serve /sub/index.php', Fixtures::describe($site->forRequest(Fixtures::request('/sub/z'))), 'relative to sub/');
        self::assertSame('serve /app.php', Fixtures::describe($site->forRequest(Fixtures::request('/y'))));
    }

    public function testAFileWithoutRewriteDirectivesKeepsTheParentRulesAndPrefix(): void
    {
        $site = Fixtures::rules(self::FILES + ['.htaccess' => "RewriteEngine On\nRewriteRule ^plain/(.*)$ app.php?f=$1 [L]\n", 'plain/.htaccess' => "SetEnv PLAIN 1\n", 'plain/f.txt' => 'x']);
        self::assertSame('serve /app.php?f=other', Fixtures::describe($site->forRequest(Fixtures::request('/plain/other'))));
    }

    public function testRewriteOptionsInheritRunsTheParentRulesAfterTheChildRules(): void
    {
        $site = Fixtures::rules(self::FILES + [
            '.htaccess' => "RewriteEngine On\nRewriteRule ^(.*)$ - [E=PARENT:$1]\n",
            'sub/.htaccess' => "RewriteOptions Inherit\nRewriteRule ^(.*)$ - [E=CHILD:$1]\n",
        ]);
        $outcome = $site->forRequest(Fixtures::request('/sub/q'));
        self::assertSame('q', $outcome->env['CHILD']);
        self::assertSame('q', $outcome->env['PARENT'], 'inherited rules match against the child directory');
    }

    public function testAChildDirectoryDoesNotTakeItsParentsRewriteBase(): void
    {
        $files = self::FILES + [
            '.htaccess' => "RewriteEngine On\nRewriteBase /\nRewriteRule ^y$ app.php [L]\n",
            'sub/.htaccess' => "RewriteEngine On\nRewriteRule ^x/(.*)$ index.php/$1 [L]\n",
        ];
        $site = Fixtures::rules($files);
        self::assertSame('serve /sub/index.php/a', Fixtures::describe($site->forRequest(Fixtures::request('/sub/x/a'))), 'relative to sub/, as Apache 2.4');
        self::assertSame('serve /app.php', Fixtures::describe($site->forRequest(Fixtures::request('/y'))));
        $files['.htaccess'] = "RewriteEngine On\nRewriteOptions MergeBase\nRewriteBase /\n";
        $merged = Fixtures::rules($files);
        self::assertSame('serve /index.php/a', Fixtures::describe($merged->forRequest(Fixtures::request('/sub/x/a'))), 'RewriteOptions MergeBase');
        $files['sub/.htaccess'] = "RewriteEngine On\nRewriteOptions MergeBase\nRewriteRule ^x/(.*)$ index.php/$1 [L]\n";
        $files['.htaccess'] = "RewriteEngine On\nRewriteBase /\n";
        $inChild = Fixtures::rules($files);
        self::assertSame('serve /sub/index.php/a', Fixtures::describe($inChild->forRequest(Fixtures::request('/sub/x/a'))), 'MergeBase is read in the parent');
    }

    public function testRoundsAreBoundedByMaxRounds(): void
    {
        $fs = new FakeFilesystem(['/srv/www/.htaccess' => "RewriteEngine On\nRewriteRule ^a(\\d)$ a$1x\nRewriteRule ^a(\\d)(x+)$ a$1$2x\n"]);
        $rules = new \Kiln\Site\Htaccess\HtaccessRules('/srv/www', $fs, maxRounds: 2);
        self::assertSame('refuse 500', Fixtures::describe($rules->forRequest(Fixtures::request('/a1'))));
    }
}

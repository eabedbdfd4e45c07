<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\ConfigBuilder;
use Kiln\Site\Htaccess\Parser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** What Kiln does not apply is reported with file, line and directive; nothing throws. */
final class ConfigBuilderTest extends TestCase
{
    /** @return iterable<string, array{string, list<string>}> */
    public static function unsupported(): iterable
    {
        yield 'unknown directive' => ['AddHandler application/x-httpd-php81 .php', ['1: AddHandler: directive not supported; ignored']];
        yield 'mod_alias outside IfModule' => ["SetEnv A 1\nRedirect 301 /old /new", ['2: Redirect: directive not supported; ignored']];
        yield 'RewriteMap' => ['RewriteMap m txt:/x', ['1: RewriteMap: directive not supported; ignored']];
        yield 'bad RewriteRule regex' => ["RewriteEngine On\nRewriteRule ^(a b [L]", ["2: RewriteRule: bad regular expression '^(a': missing closing parenthesis at offset 3; ignored"]];
        yield 'RewriteRule with too many arguments' => ['RewriteRule a b [L] extra', ['1: RewriteRule: takes a pattern, a substitution and optional [flags]; ignored']];
        yield 'RewriteRule with bad flags' => ['RewriteRule a b L', ["1: RewriteRule: flags must be written [A,B], got 'L'; ignored"]];
        yield 'unknown rule flag' => ['RewriteRule a b [L,CO=x:y:example.com]', ["1: RewriteRule: flag 'CO=x:y:example.com' is not supported; ignored"]];
        yield 'proxy flag skips the rule' => ['RewriteRule a http://b/ [P]', ['1: RewriteRule: the proxy flag [P] is not supported; rule skipped; ignored']];
        yield 'bad R status' => ['RewriteRule a b [R=200]', ['1: RewriteRule: [R=200] needs a 3xx, 4xx or 5xx status; ignored']];
        yield 'bad RewriteCond regex' => ["RewriteCond %{HTTP_HOST} (\nRewriteRule a b", ["1: RewriteCond: bad regular expression '(': missing closing parenthesis at offset 1; the rule it belongs to is skipped"]];
        yield 'unknown cond flag' => ["RewriteCond %{HTTP_HOST} x [XYZ]\nRewriteRule a b", ["1: RewriteCond: unknown RewriteCond flag 'XYZ'; the rule it belongs to is skipped"]];
        yield 'expr condition' => ["RewriteCond expr \"-R '10.0.0.0/8'\"\nRewriteRule a b", ['1: RewriteCond: expression conditions (expr) are not supported; the rule it belongs to is skipped']];
        yield 'unknown variable' => ["RewriteCond %{TIME_HOUR} ^0\nRewriteRule a b", ['1: RewriteCond: variable %{TIME_HOUR} is not supported; it reads as empty']];
        yield 'dangling RewriteCond' => ['RewriteCond %{HTTPS} off', ['1: RewriteCond: RewriteCond with no RewriteRule after it; ignored']];
        yield 'RewriteEngine junk' => ['RewriteEngine maybe', ['1: RewriteEngine: needs on or off; ignored']];
        yield 'relative RewriteBase' => ['RewriteBase blog', ['1: RewriteBase: needs one URL path starting with /; ignored']];
        yield 'RewriteOptions unknown' => ['RewriteOptions AllowNoSlash', ["1: RewriteOptions: option 'AllowNoSlash' is not supported; ignored"]];
        yield 'rewrite in Files' => ["<Files x>\nRewriteRule a b\n</Files>", ['2: RewriteRule: rewrite directives inside <Files> are not supported; ignored']];
        yield 'Satisfy Any' => ['Satisfy Any', ['1: Satisfy: only Satisfy All (the default) is supported; ignored']];
        yield 'bad Order' => ['Order allow', ["1: Order: order must be allow,deny, deny,allow or mutual-failure, got 'allow'; ignored"]];
        yield 'Allow without from' => ['Allow all', ['1: Allow: must be written Allow from HOST…; ignored']];
        yield 'host name in Deny' => ['Deny from .example.com', ["1: Deny: host name '.example.com' is never looked up: it matches no client"]];
        yield 'Require valid-user' => ['Require valid-user', ["1: Require: 'Require valid-user' is not supported (no authentication, no DNS, no expressions): it never grants access"]];
        yield 'Require ip junk' => ['Require ip 10.0.0.1 nope', ["1: Require: 'nope' is not an address or range; it matches no client"]];
        yield 'Header edit' => ['Header edit Set-Cookie ^(.*)$ $1;HttpOnly', ["1: Header: action 'edit' is not supported (only set, append, add, merge, setifempty, unset); ignored"]];
        yield 'Header without value' => ['Header set X-A', ["1: Header: 'set' needs a value; ignored"]];
        yield 'Header expr' => ['Header set X-A 1 "expr=%{HTTPS} == \'on\'"', ["1: Header: only an env=[!]VAR condition may follow, got 'expr=%{HTTPS} == 'on''; ignored"]];
        yield 'bad expiry' => ['ExpiresByType text/html "access plus lots"', ["1: ExpiresByType: expiry must be '<base> plus <number> <unit> …', got 'access plus lots'; ignored"]];
        yield 'bad expiry unit' => ['ExpiresDefault "access plus 1 fortnight"', ["1: ExpiresDefault: expiry has a bad amount '1 fortnight' in 'access plus 1 fortnight'; ignored"]];
        yield 'ExpiresActive junk' => ['ExpiresActive sometimes', ["1: ExpiresActive: needs on or off, got 'sometimes'; ignored"]];
        yield 'ErrorDocument 200' => ['ErrorDocument 200 /x', ["1: ErrorDocument: needs a 4xx or 5xx status, got '200'; ignored"]];
        yield 'Options +Indexes' => ['Options +Indexes', ['1: Options: Kiln never lists a directory: +Indexes has no effect']];
        yield 'Options ExecCGI' => ['Options +ExecCGI', ["1: Options: option '+ExecCGI' is not supported; ignored"]];
        yield 'php_admin_value' => ['php_admin_value open_basedir /srv', ['1: php_admin_value: Apache refuses php_admin_* in .htaccess; Kiln applies it as php_value']];
        yield 'php_flag junk' => ['php_flag display_errors loud', ["1: php_flag: needs on or off, got 'loud'; ignored"]];
        yield 'AddType of a PHP handler' => ['AddType application/x-httpd-php .html', ["1: AddType: 'application/x-httpd-php' names a PHP handler, not a type: Kiln runs only its script extensions as PHP and never sends such a type; ignored"]];
        yield 'SetEnvIf (mod_setenvif is not loaded)' => ['SetEnvIf Authorization "(.*)" HTTP_AUTHORIZATION=$1', ['1: SetEnvIf: directive not supported; ignored']];
        yield 'SetEnv without name' => ['SetEnv', ['1: SetEnv: takes 1 to 2 arguments, got 0; ignored']];
    }

    /** @param list<string> $warnings */
    #[DataProvider('unsupported')]
    public function testUnsupportedInputIsReported(string $text, array $warnings): void
    {
        $config = ConfigBuilder::build(Parser::parse($text, '/srv/www/.htaccess'), '/');
        self::assertSame($warnings, array_map(static fn($w): string => substr((string) $w, \strlen('/srv/www/.htaccess:')), $config->warnings));
    }

    public function testAFileWithoutRewriteDirectivesHasNoRewriteSet(): void
    {
        self::assertNull(ConfigBuilder::build(Parser::parse('SetEnv A 1', 'f'), '/')->rewrite);
        self::assertNotNull(ConfigBuilder::build(Parser::parse('RewriteEngine Off', 'f'), '/')->rewrite);
    }

    public function testABrokenConditionKeepsItsRuleFromMatching(): void
    {
        $site = Fixtures::rules(['.htaccess' => "RewriteEngine On\nRewriteCond %{HTTP_HOST} (\nRewriteRule ^ - [F]"]);
        self::assertSame('serve /x', Fixtures::describe($site->forRequest(Fixtures::request('/x'))));
        self::assertCount(1, $site->takeWarnings());
    }
}

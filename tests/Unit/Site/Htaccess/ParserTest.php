<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Site\Htaccess\Directive;
use Kiln\Site\Htaccess\Parser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ParserTest extends TestCase
{
    public function testDirectivesKeepTheirFileLineAndArguments(): void
    {
        $parsed = Parser::parse("# a comment\n\n  RewriteEngine On\nHeader set X-Frame-Options \"SAMEORIGIN\"\n", '/srv/.htaccess');
        self::assertSame([], $parsed->warnings);
        self::assertSame([['RewriteEngine', ['On'], 3], ['Header', ['set', 'X-Frame-Options', 'SAMEORIGIN'], 4]], self::lines($parsed->directives));
        self::assertSame('/srv/.htaccess', $parsed->directives[0]->file);
    }

    public function testDirectiveNamesAreCaseInsensitive(): void
    {
        $parsed = Parser::parse("rewriteENGINE on\nREWRITERULE a b\n", 'f');
        self::assertSame(['rewriteengine', 'rewriterule'], array_map(static fn(Directive $d): string => $d->key(), $parsed->directives));
    }

    public function testABackslashAtTheEndOfALineJoinsTheNext(): void
    {
        $parsed = Parser::parse("RewriteRule ^a$ \\\n  /b [L]\nSetEnv X y\n", 'f');
        self::assertSame([['RewriteRule', ['^a$', '/b', '[L]'], 1], ['SetEnv', ['X', 'y'], 3]], self::lines($parsed->directives));
    }

    public function testQuotesGroupWordsAndABackslashEscapesTheQuote(): void
    {
        self::assertSame(['set', 'X', 'a "b" c', "it's", ''], Parser::words('set X "a \"b\" c" \'it\\\'s\' ""'));
        self::assertSame(['^index\.php$', '-', '[L]'], Parser::words('^index\.php$ - [L]'), 'backslashes outside quotes are kept');
    }

    public function testATrailingHashIsAnArgumentNotAComment(): void
    {
        self::assertSame(['Options', ['-Indexes', '#', 'no'], 1], self::lines(Parser::parse('Options -Indexes # no', 'f')->directives)[0]);
    }

    public function testIfModuleKeepsLoadedModulesAndDropsOthers(): void
    {
        $text = <<<'TXT'
            <IfModule mod_rewrite.c>
            RewriteEngine On
            </IfModule>
            <IfModule mod_deflate.c>
            AddOutputFilterByType DEFLATE text/html
            </IfModule>
            <IfModule !mod_authz_core.c>
            Order allow,deny
            </IfModule>
            <IfModule !mod_security2.c>
            SetEnv A 1
            </ifmodule>
            <IfModule headers_module>
            <IfModule php_module>
            php_value memory_limit 64M
            </IfModule>
            <IfModule mod_nope.c>
            <IfModule mod_rewrite.c>
            SetEnv NEVER 1
            </IfModule>
            </IfModule>
            </IfModule>
            <IfModule expires>
            ExpiresActive On
            </IfModule>
            TXT;
        $parsed = Parser::parse($text, 'f');
        self::assertSame([], $parsed->warnings);
        self::assertSame(['RewriteEngine', 'SetEnv', 'php_value', 'ExpiresActive'], array_map(static fn(Directive $d): string => $d->name, $parsed->directives));
    }

    public function testPhpModuleNamesCountAsLoaded(): void
    {
        foreach (['mod_php.c', 'mod_php7.c', 'mod_php8.c', 'php_module', 'php7_module', 'php8_module'] as $module) {
            self::assertCount(1, Parser::parse("<IfModule $module>\nphp_flag display_errors off\n</IfModule>", 'f')->directives, $module);
        }
    }

    public function testFilesSectionsScopeTheirDirectives(): void
    {
        $text = "<Files \"wp-config.php\">\nRequire all denied\n</Files>\n<FilesMatch \"\\.(ini|log)$\">\nDeny from all\n</FilesMatch>\n<Files ~ \"^\\.ht\">\nRequire all denied\n</Files>\nSetEnv OUT 1\n";
        $directives = Parser::parse($text, 'f')->directives;
        self::assertCount(4, $directives);
        self::assertTrue($directives[0]->files[0]->matches('wp-config.php'));
        self::assertFalse($directives[0]->files[0]->matches('index.php'));
        self::assertTrue($directives[1]->files[0]->matches('debug.log'));
        self::assertFalse($directives[1]->files[0]->matches('debug.log.txt'));
        self::assertTrue($directives[2]->files[0]->matches('.htpasswd'));
        self::assertSame([], $directives[3]->files);
    }

    public function testFilesWildcardsMatchLikeFnmatch(): void
    {
        $directives = Parser::parse("<Files *.php>\nDeny from all\n</Files>", 'f')->directives;
        self::assertTrue($directives[0]->files[0]->matches('shell.php'));
        self::assertFalse($directives[0]->files[0]->matches('shell.php.txt'));
    }

    public function testLimitAndRequireBlocksAreRecorded(): void
    {
        $text = "<LimitExcept GET POST>\nDeny from all\n</LimitExcept>\n<RequireAll>\nRequire all granted\n<RequireNone>\nRequire ip 10.0.0.1\n</RequireNone>\n</RequireAll>\n";
        $directives = Parser::parse($text, 'f')->directives;
        self::assertSame(['GET', 'POST'], $directives[0]->methods);
        self::assertTrue($directives[0]->exceptMethods);
        self::assertSame(['all#4'], $directives[1]->requireBlocks);
        self::assertSame(['all#4', 'none#6'], $directives[2]->requireBlocks);
    }

    /**
     * Odd or broken input: never an exception, always a warning with the line, and what is applied.
     *
     * @return iterable<string, array{string, list<string>, list<string>}>
     */
    public static function oddInputs(): iterable
    {
        yield 'unterminated section' => ["<Files x>\nDeny from all\n", ['1: <files>: is never closed; taken to end at the end of the file'], ['Deny']];
        yield 'stray closing tag' => ["</IfModule>\nSetEnv A 1\n", ['1: </ifmodule>: closes a section that was never opened; ignored'], ['SetEnv']];
        yield 'mismatched closing tag' => ["<IfModule mod_rewrite.c>\nSetEnv A 1\n</Files>\nSetEnv B 1\n", ['3: </files>: does not match <ifmodule> opened on line 1; taken as its end'], ['SetEnv', 'SetEnv']];
        yield 'unsupported section skipped' => ["<If \"%{HTTPS} == 'on'\">\nHeader set A b\n</If>\nSetEnv B 1\n", ['1: <If>: section not supported; its contents are ignored'], ['SetEnv']];
        yield 'section without >' => ["<Files x\nDeny from all\n</Files>\n", ["1: <Files: section opening has no closing '>'; its contents are ignored"], []];
        yield 'section without argument' => ["<IfModule>\nSetEnv A 1\n</IfModule>\n", ['1: <IfModule>: section needs an argument; its contents are ignored'], []];
        yield 'bad FilesMatch regex' => ["<FilesMatch \"(\">\nDeny from all\n</FilesMatch>\n", ["1: <FilesMatch>: bad regular expression '(': missing closing parenthesis at offset 1; its contents are ignored"], []];
        yield 'Files ~ without a regex' => ["<Files ~>\nDeny from all\n</Files>\n", ['1: <Files>: needs a regex after ~; its contents are ignored'], []];
        yield 'nested Files' => ["<Files a>\n<Files b>\nDeny from all\n</Files>\n</Files>\n", ['2: <Files>: nested in another files section (Apache refuses this); both must match'], ['Deny']];
        yield 'unsupported section inside a false IfModule is silent' => ["<IfModule mod_nope.c>\n<If x>\n</If>\n</IfModule>\n", [], []];
        yield 'backslash on the last line' => ["SetEnv A 1\\", [], ['SetEnv']];
        yield 'CRLF line ends' => ["SetEnv A 1\r\n<IfModule mod_env.c>\r\nSetEnv B 2\r\n</IfModule>\r\n", [], ['SetEnv', 'SetEnv']];
        yield 'binary junk' => ["\x00\xff<\n>\n<>\n", ['3: <>: section not supported; its contents are ignored', '3: <>: is never closed; taken to end at the end of the file'], ["\xff<", '>']];
    }

    /**
     * @param list<string> $warnings
     * @param list<string> $names
     */
    #[DataProvider('oddInputs')]
    public function testOddInputIsReportedNotFatal(string $text, array $warnings, array $names): void
    {
        $parsed = Parser::parse($text, 'f');
        self::assertSame($warnings, array_map(static fn($w): string => substr((string) $w, 2), $parsed->warnings));
        self::assertSame($names, array_map(static fn(Directive $d): string => $d->name, $parsed->directives));
    }

    /**
     * @param list<Directive> $directives
     * @return list<array{string, list<string>, int}>
     */
    private static function lines(array $directives): array
    {
        return array_map(static fn(Directive $d): array => [$d->name, $d->args, $d->line], $directives);
    }
}
